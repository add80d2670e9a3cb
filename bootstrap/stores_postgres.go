package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/adapters/postgres"
)

// openPostgres follows SPEC §4 on PostgreSQL: connect, migrate (under
// golang-migrate's advisory lock), ensure indexes; then the stores, and a
// LISTEN/NOTIFY waker so an enqueue in any process wakes every process.
func openPostgres(ctx context.Context, cfg Config, log *slog.Logger) (*Stores, func(), error) {
	pool, err := postgres.Connect(ctx, string(cfg.DatabaseURL))
	if err != nil {
		return nil, nil, err
	}
	log = log.With("store", StorePostgres)
	log.Info("connected")
	if err := postgres.MigrateUp(ctx, pool, log); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	if err := postgres.EnsureIndexes(ctx, pool); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("indexes: %w", err)
	}
	latest, err := postgres.LatestMigration()
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	log.Info("schema ready", "version", latest)
	jobs := postgres.NewJobStore(pool)
	accounts := postgres.NewAccountStore(pool)
	content := postgres.NewContentStore(pool)
	return &Stores{
		Jobs: jobs, JobAdmin: jobs,
		Names:      postgres.NewNameRegistry(pool),
		Instances:  postgres.NewInstanceStore(pool),
		Followers:  postgres.NewFollowerStore(pool),
		FanOuts:    postgres.NewFanOutStore(pool),
		Users:      accounts,
		Tokens:     accounts,
		Actors:     accounts,
		Foreign:    content,
		Posts:      content,
		Tombstones: content,
		Moderation: postgres.NewModerationStore(pool),
		Reports:    postgres.NewReportStore(pool),
		Blocks:     postgres.NewBlockStore(pool),
		OAuth:      postgres.NewOAuthStore(pool),
		AccountIDs: postgres.NewAccountIDStore(pool),
		Pinger:     postgres.NewPinger(pool),
		Wakes:      postgres.NewWaker(pool, log),
		PurgeEvery: time.Hour, // no TTL index: the engine purges
		Schema: func(ctx context.Context) error {
			v, dirty, err := postgres.MigrationVersion(ctx, pool)
			return schemaState(v, dirty, latest, err)
		},
	}, pool.Close, nil
}

// schemaState turns a migration version into a readiness error.
func schemaState(v uint, dirty bool, latest uint, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("schema version: %w", err)
	case dirty:
		return fmt.Errorf("schema version %d is dirty: a migration failed half way", v)
	case v < latest:
		return fmt.Errorf("schema at version %d, this build needs %d", v, latest)
	}
	return nil
}
