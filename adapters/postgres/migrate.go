package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgerrcode"
	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	pgmigrations "github.com/heraldfed/herald/migrations/postgres"
)

// migrationsTable is golang-migrate's version table, in the pool's schema
// (the first of its search_path).
const migrationsTable = "schema_migrations"

// defaultLockWait bounds the wait for another process's migration when ctx
// has no deadline: long enough for a big 001 or 004, short enough that a
// lock left by a hung process is reported rather than waited on forever.
const defaultLockWait = 15 * time.Minute

// MigrateUp applies every migration not yet applied. golang-migrate's pgx
// driver holds a PostgreSQL advisory lock (keyed by database, schema and
// version table) for the run, so when several processes start at once one
// migrates and the others wait, then find nothing left to do.
//
// Cancelling ctx stops after the migration in progress (each one is a
// transaction, so none is left half done); it cannot interrupt the wait for
// the lock itself, which ends at ctx's deadline (or after 15 minutes).
func MigrateUp(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	err := runMigrate(ctx, pool, log, func(m *migrate.Migrate) error { return m.Up() })
	if err != nil {
		return err
	}
	reportLeftovers(ctx, pool, log)
	return nil
}

// MigrateDown reverts the last steps migrations (steps >= 1); asking for
// more steps than are applied stops at version 0. It is an operator's tool
// for a rollback; read each down step's comment first (migrations/postgres).
func MigrateDown(ctx context.Context, pool *pgxpool.Pool, steps int, log *slog.Logger) error {
	if steps < 1 {
		return errors.New("postgres: migrate down needs steps >= 1")
	}
	return runMigrate(ctx, pool, log, func(m *migrate.Migrate) error {
		err := m.Steps(-steps)
		var short migrate.ErrShortLimit
		if errors.As(err, &short) {
			return nil // fewer were applied than asked for: we are at 0
		}
		return err
	})
}

// MigrationVersion reads the applied version: 0 when none is, and dirty
// when a migration failed half way (impossible for ours, which are
// transactions, unless the process died between golang-migrate's bookkeeping
// steps) and needs an operator. It is one cheap query, fit for /readyz.
func MigrationVersion(ctx context.Context, pool *pgxpool.Pool) (version uint, dirty bool, err error) {
	var v int64
	err = pool.QueryRow(ctx, `SELECT version, dirty FROM `+migrationsTable+` LIMIT 1`).Scan(&v, &dirty)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, false, nil
	case errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedTable:
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("postgres: read migration version: %w", interpretError(err))
	case v < 0: // golang-migrate's "no version", left by a failed first migration
		return 0, dirty, nil
	}
	return uint(v), dirty, nil
}

// LatestMigration is the highest version embedded in the binary: MigrateUp
// brings the database there, and /readyz can compare MigrationVersion to it.
func LatestMigration() (uint, error) {
	src, err := iofs.New(pgmigrations.FS, ".")
	if err != nil {
		return 0, fmt.Errorf("postgres: read embedded migrations: %w", err)
	}
	defer src.Close()
	v, err := src.First()
	if err != nil {
		return 0, fmt.Errorf("postgres: no embedded migrations: %w", err)
	}
	for {
		next, err := src.Next(v)
		if errors.Is(err, fs.ErrNotExist) {
			return v, nil
		}
		if err != nil {
			return 0, fmt.Errorf("postgres: read embedded migrations: %w", err)
		}
		v = next
	}
}

func runMigrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, run func(*migrate.Migrate) error) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	src, err := iofs.New(pgmigrations.FS, ".")
	if err != nil {
		return fmt.Errorf("postgres: read embedded migrations: %w", err)
	}
	// A database/sql handle of its own, not one borrowed from the pool: the
	// advisory lock belongs to a session, and closing these connections at
	// the end ends the session, so no lock can outlive the run on a pooled
	// connection.
	db := stdlib.OpenDB(*pool.Config().ConnConfig.Copy())
	drv, err := migratepgx.WithInstance(db, &migratepgx.Config{MigrationsTable: migrationsTable})
	if err != nil {
		_ = db.Close()
		_ = src.Close()
		return fmt.Errorf("postgres: open migration driver: %w", interpretError(err))
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		_ = drv.Close()
		_ = src.Close()
		return fmt.Errorf("postgres: set up migrations: %w", err)
	}
	defer func() {
		if srcErr, dbErr := m.Close(); srcErr != nil || dbErr != nil {
			log.Warn("closing the migration connection failed", "err", errors.Join(srcErr, dbErr))
		}
	}()
	m.Log = migrateLogger{log: log}
	m.LockTimeout = defaultLockWait
	if deadline, ok := ctx.Deadline(); ok {
		m.LockTimeout = time.Until(deadline)
	}
	stop := context.AfterFunc(ctx, func() { m.GracefulStop <- true })
	defer stop()

	from, _, _ := MigrationVersion(ctx, pool)
	start := time.Now()
	err = run(m)
	if errors.Is(err, migrate.ErrNoChange) {
		v, _, _ := MigrationVersion(ctx, pool)
		log.Debug("postgres schema is current", "version", v)
		return nil
	}
	if err != nil {
		v, dirty, _ := MigrationVersion(ctx, pool)
		if dirty {
			// Each file is one transaction (TestMigrationFiles holds them
			// to it), so version v was rolled back whole; golang-migrate
			// still marks it dirty and refuses to go on by itself.
			clean := fmt.Sprintf("migrate force %d, or UPDATE %s SET version = %d, dirty = false", v-1, migrationsTable, v-1)
			if v <= 1 {
				clean = fmt.Sprintf("migrate force -1, or DELETE FROM %s", migrationsTable)
			}
			return fmt.Errorf("postgres: migration %d failed and was rolled back, but is marked dirty: fix the cause, "+
				"then mark the version before it clean (%s) and start again: %w", v, clean, interpretError(err))
		}
		return fmt.Errorf("postgres: migrate: %w", interpretError(err))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: migrations interrupted: %w", err)
	}
	to, _, _ := MigrationVersion(ctx, pool)
	log.Info("postgres schema migrated", "from_version", from, "to_version", to, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// reportLeftovers logs the legacy deliveries 004 could not move (see its
// comment): they wait, untouched, for an operator.
func reportLeftovers(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE state = 'pending'`).Scan(&n)
	if err != nil {
		log.Warn("could not count legacy deliveries left pending", "err", interpretError(err))
		return
	}
	if n > 0 {
		log.Warn("legacy deliveries left pending: not valid jobs (bad activity JSON, inbox or sender); nothing will send them",
			"count", n, "table", "deliveries")
	}
}

// migrateLogger hands golang-migrate's printf lines to slog.
type migrateLogger struct{ log *slog.Logger }

func (l migrateLogger) Printf(format string, v ...any) {
	l.log.Info("postgres migration step", "step", strings.TrimSpace(fmt.Sprintf(format, v...)))
}

func (l migrateLogger) Verbose() bool { return false }
