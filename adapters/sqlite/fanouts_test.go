package sqlite_test

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
)

// Migration 008 makes fan_outs and its down step drops it, leaving the
// jobs a fan-out enqueued.
func TestMigration008FanOuts(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	f, err := domain.NewFanOut("https://l.example/a/1", "https://l.example/u/alice", "s", "k", []byte(`{"id":"a"}`), 3, "p1", time.Now(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.NewFanOutStore(db).Create(ctx, f); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, run_at, created_at)
		VALUES ('j1', 'k1', 'a', 'https://h.example/inbox', 'h.example', 's', 'k', '', 'queued', 1, 1)`)
	downTo(t, db, 7)
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE name = 'fan_outs'`); err != nil || len(n) != 0 {
		t.Fatalf("fan_outs left after 008 down: %v %v", n, err)
	}
	if ids, err := sqlite.QueryStrings(ctx, db, `SELECT id FROM jobs`); err != nil || len(ids) != 1 {
		t.Fatalf("jobs after 008 down: %v %v", ids, err)
	}
	mustMigrate(t, db)
	if ids, err := sqlite.QueryStrings(ctx, db, `SELECT id FROM fan_outs`); err != nil || len(ids) != 0 {
		t.Fatalf("fan_outs after 008 up again: %v %v", ids, err)
	}
}
