package sqlite_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/migrations/migrationtest"
)

// Migration 011 cleans a cache that violates one owner per key id
// (migrationtest.KeyOwnerCache) and makes the key id unique, and makes
// tombstones; its down step puts the plain index back, which lets a key
// id be claimed twice again, and drops the tombstones.
func TestMigration011OneOwnerPerKeyIDAndTombstones(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	downTo(t, db, 10)
	if v, _, err := sqlite.MigrationVersion(ctx, db); v != 10 || err != nil {
		t.Fatalf("version %d (%v); this test is about 011", v, err)
	}
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, a := range migrationtest.KeyOwnerCache {
		mustExec(t, db, `INSERT INTO foreign_avatars (actor_uri, public_key_id, inbox, fetched_at) VALUES (?, ?, ?, ?)`,
			a.ActorURI, a.KeyID, a.ActorURI+"/inbox", base.Add(a.FetchedAt).UnixNano())
	}
	mustMigrate(t, db)
	kept, err := sqlite.QueryStrings(ctx, db, `SELECT actor_uri FROM foreign_avatars ORDER BY actor_uri`)
	if err != nil {
		t.Fatal(err)
	}
	want := migrationtest.KeptActors()
	slices.Sort(want)
	if !slices.Equal(kept, want) {
		t.Fatalf("kept\n %q\nwant\n %q", kept, want)
	}
	s := sqlite.NewContentStore(db)
	if f, err := s.ByKeyID(ctx, "https://r.example/users/bob#main-key"); err != nil || f.ActorURI != "https://r.example/users/bob" {
		t.Fatalf("bob's key answers %+v %v", f, err)
	}
	if err := s.Upsert(ctx, domain.ForeignAvatar{ActorURI: "https://r.example/users/eve", PublicKeyID: "https://r.example/users/bob#main-key"}); !errors.Is(err, domain.ErrAlreadyExists) {
		t.Fatalf("a second claim after 011: %v, want ErrAlreadyExists", err)
	}
	indexes := func() []string {
		t.Helper()
		names, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'foreign_avatars' AND name LIKE '%public_key_id%'`)
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got := indexes(); !slices.Equal(got, []string{"foreign_avatars_public_key_id_key"}) {
		t.Fatalf("key id indexes after 011: %v", got)
	}
	tomb, _ := domain.NewTombstone("https://r.example/notes/1", "https://r.example/users/bob", base)
	if err := s.AddTombstone(ctx, tomb); err != nil {
		t.Fatalf("a tombstone after 011: %v", err)
	}
	plan, err := sqlite.Plan(ctx, db, `SELECT actor_uri FROM foreign_avatars WHERE public_key_id = ? AND public_key_id <> ''`, "k")
	if err != nil || len(plan) != 1 || plan[0] != "SEARCH foreign_avatars USING INDEX foreign_avatars_public_key_id_key (public_key_id=?)" {
		t.Fatalf("ByKeyID's plan %q (%v)", plan, err)
	}

	downTo(t, db, 10)
	if got := indexes(); !slices.Equal(got, []string{"foreign_avatars_public_key_id_idx"}) {
		t.Fatalf("key id indexes after 011 down: %v", got)
	}
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE name = 'tombstones'`); err != nil || len(n) != 0 {
		t.Fatalf("tombstones left after 011 down: %v %v", n, err)
	}
	mustExec(t, db, `INSERT INTO foreign_avatars (actor_uri, public_key_id, fetched_at) VALUES ('https://r.example/users/bob2', 'https://r.example/users/bob#main-key', ?)`,
		base.Add(time.Hour).UnixNano())
	mustMigrate(t, db)
	if f, err := s.ByKeyID(ctx, "https://r.example/users/bob#main-key"); err != nil || f.ActorURI != "https://r.example/users/bob2" {
		t.Fatalf("after 011 again, the newer copy answers: %+v %v", f, err)
	}
	if _, err := s.Tombstoned(ctx, tomb.URI); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a tombstone after 011 down and up: %v, want ErrNotFound", err)
	}
}

// EnsureIndexes moves a database that has the plain index on key ids (an
// earlier version made it at its start) to the unique one, and stays put
// when run again.
func TestEnsureIndexesRetiresThePlainKeyIndex(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	mustExec(t, db, `CREATE INDEX foreign_avatars_public_key_id_idx ON foreign_avatars (public_key_id)`)
	mustExec(t, db, `DROP INDEX foreign_avatars_public_key_id_key`)
	for range 2 {
		if err := sqlite.EnsureIndexes(ctx, db); err != nil {
			t.Fatal(err)
		}
		names, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'foreign_avatars' AND name LIKE '%public_key_id%'`)
		if err != nil || !slices.Equal(names, []string{"foreign_avatars_public_key_id_key"}) {
			t.Fatalf("key id indexes after EnsureIndexes: %v %v", names, err)
		}
	}
}
