package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
)

// sqliteKind is the default store: one file in HERALD_DATA_DIR. A server
// (or a migration) opens the directory as its owner, creating it and the
// database on first start and taking its lock, so a second server on the
// same directory is refused; a maintenance command opens it beside the
// server, as extra connections, never creating it. There is no
// cross-process waker: one process owns the directory, and its engine is
// woken in process.
type sqliteKind struct{}

func (sqliteKind) check(cfg Config) error {
	if strings.TrimSpace(cfg.DataDir) == "" {
		return fmt.Errorf("HERALD_STORE=%s needs HERALD_DATA_DIR", StoreSQLite)
	}
	return nil
}

func (sqliteKind) open(ctx context.Context, cfg Config, log *slog.Logger, owner bool) (store, error) {
	open := sqlite.OpenShared
	if owner {
		open = sqlite.Open
	}
	db, err := open(ctx, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("HERALD_DATA_DIR=%s: %w", cfg.DataDir, err)
	}
	if owner {
		log.Info("data is kept in this file", "path", db.Path())
	}
	return sqliteStore{db: db, log: log}, nil
}

func (sqliteKind) backup(ctx context.Context, cfg Config, dest string) (BackupResult, error) {
	res, err := sqlite.Backup(ctx, cfg.DataDir, dest)
	if err != nil {
		return BackupResult{}, fmt.Errorf("HERALD_DATA_DIR=%s: %w", cfg.DataDir, err)
	}
	return BackupResult{Path: res.Path, Bytes: res.Bytes}, nil
}

type sqliteStore struct {
	db  *sqlite.DB
	log *slog.Logger
}

func (s sqliteStore) close() {
	if err := s.db.Close(); err != nil {
		s.log.Warn("closing the database failed", "err", err)
	}
}

func (s sqliteStore) migrateUp(ctx context.Context, log *slog.Logger) error {
	if err := sqlite.MigrateUp(ctx, s.db, log); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if err := sqlite.EnsureIndexes(ctx, s.db); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	return nil
}

func (s sqliteStore) migrateDown(ctx context.Context, steps int, log *slog.Logger) error {
	return sqlite.MigrateDown(ctx, s.db, steps, log)
}

func (s sqliteStore) version(ctx context.Context) (uint, bool, error) {
	return sqlite.MigrationVersion(ctx, s.db)
}

func (sqliteStore) latest() (uint, error) { return sqlite.LatestMigration() }

func (s sqliteStore) ports() *Stores {
	db := s.db
	return withFamilies(&Stores{
		Names:      sqlite.NewNameRegistry(db),
		Instances:  sqlite.NewInstanceStore(db),
		Followers:  sqlite.NewFollowerStore(db),
		FanOuts:    sqlite.NewFanOutStore(db),
		Moderation: sqlite.NewModerationStore(db),
		Reports:    sqlite.NewReportStore(db),
		Blocks:     sqlite.NewBlockStore(db),
		OAuth:      sqlite.NewOAuthStore(db),
		AccountIDs: sqlite.NewAccountIDStore(db),
		Pinger:     sqlite.NewPinger(db),
		PurgeEvery: time.Hour, // no TTL index: the engine purges

		// The client API's notifications (issue 34).
		Notifications: sqlite.NewNotificationStore(db),
	}, sqlite.NewJobStore(db), sqlite.NewAccountStore(db), sqlite.NewContentStore(db))
}
