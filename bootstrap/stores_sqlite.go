package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
)

// openSQLite follows SPEC §4 on SQLite: open the data directory (creating
// it and the database on first start, and taking its lock, so a second
// server on the same directory is refused here), migrate, ensure indexes;
// then the stores. There is no cross-process waker: one process owns the
// directory, and its engine is woken in process.
func openSQLite(ctx context.Context, cfg Config, log *slog.Logger) (*Stores, func(), error) {
	db, err := sqlite.Open(ctx, cfg.DataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("HERALD_DATA_DIR=%s: %w", cfg.DataDir, err)
	}
	closeDB := func() {
		if err := db.Close(); err != nil {
			log.Warn("closing the database failed", "err", err)
		}
	}
	log = log.With("store", StoreSQLite)
	log.Info("data is kept in this file", "path", db.Path())
	if err := sqlite.MigrateUp(ctx, db, log); err != nil {
		closeDB()
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	if err := sqlite.EnsureIndexes(ctx, db); err != nil {
		closeDB()
		return nil, nil, fmt.Errorf("indexes: %w", err)
	}
	latest, err := sqlite.LatestMigration()
	if err != nil {
		closeDB()
		return nil, nil, err
	}
	log.Info("schema ready", "version", latest)
	s := sqliteStores(db)
	s.PurgeEvery = time.Hour // no TTL index: the engine purges
	s.Schema = func(ctx context.Context) error {
		v, dirty, err := sqlite.MigrationVersion(ctx, db)
		return schemaState(v, dirty, latest, err)
	}
	return s, closeDB, nil
}

// sqliteStores are every port on db.
func sqliteStores(db *sqlite.DB) *Stores {
	jobs := sqlite.NewJobStore(db)
	accounts := sqlite.NewAccountStore(db)
	content := sqlite.NewContentStore(db)
	return &Stores{
		Jobs: jobs, JobAdmin: jobs,
		Names:      sqlite.NewNameRegistry(db),
		Instances:  sqlite.NewInstanceStore(db),
		Followers:  sqlite.NewFollowerStore(db),
		FanOuts:    sqlite.NewFanOutStore(db),
		Users:      accounts,
		Tokens:     accounts,
		Actors:     accounts,
		Foreign:    content,
		Posts:      content,
		Tombstones: content,
		Moderation: sqlite.NewModerationStore(db),
		Reports:    sqlite.NewReportStore(db),
		Blocks:     sqlite.NewBlockStore(db),
		OAuth:      sqlite.NewOAuthStore(db),
		AccountIDs: sqlite.NewAccountIDStore(db),
		Pinger:     sqlite.NewPinger(db),
	}
}

// openSQLiteForCLI opens the data directory beside a server that may be
// running (no lock, never created, never migrated) for a maintenance
// command, after checking the schema is at this build's version.
func openSQLiteForCLI(ctx context.Context, cfg Config) (*Stores, func(), error) {
	db, err := sqlite.OpenShared(ctx, cfg.DataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("HERALD_DATA_DIR=%s: %w", cfg.DataDir, err)
	}
	v, dirty, err := sqlite.MigrationVersion(ctx, db)
	latest, lerr := sqlite.LatestMigration()
	if err := schemaState(v, dirty, latest, errors.Join(err, lerr)); err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("%w (run `herald migrate up`, or start a server, which migrates)", err)
	}
	return sqliteStores(db), func() { _ = db.Close() }, nil
}
