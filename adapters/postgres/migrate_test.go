package postgres_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/migrations/migrationtest"
	pgmigrations "github.com/heraldfed/herald/migrations/postgres"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// legacyDDL is the schema the old server left: no unique index where races
// made duplicates, and deliveries with the activity in a text column and a
// text id (001 creates jsonb and bigint; 004 must read both).
const legacyDDL = `
CREATE TABLE root_users (id text PRIMARY KEY, user_name text NOT NULL, password_hash text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE avatars (id text PRIMARY KEY, root_user_id text, name text NOT NULL,
	display_name text NOT NULL DEFAULT '', public_key_pem text NOT NULL DEFAULT '',
	private_key_pem text NOT NULL DEFAULT '', created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE groups (id text PRIMARY KEY, owner_id text NOT NULL, name text NOT NULL,
	display_name text NOT NULL DEFAULT '', public_key_pem text NOT NULL DEFAULT '',
	private_key_pem text NOT NULL DEFAULT '', created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE foreign_avatars (actor_uri text NOT NULL, public_key_id text NOT NULL DEFAULT '',
	public_key_pem text NOT NULL DEFAULT '', inbox text NOT NULL DEFAULT '', shared_inbox text NOT NULL DEFAULT '',
	preferred_username text NOT NULL DEFAULT '', host text NOT NULL DEFAULT '', fetched_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE posts (id text PRIMARY KEY, object_uri text NOT NULL, author_uri text NOT NULL,
	group_uri text NOT NULL DEFAULT '', content text NOT NULL, visibility text NOT NULL,
	in_reply_to text NOT NULL DEFAULT '', published timestamptz NOT NULL, local boolean NOT NULL DEFAULT false,
	created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE dm_posts (id text PRIMARY KEY, object_uri text NOT NULL, author_uri text NOT NULL,
	participants text[] NOT NULL DEFAULT '{}', participants_key text NOT NULL, content text NOT NULL,
	published timestamptz NOT NULL, local boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE followers (follower_uri text NOT NULL, followed_uri text NOT NULL, state text NOT NULL,
	activity_id text NOT NULL DEFAULT '', created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE deliveries (id text PRIMARY KEY, activity text NOT NULL, inbox text NOT NULL, actor text NOT NULL,
	attempts integer NOT NULL DEFAULT 0, created timestamptz NOT NULL DEFAULT now(), state text NOT NULL DEFAULT 'pending');
`

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	follower1, follower2, follower3, follower4 = "https://r.example/u/f1", "https://r.example/u/f2", "https://r.example/u/f3", "https://r.example/u/f4"
	localAlice                                 = "https://h.example/users/alice"
)

// seedLegacy fills the legacy tables with what races and the old worker
// left: duplicates of every kind 001 removes, names 001 reserves, and
// deliveries 004 moves or must leave alone.
func seedLegacy(t *testing.T, p *pgxpool.Pool) {
	t.Helper()
	mustExec(t, p, legacyDDL)
	h := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, r := range []struct {
		uri, key string
		at       time.Time
	}{
		{"https://r.example/users/bob", "https://r.example/users/bob#old", h(0)},
		{"https://r.example/users/bob", "https://r.example/users/bob#new", h(time.Hour)},
		{"https://r.example/users/bob", "https://r.example/users/bob#older", h(-time.Hour)},
		{"https://r.example/users/carol", "https://r.example/users/carol#k", h(0)},
	} {
		mustExec(t, p, `INSERT INTO foreign_avatars (actor_uri, public_key_id, inbox, fetched_at) VALUES ($1, $2, $1 || '/inbox', $3)`, r.uri, r.key, r.at)
	}
	for _, r := range []struct {
		id, uri string
		stored  time.Time
	}{
		{"p-third", "https://r.example/notes/1", h(2 * time.Minute)},
		{"p-first", "https://r.example/notes/1", h(0)},
		{"p-second", "https://r.example/notes/1", h(time.Minute)},
		{"p-other", "https://r.example/notes/2", h(0)},
	} {
		mustExec(t, p, `INSERT INTO posts (id, object_uri, author_uri, content, visibility, published, created_at)
			VALUES ($1, $2, 'https://r.example/users/bob', $1, 'public', $3, $4)`, r.id, r.uri, t0, r.stored)
	}
	mustExec(t, p, `INSERT INTO dm_posts (id, object_uri, author_uri, participants, participants_key, content, published, created_at) VALUES
		('d-late', 'https://r.example/dm/1', 'https://r.example/users/bob', '{a,b}', 'k', 'x', $1, $2),
		('d-early', 'https://r.example/dm/1', 'https://r.example/users/bob', '{a,b}', 'k', 'x', $1, $1)`, t0, h(time.Minute))
	for _, r := range []struct {
		follower, state, activity string
		at                        time.Time
	}{
		{follower1, "pending", "f1-pending", h(0)},
		{follower1, "accepted", "f1-accepted", h(time.Hour)},
		{follower2, "pending", "f2-late", h(time.Hour)},
		{follower2, "pending", "f2-early", h(0)},
		{follower3, "accepted", "f3", h(0)},
		{follower3, "accepted", "f3", h(0)}, // exact copies
		{follower4, "accepted", "f4-late", h(time.Hour)},
		{follower4, "pending", "f4-pending", h(-time.Hour)},
		{follower4, "accepted", "f4-early", h(0)},
	} {
		mustExec(t, p, `INSERT INTO followers (follower_uri, followed_uri, state, activity_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5)`, r.follower, localAlice, r.state, r.activity, r.at)
	}
	mustExec(t, p, `INSERT INTO root_users (id, user_name, password_hash, created_at) VALUES ('u1', 'alice', 'x', $1)`, t0)
	mustExec(t, p, `INSERT INTO avatars (id, root_user_id, name, created_at) VALUES
		('a-alice', 'u1', 'alice', $1), ('a-admin', 'u1', 'admin', $1), ('a-zed', 'u1', 'Zed', $1), ('inst', NULL, 'herald', $1)`, t0)
	mustExec(t, p, `INSERT INTO groups (id, owner_id, name, created_at) VALUES
		('g-club', 'u1', 'club', $1), ('g-alice', 'u1', 'alice', $2)`, t0, h(time.Hour))
	for _, d := range legacyDeliveries {
		mustExec(t, p, `INSERT INTO deliveries (id, activity, inbox, actor, attempts, created, state) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			d.id, d.activity, d.inbox, d.actor, d.attempts, d.created, d.state)
	}
}

type legacyDelivery struct {
	id, activity, inbox, actor string
	attempts                   int
	created                    time.Time
	state                      string
	// what 004 must make of it
	wantState  string
	wantSender string // "" when no job comes of it
	wantKeyID  string
}

var legacyDeliveries = []legacyDelivery{
	{"d1", `{"id":"https://h.example/act/1","type":"Create"}`, "https://Remote.Example:8443/inbox", "https://h.example/users/alice",
		3, t0, "pending", "abandoned", "a-alice", "https://h.example/users/alice#main-key"},
	// The same activity to the same inbox again: one job, both rows handed over.
	{"d2", `{"id":"https://h.example/act/1","type":"Create"}`, "https://Remote.Example:8443/inbox", "https://h.example/users/alice",
		1, t0.Add(time.Second), "pending", "abandoned", "", ""},
	{"d3", `{"type":"Announce","id":"https://h.example/act/ü✓"}`, "https://r.example/users/bob/inbox?x=ä", "https://h.example/groups/club#key-1",
		0, t0.Add(2 * time.Second), "pending", "abandoned", "g-club", "https://h.example/groups/club#key-1"},
	{"d4", `{"id":"https://h.example/act/4"}`, "http://user@other.example/inbox", "https://h.example/actor",
		15, t0.Add(3 * time.Second), "pending", "abandoned", "inst", "https://h.example/actor#main-key"},
	{"d5", `not json`, "https://r.example/inbox", "https://h.example/users/alice", 0, t0, "pending", "pending", "", ""},
	{"d6", `{"id":"https://h.example/act/6"}`, "https://r.example/inbox", "https://h.example/users/nobody", 0, t0, "pending", "pending", "", ""},
	{"d7", `{"id":"https://h.example/act/7"}`, "https://r.example/inbox", "https://h.example/users/alice", 1, t0, "sent", "sent", "", ""},
	{"d8", `{"id":"https://h.example/act/8"}`, "ftp://r.example/inbox", "https://h.example/users/alice", 0, t0, "pending", "pending", "", ""},
	{"d9", `{"type":"Create"}`, "https://r.example/inbox", "https://h.example/users/alice", 0, t0, "pending", "pending", "", ""},
}

func TestMigrationsOnLegacyData(t *testing.T) {
	t.Parallel()
	p := newSchema(t).pool(t)
	ctx := testCtx(t)
	seedLegacy(t, p)
	mustMigrate(t, p)

	t.Run("001 keeps the newest foreign avatar", func(t *testing.T) {
		bob, err := postgres.NewContentStore(p).ByActorURI(ctx, "https://r.example/users/bob")
		if err != nil || bob.PublicKeyID != "https://r.example/users/bob#new" {
			t.Fatalf("bob = %+v, %v", bob, err)
		}
		if n := count(t, p, `SELECT count(*) FROM foreign_avatars`); n != 2 {
			t.Fatalf("%d foreign avatars, want 2", n)
		}
	})
	t.Run("001 keeps the oldest post and dm", func(t *testing.T) {
		got := strings.Join(column(t, p, `SELECT id FROM posts ORDER BY id`), ",")
		if got != "p-first,p-other" {
			t.Fatalf("posts left: %s", got)
		}
		if got := strings.Join(column(t, p, `SELECT id FROM dm_posts`), ","); got != "d-early" {
			t.Fatalf("dm posts left: %s", got)
		}
	})
	t.Run("001 keeps the accepted follow, else the oldest", func(t *testing.T) {
		fs := postgres.NewFollowerStore(p)
		for follower, want := range map[string]string{follower1: "f1-accepted", follower2: "f2-early", follower3: "f3", follower4: "f4-early"} {
			f, err := fs.Get(ctx, follower, localAlice)
			if err != nil || f.ActivityID != want {
				t.Errorf("%s: kept %+v (%v), want %s", follower, f, err, want)
			}
		}
		if n := count(t, p, `SELECT count(*) FROM followers`); n != 4 {
			t.Fatalf("%d follow rows, want 4", n)
		}
	})
	t.Run("001 fills the username space", func(t *testing.T) {
		names, err := postgres.NewNameRegistry(p).List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		got := make(map[string]string, len(names))
		for _, n := range names {
			got[n.Name] = string(n.Kind) + ":" + n.OwnerID
		}
		for name, want := range map[string]string{
			"alice":  "persona:a-alice", // the persona wins over the group of the same name
			"admin":  "persona:a-admin", // it existed before the list: it keeps its name
			"zed":    "persona:a-zed",   // folded to lower case
			"herald": "instance:inst",
			"club":   "group:g-club",
			"root":   "system:",
			"www":    "system:",
		} {
			if got[name] != want {
				t.Errorf("%s = %q, want %q", name, got[name], want)
			}
		}
		if n := count(t, p, `SELECT count(*) FROM reserved_names WHERE kind = 'system'`); n != len(validFixedNames())-1 {
			t.Errorf("%d system names, want %d (the fixed list but admin)", n, len(validFixedNames())-1)
		}
		if err := postgres.NewNameRegistry(p).Reserve(ctx, domain.ReservedName{Name: "club", Kind: domain.NameKindPersona, OwnerID: "x"}); !errors.Is(err, domain.ErrNameTaken) {
			t.Errorf("legacy group name not reserved: %v", err)
		}
	})
	t.Run("the unique indexes hold", func(t *testing.T) {
		_, err := p.Exec(ctx, `INSERT INTO posts (id, object_uri, author_uri, content, visibility, published) VALUES ('p-new', 'https://r.example/notes/1', 'a', 'x', 'public', now())`)
		if !violates(err, "posts_object_uri_key") {
			t.Fatalf("duplicate object URI: %v", err)
		}
		_, err = p.Exec(ctx, `INSERT INTO followers (follower_uri, followed_uri, state) VALUES ($1, $2, 'pending')`, follower1, localAlice)
		if !violates(err, "followers_pair_key") {
			t.Fatalf("duplicate follow: %v", err)
		}
		have := column(t, p, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()`)
		for _, ix := range postgres.IndexNames() {
			if !slices.Contains(have, ix) {
				t.Errorf("index %s missing", ix)
			}
		}
	})
	t.Run("004 moves pending deliveries", func(t *testing.T) {
		checkDeliveries(t, p, legacyDeliveries)
		if n := count(t, p, `SELECT count(*) FROM jobs`); n != 3 {
			t.Fatalf("%d jobs, want 3", n)
		}
	})
	t.Run("004 twice moves nothing twice", func(t *testing.T) {
		// More pending rows arrive (an old worker ran a little longer): a copy
		// of a moved activity, and a new one.
		mustExec(t, p, `INSERT INTO deliveries (id, activity, inbox, actor, attempts, created, state) VALUES
			('d10', '{"id":"https://h.example/act/ü✓"}', 'https://r.example/users/bob/inbox?x=ä', 'https://h.example/users/alice', 0, $1, 'pending'),
			('d11', '{"id":"https://h.example/act/11"}', 'https://r.example/inbox', 'https://h.example/users/alice', 2, $1, 'pending')`, t0)
		up := readMigration(t, "004_move_legacy_deliveries.up.sql")
		// 004's SQL is 004's schema's: later steps changed jobs (009 moved
		// the payload into bodies), so it runs again at version 4.
		downTo(t, p, 4)
		defer mustMigrate(t, p)
		for run := 1; run <= 2; run++ {
			mustExec(t, p, up)
			if n := count(t, p, `SELECT count(*) FROM jobs`); n != 4 {
				t.Fatalf("run %d: %d jobs, want 4", run, n)
			}
			if n := count(t, p, `SELECT count(*) FROM deliveries WHERE id IN ('d10', 'd11') AND state = 'abandoned'`); n != 2 {
				t.Fatalf("run %d: %d of d10, d11 abandoned", run, n)
			}
		}
	})
	t.Run("004 down hands back what was not attempted", func(t *testing.T) {
		jobs := postgres.NewJobStore(p)
		now := time.Now()
		lease := func(token string) domain.Job {
			t.Helper()
			j, err := leaseOne(ctx, jobs, ports.LeaseRequest{Owner: "w", Token: token, Now: now, Until: now.Add(time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			return j
		}
		moved := func(j domain.Job) string {
			t.Helper()
			return column(t, p, `SELECT delivery_id FROM legacy_delivery_moves WHERE job_id = $1`, j.ID)[0]
		}
		// The queue runs in delivery order: d1 is delivered, d3 fails once
		// and waits, d4 is being sent when the rollback comes, d11 waits.
		delivered := lease("t1")
		if err := settleOne(ctx, jobs, ports.Settlement{ID: delivered.ID, Token: "t1", State: domain.JobSucceeded, Attempts: delivered.Attempts + 1, FinishedAt: now}); err != nil {
			t.Fatal(err)
		}
		failed := lease("t2")
		if err := settleOne(ctx, jobs, ports.Settlement{ID: failed.ID, Token: "t2", State: domain.JobQueued, Attempts: 7, RunAt: now, LastError: "HTTP 503"}); err != nil {
			t.Fatal(err)
		}
		inFlight := lease("t3")
		if got := []string{moved(delivered), moved(failed), moved(inFlight)}; !slices.Equal(got, []string{"d1", "d3", "d4"}) {
			t.Fatalf("leased %v; the test expects delivery order", got)
		}
		// Down to 3: every later step, then 004.
		downTo(t, p, 3)
		if v, dirty, err := postgres.MigrationVersion(ctx, p); v != 3 || dirty || err != nil {
			t.Fatalf("version %d dirty %v err %v", v, dirty, err)
		}
		states := make(map[string]string)
		for _, id := range []string{"d1", "d3", "d4", "d11"} {
			states[id] = column(t, p, `SELECT state || ':' || attempts FROM deliveries WHERE id = $1`, id)[0]
		}
		want := map[string]string{
			"d1":  "abandoned:3",  // delivered by the new engine: never again
			"d3":  "pending:7",    // failed once since: back, with its attempts
			"d4":  "abandoned:15", // being sent: stays with the new engine
			"d11": "pending:2",    // never touched: back
		}
		if !maps.Equal(states, want) {
			t.Fatalf("deliveries after down\n got %v\nwant %v", states, want)
		}
		if got := strings.Join(column(t, p, `SELECT state FROM jobs ORDER BY state`), ","); got != "leased,succeeded" {
			t.Fatalf("jobs left after down: %s", got)
		}
		// And up again: the handed-back rows move again, the delivered one not.
		mustMigrate(t, p)
		if got := strings.Join(column(t, p, `SELECT state FROM jobs ORDER BY state`), ","); got != "leased,queued,queued,succeeded" {
			t.Fatalf("jobs after up again: %s", got)
		}
		if n := count(t, p, `SELECT count(*) FROM deliveries WHERE id IN ('d3', 'd11') AND state = 'abandoned'`); n != 2 {
			t.Fatalf("handed-back rows not moved again: %d", n)
		}
	})
}

// checkDeliveries holds every legacy row to what 004 must make of it, and
// every job made to domain.NewJob's rules (the dedupe key by domain's own
// formula, the host by domain.InboxHost).
func checkDeliveries(t *testing.T, p *pgxpool.Pool, want []legacyDelivery) {
	t.Helper()
	ctx := testCtx(t)
	jobs := postgres.NewJobStore(p)
	for _, d := range want {
		if got := column(t, p, `SELECT state FROM deliveries WHERE id = $1`, d.id); got[0] != d.wantState {
			t.Errorf("delivery %s is %s, want %s", d.id, got[0], d.wantState)
		}
		ids := column(t, p, `SELECT job_id FROM legacy_delivery_moves WHERE delivery_id = $1`, d.id)
		if d.wantSender == "" {
			if len(ids) != 0 {
				t.Errorf("delivery %s became job %v", d.id, ids)
			}
			continue
		}
		if len(ids) != 1 {
			t.Errorf("delivery %s: jobs %v", d.id, ids)
			continue
		}
		j, err := jobs.Get(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		var act struct{ ID string }
		if err := json.Unmarshal(j.Payload, &act); err != nil {
			t.Fatalf("payload %q: %v", j.Payload, err)
		}
		host, _ := domain.InboxHost(d.inbox)
		if j.ActivityID != act.ID || j.Inbox != d.inbox || j.Host != host || j.SenderID != d.wantSender || j.KeyID != d.wantKeyID ||
			j.Attempts != d.attempts || j.State != domain.JobQueued || !j.CreatedAt.Equal(d.created) {
			t.Errorf("delivery %s became %+v", d.id, j)
		}
		if j.DedupeKey != domain.DedupeKey(j.ActivityID, j.Inbox) {
			t.Errorf("delivery %s: SQL dedupe key %s, Go %s", d.id, j.DedupeKey, domain.DedupeKey(j.ActivityID, j.Inbox))
		}
		u, err := uuid.Parse(j.ID)
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Errorf("job id %s is not a UUIDv7: %v", j.ID, err)
		} else if sec, nsec := u.Time().UnixTime(); !time.Unix(sec, nsec).Equal(d.created.Truncate(time.Millisecond)) {
			t.Errorf("job id %s carries %v, want %v", j.ID, time.Unix(sec, nsec).UTC(), d.created)
		}
	}
}

func TestMigrationsOnFreshDatabase(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	latest, err := postgres.LatestMigration()
	if err != nil || latest != lastMigrationFile(t) {
		t.Fatalf("latest migration %d, %v", latest, err)
	}
	v, dirty, err := postgres.MigrationVersion(ctx, p)
	if v != latest || dirty || err != nil {
		t.Fatalf("version %d dirty %v err %v", v, dirty, err)
	}
	// The SQL copy of the fixed list is the list.
	got := column(t, p, `SELECT name FROM reserved_names WHERE kind = 'system' ORDER BY name`)
	if want := validFixedNames(); !slices.Equal(got, want) {
		t.Fatalf("system names\n got %v\nwant %v", got, want)
	}
	// Running again changes nothing and says so.
	mustMigrate(t, p)
	if v2, _, _ := postgres.MigrationVersion(ctx, p); v2 != v {
		t.Fatalf("version moved to %d", v2)
	}
}

func TestMigrationVersionBeforeAnyMigration(t *testing.T) {
	t.Parallel()
	p := newSchema(t).pool(t)
	v, dirty, err := postgres.MigrationVersion(testCtx(t), p)
	if v != 0 || dirty || err != nil {
		t.Fatalf("version %d dirty %v err %v", v, dirty, err)
	}
}

func TestMigrateDownToZeroAndUpAgain(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	j, err := domain.NewJob(contract.JobID("j1"), "https://h.example/act/1", "https://r.example/inbox", "a", "k", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.NewJobStore(p).Enqueue(ctx, []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.NewContentStore(p).CreatePost(ctx, domain.Post{ID: "p1", ObjectURI: "https://h.example/p/1", AuthorURI: "a", Content: "x", Visibility: "public", Published: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateDown(ctx, p, 0, testLog(t)); err == nil {
		t.Fatal("zero steps accepted")
	}
	if err := postgres.MigrateDown(ctx, p, 100, testLog(t)); err != nil {
		t.Fatalf("down: %v", err)
	}
	if v, dirty, err := postgres.MigrationVersion(ctx, p); v != 0 || dirty || err != nil {
		t.Fatalf("after down: version %d dirty %v err %v", v, dirty, err)
	}
	tables := column(t, p, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	want := []string{"avatars", "deliveries", "dm_posts", "followers", "foreign_avatars", "groups", "posts", "root_users", "schema_migrations"}
	if !slices.Equal(tables, want) {
		t.Fatalf("tables after down\n got %v\nwant %v (the legacy tables and their data stay)", tables, want)
	}
	if n := count(t, p, `SELECT count(*) FROM posts`); n != 1 {
		t.Fatalf("down lost legacy data: %d posts", n)
	}
	mustMigrate(t, p)
	if v, dirty, err := postgres.MigrationVersion(ctx, p); v != lastMigrationFile(t) || dirty || err != nil {
		t.Fatalf("up again: version %d dirty %v err %v", v, dirty, err)
	}
	if err := postgres.NewNameRegistry(p).Reserve(ctx, domain.ReservedName{Name: "admin", Kind: domain.NameKindPersona, OwnerID: "x"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("system names not seeded again: %v", err)
	}
	if n, err := postgres.NewJobStore(p).Enqueue(ctx, []domain.Job{j}); n != 1 || err != nil {
		t.Fatalf("queue after up again: %d %v", n, err)
	}
}

// Four processes' worth of pools start at once: the advisory lock lets one
// migrate; the others wait and find nothing to do. Without the lock they
// would collide (CREATE TABLE of an existing table, two version rows).
func TestMigrateUpConcurrently(t *testing.T) {
	t.Parallel()
	s := newSchema(t)
	const n = 4
	pools := make([]*pgxpool.Pool, n)
	for i := range pools {
		pools[i] = s.pool(t)
	}
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			ctx := testCtx(t)
			if errs[i] = postgres.MigrateUp(ctx, pools[i], testLog(t)); errs[i] == nil {
				errs[i] = postgres.EnsureIndexes(ctx, pools[i])
			}
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	checkMigratedOnce(t, pools[0])
}

func checkMigratedOnce(t *testing.T, p *pgxpool.Pool) {
	t.Helper()
	if v, dirty, err := postgres.MigrationVersion(testCtx(t), p); v != lastMigrationFile(t) || dirty || err != nil {
		t.Fatalf("version %d dirty %v err %v", v, dirty, err)
	}
	if n := count(t, p, `SELECT count(*) FROM schema_migrations`); n != 1 {
		t.Fatalf("%d version rows", n)
	}
	if n := count(t, p, `SELECT count(*) FROM reserved_names WHERE kind = 'system'`); n != len(validFixedNames()) {
		t.Fatalf("%d system names", n)
	}
}

func validFixedNames() []string {
	var out []string
	for _, n := range domain.FixedReservedNames() {
		if norm, err := domain.NormalizeName(n); err == nil {
			out = append(out, norm)
		}
	}
	slices.Sort(out)
	return out
}

func readMigration(t *testing.T, name string) string {
	t.Helper()
	b, err := pgmigrations.FS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func count(t *testing.T, p *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := p.QueryRow(testCtx(t), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func column(t *testing.T, p *pgxpool.Pool, sql string, args ...any) []string {
	t.Helper()
	rows, err := p.Query(testCtx(t), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 && strings.Contains(sql, "WHERE id = $1") {
		t.Fatalf("%s %v: no row", sql, args)
	}
	return out
}

// downTo steps the schema down to version v (migrationtest.DownTo), and
// fails the test where it is then not at the last migration at or below v
// (versions may have gaps): a test of the migration after v starts there,
// not further down.
func downTo(t *testing.T, p *pgxpool.Pool, v uint) {
	t.Helper()
	ctx := testCtx(t)
	version := func() (uint, error) {
		got, _, err := postgres.MigrationVersion(ctx, p)
		return got, err
	}
	migrationtest.DownTo(t, v, version, func() error { return postgres.MigrateDown(ctx, p, 1, testLog(t)) })
	var want uint
	for _, m := range migrationVersions(t) {
		if m <= v {
			want = m
		}
	}
	if got, err := version(); got != want || err != nil {
		t.Fatalf("version %d (%v) after stepping down to %d, want %d", got, err, v, want)
	}
}

// migratedDownTo is where a test of the migrations after version v starts:
// a schema migrated up and stepped down to v, and the test's context.
func migratedDownTo(t *testing.T, v uint) (*pgxpool.Pool, context.Context) {
	t.Helper()
	p := migrated(t)
	downTo(t, p, v)
	return p, testCtx(t)
}

// hasTable, hasColumn, hasIndex and hasFunction say whether the test's
// schema has the table, table's column, the index, the function: what a
// migration made, or its down step failed to drop.
func hasTable(t *testing.T, p *pgxpool.Pool, table string) bool {
	t.Helper()
	return count(t, p, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1`, table) != 0
}

func hasColumn(t *testing.T, p *pgxpool.Pool, table, col string) bool {
	t.Helper()
	return count(t, p, `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`, table, col) != 0
}

func hasIndex(t *testing.T, p *pgxpool.Pool, index string) bool {
	t.Helper()
	return count(t, p, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1`, index) != 0
}

func hasFunction(t *testing.T, p *pgxpool.Pool, name string) bool {
	t.Helper()
	return count(t, p, `SELECT count(*) FROM pg_proc WHERE proname = $1 AND pronamespace = current_schema()::regnamespace`, name) != 0
}

// violates says whether err is PostgreSQL's refusal of a write that breaks
// the constraint named constraint.
func violates(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.ConstraintName == constraint
}

// insertActivity writes a job_activities row (since 015) of activity act
// by hand, and returns its id, for jobs written by hand to refer to.
func insertActivity(t *testing.T, p *pgxpool.Pool, act string) int64 {
	t.Helper()
	var id int64
	if err := p.QueryRow(testCtx(t), `INSERT INTO job_activities (key, activity_id, sender_id, key_id) VALUES ('\x01', $1, 's', 'k') RETURNING id`, act).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// A migration that fails changes nothing (it is one transaction); the
// error says how to go on, and after the fix MigrateUp finishes.
func TestFailedMigrationIsRolledBackAndExplained(t *testing.T) {
	t.Parallel()
	p := newSchema(t).pool(t)
	ctx := testCtx(t)
	mustExec(t, p, `CREATE TABLE tokens (hash text)`) // 003 will collide with it
	err := postgres.MigrateUp(ctx, p, testLog(t))
	if err == nil || !strings.Contains(err.Error(), "migration 3 failed") || !strings.Contains(err.Error(), "SET version = 2, dirty = false") {
		t.Fatalf("MigrateUp = %v", err)
	}
	if v, dirty, _ := postgres.MigrationVersion(ctx, p); v != 3 || !dirty {
		t.Fatalf("version %d dirty %v, want 3 dirty", v, dirty)
	}
	// 001 and 002 stay applied; 003 left nothing behind.
	if n := count(t, p, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename IN ('jobs', 'reserved_names')`); n != 2 {
		t.Fatalf("%d of the tables of 001 and 002", n)
	}
	if err := postgres.MigrateUp(ctx, p, testLog(t)); err == nil {
		t.Fatal("a dirty version migrated on")
	}
	mustExec(t, p, `DROP TABLE tokens`)
	mustExec(t, p, `UPDATE schema_migrations SET version = 2, dirty = false`)
	mustMigrate(t, p)
	checkMigratedOnce(t, p)
}

// 005 counts the jobs leased when it runs (an upgrade with leases in
// flight), so their slots are taken from the start and their settlements
// give back what they took.
func TestMigration005CountsLeasedJobs(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 4)
	mustExec(t, p, `
INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, run_at, created_at, lease_token, lease_until)
VALUES ($1, 'k1', 'a1', 'https://a.example/inbox', 'a.example', 's', 'k', '\x7b7d', 'leased', now(), now(), 't1', now() + interval '1 minute'),
       ($2, 'k2', 'a2', 'https://a.example/inbox', 'a.example', 's', 'k', '\x7b7d', 'leased', now(), now(), 't2', now() + interval '1 minute'),
       ($3, 'k3', 'a3', 'https://b.example/inbox', 'b.example', 's', 'k', '\x7b7d', 'queued', now(), now(), '', NULL)`,
		contract.JobID("l1"), contract.JobID("l2"), contract.JobID("q1"))
	mustMigrate(t, p)
	// b.example's row is 026's: its queued job makes it a ready host.
	if got := column(t, p, `SELECT host || ':' || in_flight FROM host_slots ORDER BY host`); !slices.Equal(got, []string{"a.example:2", "b.example:0"}) {
		t.Fatalf("host_slots after 005: %v, want a.example:2 (and b.example:0)", got)
	}
	store := postgres.NewJobStore(p)
	if err := settleOne(ctx, store, ports.Settlement{ID: contract.JobID("l1"), Token: "t1", State: domain.JobSucceeded, Attempts: 1, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := column(t, p, `SELECT in_flight::text FROM host_slots WHERE host = 'a.example'`); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("after a settlement: %v", got)
	}
	downTo(t, p, 4)
	if hasTable(t, p, "host_slots") {
		t.Fatal("005 down left host_slots")
	}
}

// migrationVersions are the versions of the embedded migration files, in
// order. Versions may have gaps (numbers are handed out to branches ahead).
func migrationVersions(t *testing.T) []uint {
	t.Helper()
	names, err := fs.Glob(pgmigrations.FS, "*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out []uint
	for _, n := range names {
		v, err := strconv.ParseUint(n[:3], 10, 32)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out = append(out, uint(v))
	}
	slices.Sort(out)
	return out
}

// lastMigrationFile is the version a fully migrated schema is at.
func lastMigrationFile(t *testing.T) uint {
	vs := migrationVersions(t)
	return vs[len(vs)-1]
}

// Migration 009 moves each job's payload into bodies, once per distinct
// body under its content address (sha256() agrees with domain.BodyOf),
// and its down step puts every payload back.
func TestMigration009StoresEachBodyOnce(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 8)
	shared, own := `{"id":"https://l.example/a/1","type":"Create"}`, `{"id":"https://l.example/a/2","type":"Follow"}`
	for _, r := range [][2]string{{"j1", shared}, {"j2", shared}, {"j3", own}} {
		mustExec(t, p, `INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, run_at, created_at)
			VALUES ($1, 'k' || $1, 'a', 'https://h.example/inbox', 'h.example', 's', 'k', $2, 'queued', now(), now())`, contract.JobID(r[0]), []byte(r[1]))
	}
	mustMigrate(t, p)
	want := []string{domain.BodyOf([]byte(shared)), domain.BodyOf([]byte(own))}
	slices.Sort(want)
	if got := column(t, p, `SELECT id FROM bodies ORDER BY id`); !slices.Equal(got, want) {
		t.Fatalf("bodies %v, want %v", got, want)
	}
	s := postgres.NewJobStore(p)
	for id, body := range map[string]string{"j1": shared, "j2": shared, "j3": own} {
		j, err := s.Get(ctx, contract.JobID(id))
		if err != nil || string(j.Payload) != body || j.BodyID != domain.BodyOf([]byte(body)) {
			t.Fatalf("%s after 009: body %q payload %q (%v)", id, j.BodyID, j.Payload, err)
		}
	}
	downTo(t, p, 8)
	if got := column(t, p, `SELECT `+sqlJobName("id::uuid")+` || '=' || convert_from(payload, 'UTF8') FROM jobs ORDER BY id`); !slices.Equal(got, []string{"j1=" + shared, "j2=" + shared, "j3=" + own}) {
		t.Fatalf("payloads after 009 down: %v", got)
	}
	if hasTable(t, p, "bodies") {
		t.Fatal("009 down left bodies")
	}
}

// Migration 010 makes fan_outs and its down step drops it, leaving the
// jobs a fan-out enqueued.
func TestMigration010FanOuts(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	f, err := domain.NewFanOut("https://l.example/a/1", "https://l.example/u/alice", "s", "k", []byte(`{"id":"a"}`), 3, "p1", time.Now(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.NewFanOutStore(p).Create(ctx, f); err != nil {
		t.Fatal(err)
	}
	insertJobRow(t, p, jobRow{id: contract.JobID("j1"), key: contract.JobID("k1"), inboxRef: "https://h.example/inbox", host: "h.example", state: "queued", at: time.Now()})
	downTo(t, p, 9)
	if hasTable(t, p, "fan_outs") {
		t.Fatal("010 down left fan_outs")
	}
	if n := count(t, p, `SELECT count(*) FROM jobs`); n != 1 {
		t.Fatalf("010 down left %d jobs, want 1", n)
	}
	mustMigrate(t, p)
	if n := count(t, p, `SELECT count(*) FROM fan_outs`); n != 0 {
		t.Fatalf("fan_outs after 010 up again: %d rows", n)
	}
}

// Migration 015 moves what a fan-out's jobs share into job_activities, one
// row per distinct activity, under the key the adapter computes (a job
// enqueued after the migration finds the migrated row, even with a
// non-ASCII URL), and keeps each dedupe key as its bytes (a key that was
// not hex as the hash of its text). Its down step puts every field back.
func TestMigration015NarrowsJobs(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 14)
	body := []byte(`{"id":"https://l.example/a/é1","type":"Create"}`)
	bodyID := domain.BodyOf(body)
	mustExec(t, p, `INSERT INTO bodies (id, body) VALUES ($1, $2)`, bodyID, body)
	shared := []string{"https://l.example/a/é1", "s-1", "https://l.example/u/alice#main-key", bodyID}
	own := []string{"https://l.example/a/2", "s-2", "https://l.example/u/bob#main-key", ""}
	rows := []struct {
		id, key string
		act     []string
	}{
		{"j1", domain.DedupeKey(shared[0], "https://h.example/1/inbox"), shared},
		{"j2", domain.DedupeKey(shared[0], "https://h.example/2/inbox"), shared},
		{"j3", "legacy-key", own},
	}
	for i, r := range rows {
		mustExec(t, p, `INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, run_at, created_at)
			VALUES ($1, $2, $3, $4, 'h.example', $5, $6, $7, 'queued', now(), now())`,
			contract.JobID(r.id), r.key, r.act[0], fmt.Sprintf("https://h.example/%d/inbox", i+1), r.act[1], r.act[2], r.act[3])
	}
	mustMigrate(t, p)
	if n := count(t, p, `SELECT count(*) FROM job_activities`); n != 2 {
		t.Fatalf("%d job_activities after 015, want 2", n)
	}
	s := postgres.NewJobStore(p)
	legacy := sha256.Sum256([]byte("legacy-key"))
	for i, r := range rows {
		want := r.key
		if r.id == "j3" {
			want = hex.EncodeToString(legacy[:])
		}
		j, err := s.Get(ctx, contract.JobID(r.id))
		if err != nil || j.DedupeKey != want || j.ActivityID != r.act[0] || j.SenderID != r.act[1] || j.KeyID != r.act[2] ||
			j.BodyID != r.act[3] || j.Inbox != fmt.Sprintf("https://h.example/%d/inbox", i+1) {
			t.Fatalf("%s after 015: %+v (%v)", r.id, j, err)
		}
		if r.act[3] != "" && string(j.Payload) != string(body) {
			t.Fatalf("%s after 015: payload %q", r.id, j.Payload)
		}
	}
	j4, err := domain.NewJob(contract.JobID("j4"), shared[0], "https://h.example/4/inbox", shared[1], shared[2], body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	j4.BodyID = bodyID
	if n, err := s.Enqueue(ctx, []domain.Job{j4}); err != nil || n != 1 {
		t.Fatalf("enqueue after 015: %d %v", n, err)
	}
	if n := count(t, p, `SELECT count(*) FROM job_activities`); n != 2 {
		t.Fatalf("%d job_activities after an enqueue of the same activity, want 2 (the adapter's key differs from 015's)", n)
	}
	downTo(t, p, 14)
	got := column(t, p, `SELECT concat_ws('|', `+sqlJobName("id::uuid")+`, dedupe_key, activity_id, sender_id, key_id, body_id) FROM jobs ORDER BY id`)
	want := []string{
		strings.Join(append([]string{"j1", rows[0].key}, shared...), "|"),
		strings.Join(append([]string{"j2", rows[1].key}, shared...), "|"),
		strings.Join(append([]string{"j3", hex.EncodeToString(legacy[:])}, own...), "|"),
		strings.Join(append([]string{"j4", j4.DedupeKey}, shared...), "|"),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("jobs after 015 down:\n%v\nwant\n%v", got, want)
	}
	if hasTable(t, p, "job_activities") {
		t.Fatal("015 down left job_activities")
	}
}

// Migration 016 keeps 16 bytes of each dedupe key in the unique column, and
// the whole key in dedupe_full only where it is not the one derived from
// the job's activity id and inbox: a key given by a caller, or one whose
// activity row is missing (nothing to derive it from). Jobs read back with
// their whole keys, a job enqueued again with a migrated key is skipped,
// and the down step puts the 32 bytes back.
func TestMigration016ShortensDedupeKeys(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 15)
	act := "https://l.example/a/é1"
	actID := insertActivity(t, p, act)
	inbox := func(i int) string { return fmt.Sprintf("https://h.example/%d/inbox", i) }
	rows := []struct {
		id       string
		activity int64
		key      string
		keptFull bool
	}{
		{"derived", actID, domain.DedupeKey(act, inbox(0)), false},
		{"given", actID, domain.DedupeKey("https://l.example/a/other", inbox(9)), true},
		{"orphan", actID + 1000, domain.DedupeKey("https://l.example/a/gone", inbox(2)), true},
	}
	for i, r := range rows {
		key, _ := domain.DedupeKeyBytes(r.key)
		mustExec(t, p, `INSERT INTO jobs (id, dedupe_key, activity, inbox, host, state, run_at, created_at)
			VALUES ($1, $2, $3, $4, 'h.example', 'queued', now(), now())`, contract.JobID(r.id), key, r.activity, inbox(i))
	}
	mustMigrate(t, p)
	downTo(t, p, 16) // the columns as 016 left them (018 makes uuids of them)
	var kept []string
	for _, r := range rows {
		kept = append(kept, fmt.Sprintf("%s:16:%t", r.id, r.keptFull))
	}
	if got := column(t, p, `SELECT `+sqlJobName("id::uuid")+` || ':' || octet_length(dedupe_key) || ':' || (dedupe_full IS NOT NULL) FROM jobs ORDER BY id`); !slices.Equal(got, kept) {
		t.Fatalf("after 016: %v, want %v", got, kept)
	}
	// A process of an older version writes 32-byte keys: refused.
	_, err := p.Exec(ctx, `INSERT INTO jobs (id, dedupe_key, activity, inbox, host, state, run_at, created_at)
		VALUES ($3, $1, $2, 'https://h.example/inbox', 'h.example', 'queued', now(), now())`, make([]byte, 32), actID, contract.JobID("long"))
	if !violates(err, "jobs_dedupe_key_length") {
		t.Fatalf("a 32-byte key after 016: %v, want a violation of jobs_dedupe_key_length", err)
	}
	mustMigrate(t, p)
	s := postgres.NewJobStore(p)
	for _, r := range rows {
		if j, err := s.Get(ctx, contract.JobID(r.id)); err != nil || j.DedupeKey != r.key {
			t.Errorf("%s after 016: dedupe key %q (%v), want %q", r.id, j.DedupeKey, err, r.key)
		}
	}
	again, err := domain.NewJob(contract.JobID("again"), act, inbox(0), "s", "k", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	clash, err := domain.NewJob(contract.JobID("clash"), act, inbox(5), "s", "k", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	clash.DedupeKey = rows[1].key
	if n, err := s.Enqueue(ctx, []domain.Job{again, clash}); err != nil || n != 0 {
		t.Fatalf("enqueue of two migrated keys after 016: %d inserted (%v), want 0", n, err)
	}
	downTo(t, p, 15)
	var want []string
	for _, r := range rows {
		want = append(want, r.id+":"+r.key)
	}
	if got := column(t, p, `SELECT `+sqlJobName("id::uuid")+` || ':' || encode(dedupe_key, 'hex') FROM jobs ORDER BY id`); !slices.Equal(got, want) {
		t.Fatalf("after 016 down: %v, want %v", got, want)
	}
}

// Migration 017 keeps an inbox as its path where it is https:// and the
// job's host, the whole URL otherwise; reads, herald_inbox and the down
// step all give the whole URL back, and jobs enqueued after it are kept
// the same way.
func TestMigration017InboxRefs(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 16)
	rows := []struct{ id, inbox, host, ref string }{
		{"path", "https://h.example/users/a/inbox", "h.example", "/users/a/inbox"},
		{"port", "https://h.example:8443/inbox", "h.example:8443", "/inbox"},
		{"http", "http://h.example/inbox", "h.example", "http://h.example/inbox"},
		{"upper", "https://H.example/inbox", "h.example", "https://H.example/inbox"},
		{"no-path", "https://h.example?inbox", "h.example", "https://h.example?inbox"},
		{"other-host", "https://h.example.evil/inbox", "h.example", "https://h.example.evil/inbox"},
	}
	for i, r := range rows {
		mustExec(t, p, `INSERT INTO jobs (id, dedupe_key, activity, inbox, host, state, run_at, created_at)
			VALUES ($1, $2, 0, $3, $4, 'queued', now(), now())`, contract.JobID(r.id), bytes.Repeat([]byte{byte(i)}, 16), r.inbox, r.host)
	}
	mustMigrate(t, p)
	var want, wantInboxes []string
	for _, r := range rows {
		want = append(want, r.id+" "+r.ref)
		wantInboxes = append(wantInboxes, r.id+" "+r.inbox)
	}
	slices.Sort(want)
	slices.Sort(wantInboxes)
	if got := column(t, p, `SELECT `+sqlJobName("id::uuid")+` || ' ' || inbox_ref FROM jobs ORDER BY 1`); !slices.Equal(got, want) {
		t.Fatalf("inbox_ref after 017:\n%v\nwant\n%v", got, want)
	}
	if got := column(t, p, `SELECT `+sqlJobName("id::uuid")+` || ' ' || herald_inbox(inbox_ref, host) FROM jobs ORDER BY 1`); !slices.Equal(got, wantInboxes) {
		t.Fatalf("herald_inbox after 017:\n%v\nwant\n%v", got, wantInboxes)
	}
	s := postgres.NewJobStore(p)
	for _, r := range rows {
		if j, err := s.Get(ctx, contract.JobID(r.id)); err != nil || j.Inbox != r.inbox || j.Host != r.host {
			t.Errorf("%s after 017: inbox %q host %q (%v), want %q", r.id, j.Inbox, j.Host, err, r.inbox)
		}
	}
	fresh, err := domain.NewJob(contract.JobID("fresh"), "https://l.example/a/1", "https://r.example/users/b/inbox", "s", "k", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Enqueue(ctx, []domain.Job{fresh}); err != nil || n != 1 {
		t.Fatalf("enqueue after 017: %d %v", n, err)
	}
	if got := column(t, p, `SELECT inbox_ref FROM jobs WHERE id = $1`, fresh.ID); !slices.Equal(got, []string{"/users/b/inbox"}) {
		t.Fatalf("a job enqueued after 017 keeps %v, want its path", got)
	}
	if j, err := s.Get(ctx, fresh.ID); err != nil || j.Inbox != fresh.Inbox || j.DedupeKey != fresh.DedupeKey {
		t.Fatalf("fresh read back: inbox %q key %q (%v)", j.Inbox, j.DedupeKey, err)
	}
	downTo(t, p, 16)
	wantInboxes = append(wantInboxes, "fresh "+fresh.Inbox)
	slices.Sort(wantInboxes)
	if got := column(t, p, `SELECT `+sqlJobName("id::uuid")+` || ' ' || inbox FROM jobs ORDER BY 1`); !slices.Equal(got, wantInboxes) {
		t.Fatalf("after 017 down:\n%v\nwant\n%v", got, wantInboxes)
	}
}

// 011 adds the boosts table; its down drops it and keeps the posts.
func TestMigration011Boosts(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	s := postgres.NewContentStore(p)
	post := domain.Post{ID: "p1", ObjectURI: "https://r.example/n/1", AuthorURI: "https://r.example/u/a", Content: "x", Visibility: "public", Published: time.Now()}
	if _, err := s.CreatePost(ctx, post); err != nil {
		t.Fatal(err)
	}
	b, _ := domain.NewBoost("https://r.example/a/1", "https://r.example/u/b", post.ObjectURI, time.Now())
	if created, err := s.AddBoost(ctx, b); err != nil || !created {
		t.Fatalf("boost after 011: %v %v", created, err)
	}
	downTo(t, p, 10)
	if hasTable(t, p, "boosts") {
		t.Fatal("011 down left boosts")
	}
	if n := count(t, p, `SELECT count(*) FROM posts`); n != 1 {
		t.Fatalf("011 down lost posts: %d", n)
	}
	mustMigrate(t, p)
	if bs, err := s.BoostsBy(ctx, b.ActorURI, time.Time{}, 10); err != nil || len(bs) != 0 {
		t.Fatalf("boosts after 011 again: %v %v", bs, err)
	}
	if created, err := s.AddBoost(ctx, b); err != nil || !created {
		t.Fatalf("boost after 011 again: %v %v", created, err)
	}
}

// Migration 018 keeps each job id and dedupe key as a uuid: a UUID id as
// itself (one in upper case in lower case, the form the domain takes), any
// other as the UUID of its MD5; the dedupe key's 16 bytes unchanged, so
// the jobs read back whole and dedupe as before. The lease function of the
// text ids goes. The down step gives text ids and bytea keys back.
func TestMigration018UUIDJobIDs(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 17)
	act := "https://l.example/a/1"
	actID := insertActivity(t, p, act)
	inbox := func(i int) string { return fmt.Sprintf("https://h.example/%d/inbox", i) }
	rows := []struct{ id, after string }{
		{"0190f2a4-7b1c-7d2e-8f3a-4b5c6d7e8f90", "0190f2a4-7b1c-7d2e-8f3a-4b5c6d7e8f90"},
		{"0190F2A4-7B1C-7D2E-8F3A-4B5C6D7E8F91", "0190f2a4-7b1c-7d2e-8f3a-4b5c6d7e8f91"},
		{"hand-made", ""}, // the UUID of its MD5, computed below
	}
	sum := md5.Sum([]byte("hand-made"))
	h := hex.EncodeToString(sum[:])
	rows[2].after = h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	var keys []string
	for i, r := range rows {
		key := domain.DedupeKey(act, inbox(i))
		keys = append(keys, key)
		b, _ := domain.DedupeKeyBytes(key)
		mustExec(t, p, `INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at)
			VALUES ($1, $2, $3, $4, 'h.example', 'queued', now(), now())`, r.id, b[:16], actID, fmt.Sprintf("/%d/inbox", i))
	}
	mustExec(t, p, `CREATE FUNCTION herald_lease_v5(text, text, timestamptz, timestamptz, text[], integer, integer, integer)
		RETURNS integer LANGUAGE sql AS 'SELECT 1'`) // as EnsureIndexes of 017's version made it
	mustMigrate(t, p)
	if got := column(t, p, `SELECT pg_typeof(id)::text || ' ' || pg_typeof(dedupe_key)::text FROM jobs LIMIT 1`); !slices.Equal(got, []string{"uuid uuid"}) {
		t.Fatalf("column types after 018: %v", got)
	}
	if hasFunction(t, p, "herald_lease_v5") {
		t.Fatal("018 left the lease function of text ids")
	}
	s := postgres.NewJobStore(p)
	for i, r := range rows {
		j, err := s.Get(ctx, r.after)
		if err != nil || j.ID != r.after || j.DedupeKey != keys[i] || j.Inbox != inbox(i) || j.ActivityID != act {
			t.Fatalf("%s after 018 as %s: %+v (%v)", r.id, r.after, j, err)
		}
	}
	// Their keys still dedupe; a new job goes in beside them.
	var again []domain.Job
	for i := range 4 {
		j, err := domain.NewJob(contract.JobID(fmt.Sprintf("new%d", i)), act, inbox(i), "s", "k", []byte(`{}`), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, j)
	}
	if n, err := s.Enqueue(ctx, again); err != nil || n != 1 {
		t.Fatalf("enqueue of three migrated keys and a new one after 018: %d inserted (%v), want 1", n, err)
	}
	downTo(t, p, 17)
	want := []string{rows[0].after, rows[1].after, again[3].ID, rows[2].after}
	slices.Sort(want)
	got := column(t, p, `SELECT id FROM jobs ORDER BY id`)
	if !slices.Equal(got, want) {
		t.Fatalf("ids after 018 down: %v, want %v", got, want)
	}
	if got := column(t, p, `SELECT DISTINCT pg_typeof(id)::text || ' ' || pg_typeof(dedupe_key)::text || ' ' || octet_length(dedupe_key) FROM jobs`); !slices.Equal(got, []string{"text bytea 16"}) {
		t.Fatalf("columns after 018 down: %v", got)
	}
	_, err := p.Exec(ctx, `INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at)
		VALUES ('x', $1, $2, '/inbox', 'h.example', 'queued', now(), now())`, make([]byte, 32), actID)
	if !violates(err, "jobs_dedupe_key_length") {
		t.Fatalf("a 32-byte key after 018 down: %v, want a violation of jobs_dedupe_key_length", err)
	}
}

// Migration 019 drops jobs.seq and keeps NULL for an empty lease owner,
// lease token and last error: each job reads back as before, a leased one
// still settles with its token, and ” no longer goes in. The lease
// function that returned seq goes. The down step numbers the jobs in
// seq again, in their physical order, and gives ” back.
func TestMigration019LeanQueue(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 18)
	act := "https://l.example/a/1"
	actID := insertActivity(t, p, act)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rows := []struct {
		name, state, owner, token, lastError string
	}{
		{"queued", "queued", "", "", ""},
		{"leased", "leased", "w1", "tok", ""},
		{"retried", "queued", "", "", "HTTP 503"},
		{"dead", "dead", "", "", "HTTP 410"},
	}
	for i, r := range rows {
		key, _ := domain.DedupeKeyBytes(domain.DedupeKey(act, fmt.Sprintf("https://h.example/%d/inbox", i)))
		mustExec(t, p, `INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at, lease_owner, lease_token, lease_until, last_error, finished_at)
			VALUES ($1, encode($2, 'hex')::uuid, $3, $4, 'h.example', $5::text, $6::timestamptz, $6, $7, $8,
				CASE WHEN $5 = 'leased' THEN $6 + interval '1 minute' END, $9, CASE WHEN $5 = 'dead' THEN $6 END)`,
			contract.JobID(r.name), key[:16], actID, fmt.Sprintf("/%d/inbox", i), r.state, at, r.owner, r.token, r.lastError)
	}
	mustExec(t, p, `CREATE FUNCTION herald_lease_v6(text, text, timestamptz, timestamptz, text[], integer, integer, integer)
		RETURNS integer LANGUAGE sql AS 'SELECT 1'`) // as EnsureIndexes of 018's version made it
	mustMigrate(t, p)
	if hasColumn(t, p, "jobs", "seq") {
		t.Fatal("jobs.seq after 019")
	}
	if hasFunction(t, p, "herald_lease_v6") {
		t.Fatal("019 left the lease function that returned seq")
	}
	if n := count(t, p, `SELECT count(*) FROM jobs WHERE lease_owner = '' OR lease_token = '' OR last_error = ''`); n != 0 {
		t.Fatalf("%d jobs keep '' after 019", n)
	}
	s := postgres.NewJobStore(p)
	for _, r := range rows {
		j, err := s.Get(ctx, contract.JobID(r.name))
		if err != nil || string(j.State) != r.state || j.LeaseOwner != r.owner || j.LeaseToken != r.token || j.LastError != r.lastError || j.ActivityID != act {
			t.Fatalf("%s after 019: %+v (%v)", r.name, j, err)
		}
	}
	lost, err := s.Settle(ctx, []ports.Settlement{{ID: contract.JobID("leased"), Token: "tok", State: domain.JobSucceeded, Attempts: 1, FinishedAt: at}})
	if err != nil || lost[0] != nil {
		t.Fatalf("settle of the leased job after 019: %v %v", lost, err)
	}
	_, err = p.Exec(ctx, `UPDATE jobs SET last_error = '' WHERE id = $1`, contract.JobID("queued"))
	if !violates(err, "jobs_empty_check") {
		t.Fatalf("'' as a last error after 019: %v, want a violation of jobs_empty_check", err)
	}
	_, err = p.Exec(ctx, `UPDATE jobs SET state = 'leased', lease_until = now() WHERE id = $1`, contract.JobID("queued"))
	if !violates(err, "jobs_lease_check") {
		t.Fatalf("a leased job without a token after 019: %v, want a violation of jobs_lease_check", err)
	}

	downTo(t, p, 18)
	// contract.JobID keeps the names' order: dead, leased, queued, retried.
	got := column(t, p, `SELECT state || ' ' || lease_owner || '|' || lease_token || '|' || last_error FROM jobs ORDER BY id`)
	want := []string{"dead ||HTTP 410", "succeeded ||", "queued ||", "queued ||HTTP 503"}
	if !slices.Equal(got, want) {
		t.Fatalf("jobs after 019 down: %q, want %q", got, want)
	}
	if got := column(t, p, `SELECT string_agg(seq::text, ' ' ORDER BY seq) FROM jobs`); !slices.Equal(got, []string{"1 2 3 4"}) {
		t.Fatalf("seq after 019 down: %v, want 1 2 3 4", got)
	}
	if n := count(t, p, `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'jobs'
		AND column_name IN ('lease_owner', 'lease_token', 'last_error') AND is_nullable = 'NO' AND column_default IS NOT NULL`); n != 3 {
		t.Fatalf("%d of the lease and error columns NOT NULL DEFAULT '' after 019 down, want 3", n)
	}
	mustMigrate(t, p)
}

// Migration 020 cleans a cache that violates one owner per key id
// (migrationtest.KeyOwnerCache) and makes the key id unique, an index
// ByKeyID's generic plan can use, and makes tombstones; its down step
// puts the plain index back, which lets a key id be claimed twice again,
// and drops the tombstones.
func TestMigration020OneOwnerPerKeyIDAndTombstones(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 19)
	for _, a := range migrationtest.KeyOwnerCache {
		mustExec(t, p, `INSERT INTO foreign_avatars (actor_uri, public_key_id, inbox, fetched_at) VALUES ($1, $2, $1 || '/inbox', $3)`,
			a.ActorURI, a.KeyID, t0.Add(a.FetchedAt))
	}
	mustMigrate(t, p)
	want := migrationtest.KeptActors()
	slices.Sort(want)
	if got := column(t, p, `SELECT actor_uri FROM foreign_avatars ORDER BY actor_uri COLLATE "C"`); !slices.Equal(got, want) {
		t.Fatalf("kept\n %q\nwant\n %q", got, want)
	}
	s := postgres.NewContentStore(p)
	if f, err := s.ByKeyID(ctx, "https://r.example/users/bob#main-key"); err != nil || f.ActorURI != "https://r.example/users/bob" {
		t.Fatalf("bob's key answers %+v %v", f, err)
	}
	if err := s.Upsert(ctx, domain.ForeignAvatar{ActorURI: "https://r.example/users/eve", PublicKeyID: "https://r.example/users/bob#main-key"}); !errors.Is(err, domain.ErrAlreadyExists) {
		t.Fatalf("a second claim after 020: %v, want ErrAlreadyExists", err)
	}
	tomb, _ := domain.NewTombstone("https://r.example/notes/1", "https://r.example/users/bob", t0)
	if err := s.AddTombstone(ctx, tomb); err != nil {
		t.Fatalf("a tombstone after 020: %v", err)
	}
	keyIndexes := func() []string {
		t.Helper()
		return column(t, p, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'foreign_avatars' AND indexname LIKE '%public_key_id%'`)
	}
	if got := keyIndexes(); !slices.Equal(got, []string{"foreign_avatars_public_key_id_key"}) {
		t.Fatalf("key id indexes after 020: %v", got)
	}
	// The generic plan (the one a prepared statement settles on) can use
	// the partial index: the query states its predicate.
	var raw []byte
	err := pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
		for _, q := range []string{`SET LOCAL plan_cache_mode = force_generic_plan`, `SET LOCAL enable_seqscan = off`,
			`PREPARE by_key (text) AS ` + postgres.ByKeyIDSQL} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE by_key ('k')`).Scan(&raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	var plan []struct{ Plan planNode }
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	usesKey := false
	plan[0].Plan.walk(func(n planNode) { usesKey = usesKey || n.IndexName == "foreign_avatars_public_key_id_key" })
	if !usesKey {
		t.Fatalf("ByKeyID's generic plan does not use foreign_avatars_public_key_id_key: %s", raw)
	}

	downTo(t, p, 19)
	if got := keyIndexes(); !slices.Equal(got, []string{"foreign_avatars_public_key_id_idx"}) {
		t.Fatalf("key id indexes after 020 down: %v", got)
	}
	if hasTable(t, p, "tombstones") {
		t.Fatal("020 down left tombstones")
	}
	mustExec(t, p, `INSERT INTO foreign_avatars (actor_uri, public_key_id, fetched_at) VALUES ('https://r.example/users/bob2', 'https://r.example/users/bob#main-key', $1)`, t0.Add(time.Hour))
	mustMigrate(t, p)
	if f, err := s.ByKeyID(ctx, "https://r.example/users/bob#main-key"); err != nil || f.ActorURI != "https://r.example/users/bob2" {
		t.Fatalf("after 020 again, the newer copy answers: %+v %v", f, err)
	}
	if _, err := s.Tombstoned(ctx, tomb.URI); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a tombstone after 020 down and up: %v, want ErrNotFound", err)
	}
	// EnsureIndexes retires the plain index where an earlier version's
	// start made it again, and makes the unique one where it is missing.
	mustExec(t, p, `CREATE INDEX foreign_avatars_public_key_id_idx ON foreign_avatars (public_key_id)`)
	mustExec(t, p, `DROP INDEX foreign_avatars_public_key_id_key`)
	for range 2 {
		if err := postgres.EnsureIndexes(ctx, p); err != nil {
			t.Fatal(err)
		}
		if got := keyIndexes(); !slices.Equal(got, []string{"foreign_avatars_public_key_id_key"}) {
			t.Fatalf("key id indexes after EnsureIndexes: %v", got)
		}
	}
}

// Migration 021 gives every account a status: the accounts stored before
// are active, a status that is not one is refused. It makes the tables of
// the domain blocks and allows and of the reports. Its down step drops the
// columns and the index EnsureIndexes made, and the tables: an account is
// then only an account, and active again when 021 runs once more.
func TestMigration021Moderation(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 20)
	mustExec(t, p, `INSERT INTO root_users (id, user_name, password_hash, created_at) VALUES ('u1', 'old', '$2a$h', $1)`, t0)
	mustMigrate(t, p)
	s := postgres.NewAccountStore(p)
	if u, err := s.UserByID(ctx, "u1"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("an account stored before 021: %+v %v, want active", u, err)
	}
	if us, err := s.UsersByStatus(ctx, domain.UserActive, 0); err != nil || len(us) != 1 || us[0].ID != "u1" {
		t.Fatalf("active accounts after 021: %+v %v", us, err)
	}
	if _, err := p.Exec(ctx, `UPDATE root_users SET status = 'banned' WHERE id = 'u1'`); err == nil {
		t.Fatal("a status that is not one was stored")
	}
	if err := s.CreateUser(ctx, domain.RootUser{ID: "u2", UserName: "new", PasswordHash: "$2a$h", CreatedAt: t0, Status: domain.UserPending, Reason: "hi"}); err != nil {
		t.Fatal(err)
	}
	b, _ := domain.NewDomainBlock("spam.example", domain.SeveritySuspend, "spam", t0)
	if err := postgres.NewModerationStore(p).AddDomainBlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	r, _ := domain.NewReport("r1", "https://r.example/flags/1", "https://r.example/actor", []string{"https://h.example/users/a"}, nil, "", t0)
	if _, err := postgres.NewReportStore(p).AddReport(ctx, r); err != nil {
		t.Fatal(err)
	}

	downTo(t, p, 20)
	for _, table := range []string{"domain_blocks", "domain_allows", "reports"} {
		if hasTable(t, p, table) {
			t.Fatalf("021 down left %s", table)
		}
	}
	cols := column(t, p, `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'root_users' ORDER BY ordinal_position`)
	if !slices.Equal(cols, []string{"id", "user_name", "password_hash", "created_at"}) {
		t.Fatalf("root_users after 021 down: %v", cols)
	}
	if hasIndex(t, p, "root_users_status_created_idx") {
		t.Fatal("021 down left root_users_status_created_idx")
	}
	mustMigrate(t, p)
	if u, err := s.UserByID(ctx, "u2"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("a pending sign-up after 021 down and up: %+v %v (down cannot keep what the older build does not know)", u, err)
	}
	if got, err := postgres.NewModerationStore(p).DomainBlocks(ctx); err != nil || len(got) != 0 {
		t.Fatalf("blocks after 021 down and up: %+v %v", got, err)
	}
}

// Migration 022 marks deleted personas (avatars_retired_idx lists the
// deletions still to finish). Its down step drops the marks and the
// index: a persona still being deleted comes back live (an older build
// knows no deletion).
func TestMigration022DeletedPersonas(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	actors, names := postgres.NewAccountStore(p), postgres.NewNameRegistry(p)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	rn, _ := domain.NewReservedName("vera", domain.NameKindPersona, "a1", t0)
	if err := names.Reserve(ctx, rn); err != nil {
		t.Fatal(err)
	}
	if err := actors.RetireAvatar(ctx, "a1", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := names.MarkDeleted(ctx, "vera", "a1", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !hasIndex(t, p, "avatars_retired_idx") {
		t.Fatal("no avatars_retired_idx after 022")
	}

	downTo(t, p, 21)
	for _, table := range []string{"avatars", "reserved_names"} {
		if hasColumn(t, p, table, "deleted_at") {
			t.Fatalf("022 down left %s.deleted_at", table)
		}
	}
	if hasIndex(t, p, "avatars_retired_idx") {
		t.Fatal("022 down left avatars_retired_idx")
	}
	mustMigrate(t, p)
	if a, err := actors.AvatarByName(ctx, "vera"); err != nil || !a.DeletedAt.IsZero() {
		t.Fatalf("vera after 022 down and up: %+v %v", a, err)
	}
	if r, err := names.Get(ctx, "vera"); err != nil || r.Deleted() {
		t.Fatalf("vera's name after 022 down and up: %+v %v", r, err)
	}
}

// Migration 023 makes actor_blocks, unique by (actor, target, kind); its
// down step drops it, and an up again makes it empty.
func TestMigration023ActorBlocks(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	s := postgres.NewBlockStore(p)
	b, _ := domain.NewActorBlock("https://h.example/users/a", "https://r.example/u/b", domain.BlockKindBlock, "https://h.example/users/a/activities/1", t0)
	if _, err := s.AddBlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, `INSERT INTO actor_blocks (actor_uri, target_uri, kind, created_at) VALUES ('a', 'b', 'ignore', now())`); err == nil {
		t.Fatal("a kind that is not one was stored")
	}
	downTo(t, p, 22)
	if hasTable(t, p, "actor_blocks") {
		t.Fatal("023 down left actor_blocks")
	}
	mustMigrate(t, p)
	if got, err := s.Between(ctx, b.ActorURI, b.TargetURI); err != nil || len(got) != 0 {
		t.Fatalf("blocks after 023 down and up: %+v %v", got, err)
	}
}

// 026 fills each host's ready_at from the queued jobs already there (their
// oldest run_at; none for a host without queued jobs; a host's first row
// counts its leased jobs, as 005 did), so a lease finds them after the
// upgrade; its down step drops the column.
func TestMigration026ReadyHosts(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 24)
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rows := []struct {
		name, host, state string
		runAt             time.Time
	}{
		{"a2", "a.example", "queued", at.Add(2 * time.Second)},
		{"a1", "a.example", "queued", at.Add(time.Second)},
		{"a-leased", "a.example", "leased", at},
		{"b-dead", "b.example", "dead", at},
		{"c1", "c.example", "queued", at},
	}
	for i, r := range rows {
		insertJobRow(t, p, jobRow{id: contract.JobID(r.name), key: contract.JobID(fmt.Sprint("k", i)), activity: 1, inboxRef: "/inbox",
			host: r.host, state: r.state, at: r.runAt})
	}
	mustMigrate(t, p)
	got := column(t, p, `SELECT host || ' ' || in_flight || ' ' || COALESCE(to_char(ready_at AT TIME ZONE 'UTC', 'HH24:MI:SS'), '-') FROM host_slots ORDER BY host`)
	if want := []string{"a.example 1 12:00:01", "c.example 0 12:00:00"}; !slices.Equal(got, want) {
		t.Fatalf("host_slots after 026: %v, want %v", got, want)
	}
	s := postgres.NewJobStore(p)
	leased, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t", Now: at.Add(time.Minute), Until: at.Add(2 * time.Minute), Limit: 10, PerHost: 2})
	if err != nil || len(leased) != 2 || contract.JobName(leased[0].ID) != "c1" || contract.JobName(leased[1].ID) != "a1" {
		t.Fatalf("leased after 026: %v, %v; want c1 and a1 (a.example has one slot left)", leased, err)
	}
	downTo(t, p, 24)
	if hasColumn(t, p, "host_slots", "ready_at") {
		t.Fatal("host_slots.ready_at after 026's down")
	}
}

// 028 counts the jobs already there by state and host (job_counts), its
// triggers count every write after it, and its down step drops the table,
// the triggers and their functions, leaving the jobs (and their writes)
// alone.
func TestMigration028JobCounts(t *testing.T) {
	t.Parallel()
	p, ctx := migratedDownTo(t, 27)
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rows := []struct{ name, host, state string }{
		{"a1", "a.example", "queued"},
		{"a2", "a.example", "queued"},
		{"a-leased", "a.example", "leased"},
		{"b-dead", "b.example", "dead"},
		{"b-done", "b.example", "succeeded"},
		{"c1", "c.example", "queued"},
	}
	insert := func() {
		t.Helper()
		for i, r := range rows {
			insertJobRow(t, p, jobRow{id: contract.JobID(r.name), key: contract.JobID(fmt.Sprint("k", i)), activity: 1, inboxRef: "/inbox",
				host: r.host, state: r.state, at: at})
		}
	}
	insert()
	// What the store keeps beside them (migrations 005, 026).
	mustExec(t, p, `INSERT INTO host_slots (host, in_flight, ready_at) VALUES ('a.example', 1, $1), ('c.example', 0, $1)`, at)
	mustMigrate(t, p)
	byStateAndHost := func() []string {
		t.Helper()
		return column(t, p, `SELECT state || ' ' || host || ' ' || sum(n) FROM job_counts GROUP BY state, host HAVING sum(n) <> 0 ORDER BY state, host`)
	}
	want := []string{"dead b.example 1", "leased a.example 1", "queued a.example 2", "queued c.example 1", "succeeded b.example 1"}
	if got := byStateAndHost(); !slices.Equal(got, want) {
		t.Fatalf("job_counts after 028: %v, want %v", got, want)
	}
	s := postgres.NewJobStore(p)
	leased, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t", Now: at.Add(time.Minute), Until: at.Add(2 * time.Minute), Limit: 10, PerHost: 2})
	if err != nil || len(leased) != 2 {
		t.Fatalf("leased after 028: %v, %v; want c1 and a1", leased, err)
	}
	mustNoCountDrift(t, p, "a lease after 028")
	counts, err := s.Counts(ctx)
	if err != nil || counts[domain.JobQueued] != 1 || counts[domain.JobLeased] != 3 || counts[domain.JobDead] != 1 || counts[domain.JobSucceeded] != 1 {
		t.Fatalf("counts after 028 and a lease: %v, %v; want 1 queued, 3 leased, 1 dead, 1 succeeded", counts, err)
	}

	downTo(t, p, 27)
	if hasTable(t, p, "job_counts") {
		t.Fatal("job_counts after 028's down")
	}
	if n := count(t, p, `SELECT count(*) FROM pg_trigger WHERE tgrelid = 'jobs'::regclass AND NOT tgisinternal`); n != 0 {
		t.Fatalf("%d triggers on jobs after 028's down", n)
	}
	if n := count(t, p, `SELECT count(*) FROM pg_proc WHERE proname LIKE 'herald_jobs_%' AND pronamespace = current_schema()::regnamespace`); n != 0 {
		t.Fatalf("%d trigger functions after 028's down", n)
	}
	// Jobs are written without it, and counted again when it comes back.
	mustExec(t, p, `DELETE FROM jobs`)
	insert()
	mustMigrate(t, p)
	if got := byStateAndHost(); !slices.Equal(got, want) {
		t.Fatalf("job_counts after 028 again: %v, want %v", got, want)
	}
}

// Migration 029 keeps the notifications, one per recipient and key, read
// along notifications_recipient_idx; its down step drops them (an older
// build has none), and up again starts empty.
func TestMigration029Notifications(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	store := postgres.NewNotificationStore(p)
	n, err := domain.NewNotification("01", "https://herald.example/users/vera", domain.NotifyFollow, "https://r.example/users/bob", "", "https://r.example/follows/1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := store.AddNotification(ctx, n); err != nil || !created {
		t.Fatalf("add after 029: %v %v", created, err)
	}
	for _, ix := range []string{"notifications_recipient_idx", "notifications_actor_idx", "notifications_recipient_key_key"} {
		if !hasIndex(t, p, ix) {
			t.Fatalf("no %s after 029", ix)
		}
	}

	downTo(t, p, 28)
	if hasTable(t, p, "notifications") {
		t.Fatal("029 down left the notifications table")
	}
	mustMigrate(t, p)
	got, err := store.Notifications(ctx, n.Recipient, domain.NotificationFilter{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 029 down and up: %v %v", got, err)
	}
	if _, err := store.Notification(ctx, n.Recipient, "01"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("notification after 029 down and up: %v", err)
	}
}

// Migration 030 keeps a persona's bio (note); a persona stored before it
// has none. Its down step drops the column (an older build keeps no bio)
// and leaves the display name, and up again starts every bio empty.
func TestMigration030PersonaBio(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	actors := postgres.NewAccountStore(p)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" {
		t.Fatalf("a new persona's bio: %q %v", a.Note, err)
	}
	if err := actors.SetAvatarProfile(ctx, "a1", "Vera", "hello"); err != nil {
		t.Fatal(err)
	}

	downTo(t, p, 29)
	if hasColumn(t, p, "avatars", "note") {
		t.Fatal("030 down left avatars.note")
	}
	if c := count(t, p, `SELECT count(*) FROM avatars WHERE id = 'a1' AND display_name = 'Vera'`); c != 1 {
		t.Fatal("030 down lost the display name")
	}
	mustMigrate(t, p)
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" || a.DisplayName != "Vera" {
		t.Fatalf("vera after 030 down and up: %q %q %v", a.DisplayName, a.Note, err)
	}
}

// Migration 031 keeps each persona's conversations, one per (persona,
// thread), read along conversations_persona_last_idx; its down step
// drops them, and up again starts empty.
func TestMigration031Conversations(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	store := postgres.NewNotificationStore(p)
	c := domain.Conversation{ID: "k1", Persona: "https://herald.example/users/vera", LastStatusID: "01", Unread: true,
		Participants: []string{"https://herald.example/users/vera", "https://r.example/users/bob"}}
	if err := store.AddToConversation(ctx, c); err != nil {
		t.Fatalf("add after 031: %v", err)
	}
	if !hasIndex(t, p, "conversations_persona_last_idx") {
		t.Fatal("no conversations_persona_last_idx after 031")
	}

	downTo(t, p, 29)
	if hasTable(t, p, "conversations") {
		t.Fatal("031 down left the conversations table")
	}
	mustMigrate(t, p)
	got, err := store.Conversations(ctx, c.Persona, domain.ConversationPage{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 031 down and up: %v %v", got, err)
	}
	if _, err := store.Conversation(ctx, c.Persona, c.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("conversation after 031 down and up: %v", err)
	}
}
