package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/migrations/migrationtest"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// downTo steps the schema down to version v (migrationtest.DownTo), and
// fails the test where it is then not at v: a test of the migration after v
// starts from v, not from below it.
func downTo(t *testing.T, db *sqlite.DB, v uint) {
	t.Helper()
	ctx := testCtx(t)
	version := func() (uint, error) {
		got, _, err := sqlite.MigrationVersion(ctx, db)
		return got, err
	}
	migrationtest.DownTo(t, v, version, func() error { return sqlite.MigrateDown(ctx, db, 1, testLog(t)) })
	if got, err := version(); got != v || err != nil {
		t.Fatalf("version %d (%v) after stepping down to %d", got, err, v)
	}
}

// migratedDownTo is where a test of the migrations after version v starts:
// a database migrated up and stepped down to v, and the test's context.
func migratedDownTo(t *testing.T, v uint) (*sqlite.DB, context.Context) {
	t.Helper()
	db := migrated(t)
	downTo(t, db, v)
	return db, testCtx(t)
}

// schemaLeft is what the schema has (tables, indexes, triggers) named like
// one of patterns (LIKE): after a down step, what it failed to drop.
func schemaLeft(t *testing.T, db *sqlite.DB, patterns ...string) []string {
	t.Helper()
	var out []string
	for _, p := range patterns {
		names, err := sqlite.QueryStrings(testCtx(t), db, `SELECT name FROM sqlite_master WHERE name LIKE ?`, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, names...)
	}
	return out
}

// columns is the names of table's columns, in their order.
func columns(t *testing.T, db *sqlite.DB, table string) []string {
	t.Helper()
	cols, err := sqlite.QueryStrings(testCtx(t), db, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// mustReadAlong fails the test unless the plan of q reads along the index
// idx (named in the plan's text as idx) and sorts nothing (no TEMP
// B-TREE); what names the reading.
func mustReadAlong(t *testing.T, db *sqlite.DB, what, idx, q string, args ...any) {
	t.Helper()
	plan, err := sqlite.Plan(testCtx(t), db, q, args...)
	if all := strings.Join(plan, "\n"); err != nil || !strings.Contains(all, idx) || strings.Contains(all, "TEMP B-TREE") {
		t.Fatalf("%s plan:\n%s (%v)", what, all, err)
	}
}

// insertOldJob writes job j's row by hand, as the schemas before 007 keep
// it: a payload per job, where today's store writes bodies, which they have
// not got.
func insertOldJob(t *testing.T, db *sqlite.DB, j domain.Job) {
	t.Helper()
	var until any
	if !j.LeaseUntil.IsZero() {
		until = j.LeaseUntil.UnixNano()
	}
	mustExec(t, db, `INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state,
		run_at, lease_token, lease_until, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.DedupeKey, j.ActivityID, j.Inbox, j.Host, j.SenderID, j.KeyID, j.Payload, string(j.State),
		j.RunAt.UnixNano(), j.LeaseToken, until, j.CreatedAt.UnixNano())
}

// keyIDIndexes is the names of the indexes on foreign_avatars' key ids.
func keyIDIndexes(t *testing.T, db *sqlite.DB) []string {
	t.Helper()
	names, err := sqlite.QueryStrings(testCtx(t), db, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'foreign_avatars' AND name LIKE '%public_key_id%'`)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Migrations go down to nothing and up again; the system names come back.
func TestMigrateDownToZeroAndUpAgain(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	latest, err := sqlite.LatestMigration()
	if err != nil || latest < 3 {
		t.Fatalf("latest %d, %v", latest, err)
	}
	if v, dirty, err := sqlite.MigrationVersion(ctx, db); v != latest || dirty || err != nil {
		t.Fatalf("after up: version %d dirty %v err %v", v, dirty, err)
	}
	if err := sqlite.MigrateDown(ctx, db, 0, testLog(t)); err == nil {
		t.Fatal("zero steps accepted")
	}
	if err := sqlite.MigrateDown(ctx, db, 100, testLog(t)); err != nil {
		t.Fatalf("down: %v", err)
	}
	if v, dirty, err := sqlite.MigrationVersion(ctx, db); v != 0 || dirty || err != nil {
		t.Fatalf("after down: version %d dirty %v err %v", v, dirty, err)
	}
	tables, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil || !slices.Equal(tables, []string{"schema_migrations"}) {
		t.Fatalf("tables after down: %v, %v", tables, err)
	}
	mustMigrate(t, db)
	if err := sqlite.NewNameRegistry(db).Reserve(ctx, domain.ReservedName{Name: "admin", Kind: domain.NameKindPersona, OwnerID: "x"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("system names not seeded again: %v", err)
	}
	names, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' AND tbl_name <> 'schema_migrations' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	want := sqlite.IndexNames()
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("indexes\n got %v\nwant %v", names, want)
	}
}

// 001 seeds the valid names of domain.FixedReservedNames(), all of them
// and nothing else, as kind system.
func TestSystemNamesMatchTheDomain(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	got, err := sqlite.NewNameRegistry(db).List(testCtx(t), domain.NameKindSystem)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
		if n.OwnerID != "" || n.CreatedAt.IsZero() {
			t.Errorf("system name %+v", n)
		}
	}
	var want []string
	for _, n := range domain.FixedReservedNames() {
		if _, err := domain.NormalizeName(n); err == nil {
			want = append(want, n)
		}
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("seeded\n got %v\nwant %v", names, want)
	}
}

// Migration 004 counts the jobs leased before it ran.
func TestMigration004CountsLeasedJobs(t *testing.T) {
	t.Parallel()
	db, ctx := migratedDownTo(t, 3)
	s := sqlite.NewJobStore(db)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for i, host := range []string{"a.example", "a.example", "b.example", "c.example"} {
		j := newJob(t, fmt.Sprintf("j%d", i), host, now)
		if host != "c.example" {
			j.State, j.LeaseToken, j.LeaseUntil = domain.JobLeased, "tok", now.Add(time.Minute)
		}
		insertOldJob(t, db, j)
	}
	mustMigrate(t, db)
	for host, want := range map[string]int{"a.example": 2, "b.example": 1, "c.example": 0} {
		if got := inFlight(t, db, host); got != want {
			t.Errorf("%s: %d in flight after 004, want %d", host, got, want)
		}
	}
	mustNoDrift(t, db, "after 004")
	// And the cap reads them: a.example is full, b.example has one slot.
	c := newJob(t, "more-a", "a.example", now)
	d := newJob(t, "more-b", "b.example", now)
	if _, err := s.Enqueue(ctx, []domain.Job{c, d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t2", Now: now, Until: now.Add(time.Minute), Limit: 10, PerHost: 2})
	var ids []string
	for _, j := range got {
		ids = append(ids, j.ID)
	}
	if err != nil || len(got) != 2 || got[0].Host == "a.example" || got[1].Host == "a.example" {
		t.Fatalf("leased %v, %v: want c.example's job and more-b, none of the full a.example", ids, err)
	}
}

// Migration 007 moves each job's payload into bodies, once per distinct
// body under its content address, and its down step puts every payload
// back.
func TestMigration007StoresEachBodyOnce(t *testing.T) {
	t.Parallel()
	db, ctx := migratedDownTo(t, 6)
	shared, own := `{"id":"https://l.example/a/1","type":"Create"}`, `{"id":"https://l.example/a/2","type":"Follow"}`
	bodies := map[string]string{"j1": shared, "j2": shared, "j3": own}
	for name, body := range bodies {
		j := newJob(t, name, "h.example", time.Unix(0, 1))
		j.Payload = []byte(body)
		insertOldJob(t, db, j)
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
	for name, body := range bodies {
		j, err := s.Get(ctx, contract.JobID(name))
		if err != nil || string(j.Payload) != body || j.BodyID != domain.BodyOf([]byte(body)) {
			t.Fatalf("%s after 007: body %q payload %q (%v)", name, j.BodyID, j.Payload, err)
		}
	}
	downTo(t, db, 6)
	got, err := sqlite.QueryStrings(ctx, db, `SELECT id || '=' || CAST(payload AS TEXT) FROM jobs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	// contract.JobID keeps the names' order.
	if want := []string{contract.JobID("j1") + "=" + shared, contract.JobID("j2") + "=" + shared, contract.JobID("j3") + "=" + own}; !slices.Equal(got, want) {
		t.Fatalf("payloads after 007 down: %v, want %v", got, want)
	}
	if n := schemaLeft(t, db, "bodies"); len(n) != 0 {
		t.Fatalf("bodies left after 007 down: %v", n)
	}
}

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
	if n, err := sqlite.NewJobStore(db).Enqueue(ctx, []domain.Job{newJob(t, "j1", "h.example", time.Now())}); n != 1 || err != nil {
		t.Fatalf("enqueue: %d %v", n, err)
	}
	downTo(t, db, 7)
	if n := schemaLeft(t, db, "fan_outs"); len(n) != 0 {
		t.Fatalf("fan_outs left after 008 down: %v", n)
	}
	if ids, err := sqlite.QueryStrings(ctx, db, `SELECT id FROM jobs`); err != nil || len(ids) != 1 {
		t.Fatalf("jobs after 008 down: %v %v", ids, err)
	}
	mustMigrate(t, db)
	if ids, err := sqlite.QueryStrings(ctx, db, `SELECT id FROM fan_outs`); err != nil || len(ids) != 0 {
		t.Fatalf("fan_outs after 008 up again: %v %v", ids, err)
	}
}

// 009 adds the boosts table; its down drops it and keeps the posts.
func TestMigration009Boosts(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	s := sqlite.NewContentStore(db)
	post := domain.Post{ID: "p1", ObjectURI: "https://r.example/n/1", AuthorURI: "https://r.example/u/a", Content: "x", Visibility: "public", Published: time.Now()}
	if _, err := s.CreatePost(ctx, post); err != nil {
		t.Fatal(err)
	}
	b, _ := domain.NewBoost("https://r.example/a/1", "https://r.example/u/b", post.ObjectURI, time.Now())
	if created, err := s.AddBoost(ctx, b); err != nil || !created {
		t.Fatalf("boost after 009: %v %v", created, err)
	}
	downTo(t, db, 8)
	tables, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('boosts', 'posts') ORDER BY name`)
	if err != nil || !slices.Equal(tables, []string{"posts"}) {
		t.Fatalf("tables after 009 down: %v %v", tables, err)
	}
	mustMigrate(t, db)
	if created, err := s.AddBoost(ctx, b); err != nil || !created {
		t.Fatalf("boost after 009 again: %v %v", created, err)
	}
}

// Migration 011 cleans a cache that violates one owner per key id
// (migrationtest.KeyOwnerCache) and makes the key id unique, and makes
// tombstones; its down step puts the plain index back, which lets a key
// id be claimed twice again, and drops the tombstones.
func TestMigration011OneOwnerPerKeyIDAndTombstones(t *testing.T) {
	t.Parallel()
	db, ctx := migratedDownTo(t, 10)
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
	if got := keyIDIndexes(t, db); !slices.Equal(got, []string{"foreign_avatars_public_key_id_key"}) {
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
	if got := keyIDIndexes(t, db); !slices.Equal(got, []string{"foreign_avatars_public_key_id_idx"}) {
		t.Fatalf("key id indexes after 011 down: %v", got)
	}
	if n := schemaLeft(t, db, "tombstones"); len(n) != 0 {
		t.Fatalf("tombstones left after 011 down: %v", n)
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
	mustExec(t, db, `CREATE INDEX foreign_avatars_public_key_id_idx ON foreign_avatars (public_key_id)`)
	mustExec(t, db, `DROP INDEX foreign_avatars_public_key_id_key`)
	for range 2 {
		if err := sqlite.EnsureIndexes(testCtx(t), db); err != nil {
			t.Fatal(err)
		}
		if names := keyIDIndexes(t, db); !slices.Equal(names, []string{"foreign_avatars_public_key_id_key"}) {
			t.Fatalf("key id indexes after EnsureIndexes: %v", names)
		}
	}
}

// Migration 012 gives every account a status: the accounts stored before
// are active, a status that is not one is refused, and the sign-ups to
// approve are listed from root_users_status_created_idx. It makes the
// tables of the domain blocks and allows and of the reports. Its down
// step drops the columns (and the index EnsureIndexes made) and the
// tables: an account is then only an account, and active again when 012
// runs once more.
func TestMigration012Moderation(t *testing.T) {
	t.Parallel()
	db, ctx := migratedDownTo(t, 11)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	mustExec(t, db, `INSERT INTO root_users (id, user_name, password_hash, created_at) VALUES ('u1', 'old', '$2a$h', ?)`, base.UnixNano())
	mustMigrate(t, db)
	s := sqlite.NewAccountStore(db)
	if u, err := s.UserByID(ctx, "u1"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("an account stored before 012: %+v %v, want active", u, err)
	}
	if us, err := s.UsersByStatus(ctx, domain.UserActive, 0); err != nil || len(us) != 1 || us[0].ID != "u1" {
		t.Fatalf("active accounts after 012: %+v %v", us, err)
	}
	if err := sqlite.Exec(ctx, db, `UPDATE root_users SET status = 'banned' WHERE id = 'u1'`); err == nil {
		t.Fatal("a status that is not one was stored")
	}
	mustReadAlong(t, db, "UsersByStatus's", "USING INDEX root_users_status_created_idx (status=?)",
		`SELECT id, reason FROM root_users WHERE status = ? ORDER BY created_at, id LIMIT ?`, "pending", 10)
	p := domain.RootUser{ID: "u2", UserName: "new", PasswordHash: "$2a$h", CreatedAt: base, Status: domain.UserPending, Reason: "hi"}
	if err := s.CreateUser(ctx, p); err != nil {
		t.Fatal(err)
	}
	b, _ := domain.NewDomainBlock("spam.example", domain.SeveritySuspend, "spam", base)
	if err := sqlite.NewModerationStore(db).AddDomainBlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	r, _ := domain.NewReport("r1", "https://r.example/flags/1", "https://r.example/actor", []string{"https://h.example/users/a"}, nil, "", base)
	if _, err := sqlite.NewReportStore(db).AddReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SELECT id FROM reports ORDER BY created_at DESC, id DESC LIMIT 10`,
		`SELECT id FROM reports WHERE resolved_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 10`} {
		mustReadAlong(t, db, "the reports'", "reports_created_at_idx", q)
	}

	downTo(t, db, 11)
	if n := schemaLeft(t, db, "domain_blocks", "domain_allows", "reports"); len(n) != 0 {
		t.Fatalf("tables left after 012 down: %v", n)
	}
	if cols := columns(t, db, "root_users"); !slices.Equal(cols, []string{"id", "user_name", "password_hash", "created_at"}) {
		t.Fatalf("root_users after 012 down: %v", cols)
	}
	if n := schemaLeft(t, db, "root_users_status_created_idx"); len(n) != 0 {
		t.Fatalf("index left after 012 down: %v", n)
	}
	mustMigrate(t, db)
	if u, err := s.UserByID(ctx, "u2"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("a pending sign-up after 012 down and up: %+v %v (down cannot keep what the older build does not know)", u, err)
	}
	if err := s.SetUserStatus(ctx, "u2", domain.UserPending); err != nil {
		t.Fatal(err)
	}
	if got, err := sqlite.NewModerationStore(db).DomainBlocks(ctx); err != nil || len(got) != 0 {
		t.Fatalf("blocks after 012 down and up: %+v %v", got, err)
	}
}

// Migration 013 marks deleted personas: the deletions still to finish are
// read along avatars_retired_idx, never by reading every avatar and its
// key. Its down step drops the marks: a persona still being deleted comes
// back live (an older build knows no deletion).
func TestMigration013DeletedPersonas(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	actors, names := sqlite.NewAccountStore(db), sqlite.NewNameRegistry(db)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	rn, _ := domain.NewReservedName("vera", domain.NameKindPersona, "a1", base)
	if err := names.Reserve(ctx, rn); err != nil {
		t.Fatal(err)
	}
	if err := actors.RetireAvatar(ctx, "a1", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := names.MarkDeleted(ctx, "vera", "a1", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustReadAlong(t, db, "RetiredAvatars'", "avatars_retired_idx",
		`SELECT id FROM avatars WHERE deleted_at IS NOT NULL AND id > ? ORDER BY id LIMIT ?`, "", 100)

	downTo(t, db, 12)
	for _, table := range []string{"avatars", "reserved_names"} {
		if cols := columns(t, db, table); slices.Contains(cols, "deleted_at") {
			t.Fatalf("%s.deleted_at left after 013 down: %v", table, cols)
		}
	}
	if n := schemaLeft(t, db, "avatars_retired_idx"); len(n) != 0 {
		t.Fatalf("left after 013 down: %v", n)
	}
	mustMigrate(t, db)
	if a, err := actors.AvatarByName(ctx, "vera"); err != nil || !a.DeletedAt.IsZero() {
		t.Fatalf("vera after 013 down and up: %+v %v", a, err)
	}
	if r, err := names.Get(ctx, "vera"); err != nil || r.Deleted() {
		t.Fatalf("vera's name after 013 down and up: %+v %v", r, err)
	}
}

// Migration 017 fills each host's ready_at from the queued jobs already
// there (their oldest run_at; none for a host without queued jobs), so a
// lease finds them after the upgrade; its down step drops the column.
func TestMigration017ReadyHosts(t *testing.T) {
	t.Parallel()
	db, ctx := migratedDownTo(t, 15)
	s := sqlite.NewJobStore(db)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	leased := newJob(t, "a-leased", "a.example", now)
	leased.State, leased.LeaseToken, leased.LeaseUntil = domain.JobLeased, "tok", now.Add(time.Minute)
	dead := newJob(t, "b-dead", "b.example", now)
	dead.State, dead.FinishedAt = domain.JobDead, now
	if _, err := s.Enqueue(ctx, []domain.Job{newJob(t, "a2", "a.example", now.Add(2*time.Second)), newJob(t, "a1", "a.example", now.Add(time.Second)),
		leased, dead, newJob(t, "c1", "c.example", now)}); err != nil {
		t.Fatal(err)
	}
	mustMigrate(t, db)
	ready := func(host string) (at sql.NullInt64) {
		t.Helper()
		if err := sqlite.QueryRow(ctx, db, `SELECT ready_at FROM host_slots WHERE host = ?`, host).Scan(&at); err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		return at
	}
	for host, want := range map[string]time.Time{"a.example": now.Add(time.Second), "c.example": now} {
		if got := ready(host); !got.Valid || got.Int64 != want.UnixNano() {
			t.Fatalf("%s ready_at after 017: %v, want %v", host, got, want)
		}
	}
	if got := ready("b.example"); got.Valid {
		t.Fatalf("b.example, without queued jobs, ready at %v", got)
	}
	got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t", Now: now.Add(time.Minute), Until: now.Add(2 * time.Minute), Limit: 10, PerHost: 2})
	if err != nil || len(got) != 2 || contract.JobName(got[0].ID) != "c1" || contract.JobName(got[1].ID) != "a1" {
		t.Fatalf("leased after 017: %v, %v; want c1 and a1 (a.example has one slot left)", got, err)
	}
	downTo(t, db, 15)
	if cols := columns(t, db, "host_slots"); slices.Contains(cols, "ready_at") {
		t.Fatalf("host_slots.ready_at after 017's down: %v", cols)
	}
}

// Migration 019 counts the jobs stored before it ran, and its down step
// leaves them alone.
func TestMigration019CountsExistingJobs(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	stepDownFrom019(t, db)
	s := sqlite.NewJobStore(db)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var jobs []domain.Job
	for i, host := range []string{"a.example", "a.example", "b.example"} {
		jobs = append(jobs, newJob(t, fmt.Sprintf("j%d", i), host, now))
	}
	if _, err := s.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t", Now: now, Until: now.Add(time.Minute), Limit: 1}); err != nil {
		t.Fatal(err)
	}
	mustMigrate(t, db)
	mustNoCountDrift(t, db, "after 019")
	counts, err := s.Counts(ctx)
	if err != nil || counts[domain.JobQueued] != 2 || counts[domain.JobLeased] != 1 {
		t.Fatalf("counts after 019: %v, %v; want 2 queued, 1 leased", counts, err)
	}
	stepDownFrom019(t, db)
	var n int
	if err := sqlite.QueryRow(ctx, db, `SELECT count(*) FROM jobs`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d jobs after 019 down (%v), want the 3", n, err)
	}
}

// stepDownFrom019 takes the schema one step down from 019, the latest
// here, to the one before it, whatever its number.
func stepDownFrom019(t *testing.T, db *sqlite.DB) {
	t.Helper()
	ctx := testCtx(t)
	downTo(t, db, 19) // below the migrations after it
	if err := sqlite.MigrateDown(ctx, db, 1, testLog(t)); err != nil {
		t.Fatal(err)
	}
	if v, _, err := sqlite.MigrationVersion(ctx, db); v >= 19 || err != nil {
		t.Fatalf("version %d after a step down from 019 (%v)", v, err)
	}
}

// Migration 020 keeps the notifications, one per recipient and key; a
// persona's page is read along notifications_recipient_idx, never by
// sorting. Its down step drops them (an older build has none), and up
// again starts empty.
func TestMigration020Notifications(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	store := sqlite.NewNotificationStore(db)
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	n, err := domain.NewNotification("01", "https://herald.example/users/vera", domain.NotifyFollow, "https://r.example/users/bob", "", "https://r.example/follows/1", at)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := store.AddNotification(ctx, n); err != nil || !created {
		t.Fatalf("add after 020: %v %v", created, err)
	}
	mustReadAlong(t, db, "Notifications'", "notifications_recipient_idx",
		`SELECT id FROM notifications WHERE recipient = ? AND id < ? AND kind IN (?) ORDER BY id DESC LIMIT ?`, n.Recipient, "99", "follow", 20)

	downTo(t, db, 19)
	if left := schemaLeft(t, db, "notifications%"); len(left) != 0 {
		t.Fatalf("left after 020 down: %v", left)
	}
	mustMigrate(t, db)
	got, err := store.Notifications(ctx, n.Recipient, domain.NotificationFilter{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 020 down and up: %v %v", got, err)
	}
	if _, err := store.Notification(ctx, n.Recipient, "01"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("notification after 020 down and up: %v", err)
	}
}

// Migration 021 keeps a persona's bio (note); a persona stored before it
// has none. Its down step drops the column (an older build keeps no bio)
// and leaves the display name, and up again starts every bio empty.
func TestMigration021PersonaBio(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	actors := sqlite.NewAccountStore(db)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" {
		t.Fatalf("a new persona's bio: %q %v", a.Note, err)
	}
	if err := actors.SetAvatarProfile(ctx, "a1", "Vera", "hello"); err != nil {
		t.Fatal(err)
	}

	downTo(t, db, 20)
	if cols := columns(t, db, "avatars"); slices.Contains(cols, "note") {
		t.Fatalf("note left after 021 down: %v", cols)
	}
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT display_name FROM avatars WHERE id = 'a1'`); err != nil || len(n) != 1 || n[0] != "Vera" {
		t.Fatalf("display name after 021 down: %v %v", n, err)
	}
	mustMigrate(t, db)
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" || a.DisplayName != "Vera" {
		t.Fatalf("vera after 021 down and up: %q %q %v", a.DisplayName, a.Note, err)
	}
}

// Migration 022 keeps each persona's conversations, one per (persona,
// thread); a persona's page is read along conversations_persona_last_idx,
// never by sorting. Its down step drops them, and up again starts empty.
func TestMigration022Conversations(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	store := sqlite.NewNotificationStore(db)
	c := domain.Conversation{ID: "k1", Persona: "https://herald.example/users/vera", LastStatusID: "01", Unread: true,
		Participants: []string{"https://herald.example/users/vera", "https://r.example/users/bob"}}
	if err := store.AddToConversation(ctx, c); err != nil {
		t.Fatalf("add after 022: %v", err)
	}
	mustReadAlong(t, db, "Conversations'", "conversations_persona_last_idx",
		`SELECT id FROM conversations WHERE persona = ? AND last_status_id < ? ORDER BY last_status_id DESC LIMIT ?`, c.Persona, "99", 20)

	downTo(t, db, 20)
	if left := schemaLeft(t, db, "conversations%"); len(left) != 0 {
		t.Fatalf("left after 022 down: %v", left)
	}
	mustMigrate(t, db)
	got, err := store.Conversations(ctx, c.Persona, domain.ConversationPage{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 022 down and up: %v %v", got, err)
	}
	if _, err := store.Conversation(ctx, c.Persona, c.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("conversation after 022 down and up: %v", err)
	}
}
