package sqlite_test

import (
	"slices"
	"testing"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
)

// Migration 007 moves each job's payload into bodies, once per distinct
// body under its content address, and its down step puts every payload
// back.
func TestMigration007StoresEachBodyOnce(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	downTo(t, db, 6)
	if v, _, err := sqlite.MigrationVersion(ctx, db); v >= 7 || err != nil {
		t.Fatalf("version %d (%v); this test is about 007", v, err)
	}
	shared, own := `{"id":"https://l.example/a/1","type":"Create"}`, `{"id":"https://l.example/a/2","type":"Follow"}`
	for _, r := range [][2]string{{"j1", shared}, {"j2", shared}, {"j3", own}} {
		mustExec(t, db, `INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, run_at, created_at)
			VALUES (?, ?, 'a', 'https://h.example/inbox', 'h.example', 's', 'k', ?, 'queued', 1, 1)`, r[0], "k"+r[0], []byte(r[1]))
	}
	mustMigrate(t, db)
	ids, err := sqlite.QueryStrings(ctx, db, `SELECT id FROM bodies ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{domain.BodyOf([]byte(shared)), domain.BodyOf([]byte(own))}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("bodies %v, want %v", ids, want)
	}
	s := sqlite.NewJobStore(db)
	for id, body := range map[string]string{"j1": shared, "j2": shared, "j3": own} {
		j, err := s.Get(ctx, id)
		if err != nil || string(j.Payload) != body || j.BodyID != domain.BodyOf([]byte(body)) {
			t.Fatalf("%s after 007: body %q payload %q (%v)", id, j.BodyID, j.Payload, err)
		}
	}
	downTo(t, db, 6)
	got, err := sqlite.QueryStrings(ctx, db, `SELECT id || '=' || CAST(payload AS TEXT) FROM jobs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"j1=" + shared, "j2=" + shared, "j3=" + own}) {
		t.Fatalf("payloads after 007 down: %v", got)
	}
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE name = 'bodies'`); err != nil || len(n) != 0 {
		t.Fatalf("bodies left after 007 down: %v %v", n, err)
	}
}
