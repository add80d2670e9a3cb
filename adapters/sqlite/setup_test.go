package sqlite_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/heraldfed/herald/adapters/internal/storetest"
	"github.com/heraldfed/herald/adapters/sqlite"
)

// testCtx and testLog are the test's context and log, as every SQL store's
// tests have them (storetest).
func testCtx(t testing.TB) context.Context { return storetest.Context(t) }
func testLog(t testing.TB) *slog.Logger    { return storetest.Logger(t) }

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
	return migratedIn(t, t.TempDir())
}

// migratedIn is migrated on the data directory dir, for a test that goes on
// using the directory itself.
func migratedIn(t testing.TB, dir string) *sqlite.DB {
	t.Helper()
	db := open(t, dir)
	mustMigrate(t, db)
	return db
}

// stopped is a data directory of the test's own as a stopped instance
// leaves it: a migrated database, closed. It returns the directory and the
// closed handle.
func stopped(t testing.TB) (dir string, db *sqlite.DB) {
	t.Helper()
	dir = t.TempDir()
	db, err := sqlite.Open(testCtx(t), dir)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	mustMigrate(t, db)
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return dir, db
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
