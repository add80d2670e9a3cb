package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
)

// postgresKind is PostgreSQL at DATABASE_URL: migrations under
// golang-migrate's advisory lock, and a LISTEN/NOTIFY waker so an enqueue
// in any process wakes every process.
type postgresKind struct{}

func (postgresKind) check(cfg Config) error {
	if cfg.DatabaseURL == "" {
		return fmt.Errorf("HERALD_STORE=%s needs DATABASE_URL", StorePostgres)
	}
	return nil
}

func (postgresKind) open(ctx context.Context, cfg Config, log *slog.Logger, owner bool) (store, error) {
	pool, err := postgres.Connect(ctx, string(cfg.DatabaseURL))
	if err != nil {
		return nil, err
	}
	if owner {
		log.Info("connected")
	}
	return postgresStore{pool: pool, log: log}, nil
}

func (postgresKind) backup(context.Context, Config, string) (BackupResult, error) {
	return BackupResult{}, errors.New("herald backup copies the sqlite store; for PostgreSQL use pg_dump (see docs/operations.md)")
}

type postgresStore struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

func (s postgresStore) close() { s.pool.Close() }

func (s postgresStore) migrateUp(ctx context.Context, log *slog.Logger) error {
	if err := postgres.MigrateUp(ctx, s.pool, log); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if err := postgres.EnsureIndexes(ctx, s.pool); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	return nil
}

func (s postgresStore) migrateDown(ctx context.Context, steps int, log *slog.Logger) error {
	return postgres.MigrateDown(ctx, s.pool, steps, log)
}

func (s postgresStore) version(ctx context.Context) (uint, bool, error) {
	return postgres.MigrationVersion(ctx, s.pool)
}

func (postgresStore) latest() (uint, error) { return postgres.LatestMigration() }

func (s postgresStore) ports() *Stores {
	pool := s.pool
	return withFamilies(&Stores{
		Names:      postgres.NewNameRegistry(pool),
		Instances:  postgres.NewInstanceStore(pool),
		Followers:  postgres.NewFollowerStore(pool),
		FanOuts:    postgres.NewFanOutStore(pool),
		Moderation: postgres.NewModerationStore(pool),
		Reports:    postgres.NewReportStore(pool),
		Blocks:     postgres.NewBlockStore(pool),
		OAuth:      postgres.NewOAuthStore(pool),
		AccountIDs: postgres.NewAccountIDStore(pool),
		Pinger:     postgres.NewPinger(pool),
		Wakes:      postgres.NewWaker(pool, s.log),
		PurgeEvery: time.Hour, // no TTL index: the engine purges

		// The client API's notifications (issue 34).
		Notifications: postgres.NewNotificationStore(pool),
	}, postgres.NewJobStore(pool), postgres.NewAccountStore(pool), postgres.NewContentStore(pool))
}
