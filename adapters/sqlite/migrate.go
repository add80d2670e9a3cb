package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"

	sqlitemigrations "github.com/heraldfed/herald/migrations/sqlite"
)

// migrationsTable is golang-migrate's version table.
const migrationsTable = "schema_migrations"

// MigrateUp applies every migration not yet applied. golang-migrate's
// sqlite driver locks only within its process; what keeps two processes
// from migrating one file at once is the data directory's lock, which Open
// took. Each file runs in one transaction, so a failed step changes
// nothing.
func MigrateUp(ctx context.Context, db *DB, log *slog.Logger) error {
	return runMigrate(ctx, db, log, func(m *migrate.Migrate) error { return m.Up() })
}

// MigrateDown reverts the last steps migrations (steps >= 1); asking for
// more than are applied stops at version 0. An operator's tool: every down
// step of this store drops tables, and their data with them
// (migrations/sqlite); take a `herald backup` first.
func MigrateDown(ctx context.Context, db *DB, steps int, log *slog.Logger) error {
	if steps < 1 {
		return errors.New("sqlite: migrate down needs steps >= 1")
	}
	return runMigrate(ctx, db, log, func(m *migrate.Migrate) error {
		err := m.Steps(-steps)
		var short migrate.ErrShortLimit
		if errors.As(err, &short) {
			return nil // fewer were applied than asked for: we are at 0
		}
		return err
	})
}

// MigrationVersion reads the applied version: 0 when none is, and dirty
// when a migration failed half way (golang-migrate marks the version dirty
// before it runs a file). One cheap read, fit for /readyz.
func MigrationVersion(ctx context.Context, db *DB) (version uint, dirty bool, err error) {
	var v int64
	err = db.r.QueryRowContext(ctx, `SELECT version, dirty FROM `+migrationsTable+` LIMIT 1`).Scan(&v, &dirty)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("sqlite: read migration version: %w", interpretError(err))
	case v < 0: // golang-migrate's "no version", left by a failed first migration
		return 0, dirty, nil
	}
	return uint(v), dirty, nil
}

// LatestMigration is the highest version embedded in the binary.
func LatestMigration() (uint, error) {
	names, err := fs.Glob(sqlitemigrations.FS, "*.up.sql")
	if err != nil || len(names) == 0 {
		return 0, fmt.Errorf("sqlite: no embedded migrations: %v", err)
	}
	var latest uint
	for _, n := range names {
		num, _, _ := strings.Cut(n, "_")
		v, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("sqlite: migration file %s: %w", n, err)
		}
		latest = max(latest, uint(v))
	}
	return latest, nil
}

func runMigrate(ctx context.Context, db *DB, log *slog.Logger, run func(*migrate.Migrate) error) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if db.lock == nil {
		return errors.New("sqlite: migrations need the data directory's lock (sqlite.Open, not OpenShared)")
	}
	src, err := iofs.New(sqlitemigrations.FS, ".")
	if err != nil {
		return fmt.Errorf("sqlite: read embedded migrations: %w", err)
	}
	if err := registerFunctions(); err != nil {
		_ = src.Close()
		return fmt.Errorf("sqlite: register migration functions: %w", err)
	}
	// A handle of its own on the same file, with the writer's settings:
	// golang-migrate closes the handle it is given when it is done.
	mdb, err := sql.Open("sqlite", dsn(db.path, writerParams(false)))
	if err != nil {
		_ = src.Close()
		return fmt.Errorf("sqlite: open migration connection: %w", err)
	}
	mdb.SetMaxOpenConns(1)
	drv, err := migratesqlite.WithInstance(mdb, &migratesqlite.Config{MigrationsTable: migrationsTable})
	if err != nil {
		_ = mdb.Close()
		_ = src.Close()
		return fmt.Errorf("sqlite: open migration driver: %w", interpretError(err))
	}
	m, err := migrate.NewWithInstance("iofs", src, "sqlite", drv)
	if err != nil {
		_ = drv.Close()
		_ = src.Close()
		return fmt.Errorf("sqlite: set up migrations: %w", err)
	}
	defer func() {
		if srcErr, dbErr := m.Close(); srcErr != nil || dbErr != nil {
			log.Warn("closing the migration connection failed", "err", errors.Join(srcErr, dbErr))
		}
	}()
	m.Log = migrateLogger{log: log}
	stop := context.AfterFunc(ctx, func() { m.GracefulStop <- true })
	defer stop()

	from, _, _ := MigrationVersion(ctx, db)
	start := time.Now()
	err = run(m)
	if errors.Is(err, migrate.ErrNoChange) {
		log.Debug("sqlite schema is current", "version", from)
		return nil
	}
	if err != nil {
		v, dirty, _ := MigrationVersion(ctx, db)
		if dirty {
			return fmt.Errorf("sqlite: migration %d failed and was rolled back, but is marked dirty: fix the cause, "+
				"then mark the version before it clean (UPDATE %s SET version = %d, dirty = 0; or DELETE FROM %s if it was 1) "+
				"and start again: %w", v, migrationsTable, int(v)-1, migrationsTable, interpretError(err))
		}
		return fmt.Errorf("sqlite: migrate: %w", interpretError(err))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: migrations interrupted: %w", err)
	}
	to, _, _ := MigrationVersion(ctx, db)
	log.Info("sqlite schema migrated", "from_version", from, "to_version", to, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// migrateLogger hands golang-migrate's printf lines to slog.
type migrateLogger struct{ log *slog.Logger }

func (l migrateLogger) Printf(format string, v ...any) {
	l.log.Info("sqlite migration step", "step", strings.TrimSpace(fmt.Sprintf(format, v...)))
}

func (l migrateLogger) Verbose() bool { return false }
