package sqlite_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
)

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func testLog(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// tWriter sends log lines to t.Log, so they show with the failing test.
type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// open opens a database in a data directory of the test's own, closed when
// the test ends.
func open(t testing.TB, dir string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(testCtx(t), dir)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

// migrated is what bootstrap does before anything runs: open, migrations,
// then indexes, on a fresh file.
func migrated(t testing.TB) *sqlite.DB {
	t.Helper()
	db := open(t, t.TempDir())
	mustMigrate(t, db)
	return db
}

func mustMigrate(t testing.TB, db *sqlite.DB) {
	t.Helper()
	ctx := testCtx(t)
	if err := sqlite.MigrateUp(ctx, db, testLog(t)); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if err := sqlite.EnsureIndexes(ctx, db); err != nil {
		t.Fatalf("ensure indexes: %v", err)
	}
}

func mustExec(t testing.TB, db *sqlite.DB, q string, args ...any) {
	t.Helper()
	if err := sqlite.Exec(testCtx(t), db, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
