package mongotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/bson/primitive"
	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/migrations/migrationtest"
	mongomigrations "github.com/heraldfed/herald/migrations/mongo"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

var base = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// insert puts raw documents into a collection, as the legacy application
// left them.
func insert(t *testing.T, db *mongodrv.Database, coll string, docs ...bson.D) {
	t.Helper()
	for _, d := range docs {
		if _, err := db.Collection(coll).InsertOne(Ctx(t), d); err != nil {
			t.Fatalf("seed %s: %v", coll, err)
		}
	}
}

// ids lists the _id of every document in coll matching filter, as strings.
func ids(t *testing.T, db *mongodrv.Database, coll string, filter bson.D) []string {
	t.Helper()
	cur, err := db.Collection(coll).Find(Ctx(t), filter)
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(Ctx(t), &docs); err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		v := d.Lookup("_id")
		if oid, ok := v.ObjectIDOK(); ok {
			out = append(out, oid.Hex())
		} else {
			out = append(out, v.StringValue())
		}
	}
	return out
}

func sameSet(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	m := make(map[string]int)
	for _, g := range got {
		m[g]++
	}
	for _, w := range want {
		m[w]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func count(t *testing.T, db *mongodrv.Database, coll string, filter bson.D) int {
	t.Helper()
	n, err := db.Collection(coll).CountDocuments(Ctx(t), filter)
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// migrationDB is a database prepared for a migration case: collections
// touched as at start, and, for a server that cannot run the first
// migrations, recorded at the suite's start version.
func migrationDB(t *testing.T, client *mongodrv.Client, o suiteOptions) *mongodrv.Database {
	t.Helper()
	db := EmptyDB(t, client)
	if err := mongo.Touch(Ctx(t), db); err != nil {
		t.Fatal(err)
	}
	if o.startAt > 0 {
		t.Logf("starting at version %d: %s", o.startAt, o.startReason)
		insert(t, db, mongo.MigrationsCollection, bson.D{{Key: "version", Value: int(o.startAt)}, {Key: "dirty", Value: false}})
	}
	return db
}

func up(t *testing.T, client *mongodrv.Client, db *mongodrv.Database) {
	t.Helper()
	if err := mongo.MigrateUp(Ctx(t), client, db.Name(), newTestLog(t).Logger); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
}

func down(t *testing.T, client *mongodrv.Client, db *mongodrv.Database, steps int) {
	t.Helper()
	if err := mongo.MigrateDown(Ctx(t), client, db.Name(), steps, newTestLog(t).Logger); err != nil {
		t.Fatalf("migrate down %d: %v", steps, err)
	}
}

// downTo steps down until the version is at most v: later migrations
// (numbers are handed out to branches ahead, so some may be missing) are
// undone first.
func downTo(t *testing.T, client *mongodrv.Client, db *mongodrv.Database, v uint) {
	t.Helper()
	for version(t, client, db) > v {
		down(t, client, db, 1)
	}
}

func latest(t *testing.T) uint {
	t.Helper()
	v, err := mongo.LatestMigration()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// versions are the embedded migrations' versions, ascending. Their
// numbers may leave gaps (branches are given numbers ahead of their
// merge), so a test steps down by them, not by subtraction.
func versions(t *testing.T) []uint {
	t.Helper()
	names, err := fs.Glob(mongomigrations.FS, "*.up.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []uint
	for _, name := range names {
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			t.Fatalf("migration file %s: %v", name, err)
		}
		out = append(out, uint(v))
	}
	slices.Sort(out)
	return out
}

// stepsDownTo is how many down steps take the schema from the latest
// version to v: the embedded migrations above v.
func stepsDownTo(t *testing.T, v uint) int {
	t.Helper()
	n := 0
	for _, w := range versions(t) {
		if w > v {
			n++
		}
	}
	return n
}

func version(t *testing.T, client *mongodrv.Client, db *mongodrv.Database) uint {
	t.Helper()
	v, dirty, err := mongo.MigrationVersion(Ctx(t), client, db.Name())
	if err != nil || dirty {
		t.Fatalf("version %d, dirty %v, err %v", v, dirty, err)
	}
	return v
}

// Legacy deliveries of the old serial worker, and what 004 must make of
// them.
const (
	act1   = "https://local.example/activities/1"
	act2   = "https://local.example/activities/2"
	act6   = "https://local.example/activities/6"
	inbox1 = "https://r.example/inbox"
	inbox2 = "https://s.example/users/x/inbox"
	inbox6 = "https://t.example/inbox"
	alice  = "https://local.example/users/alice"
)

func seedDeliveries(t *testing.T, db *mongodrv.Database) {
	t.Helper()
	doc := func(id string) bson.D {
		return bson.D{{Key: "id", Value: id}, {Key: "type", Value: "Create"}, {Key: "actor", Value: alice},
			{Key: "object", Value: bson.D{{Key: "type", Value: "Note"}, {Key: "content", Value: "hi"}}}}
	}
	insert(t, db, "deliveries",
		// embedded activity, attempts kept
		bson.D{{Key: "_id", Value: "dl1"}, {Key: "activity", Value: doc(act1)}, {Key: "inbox", Value: inbox1},
			{Key: "actor", Value: "av1"}, {Key: "attempts", Value: 3}, {Key: "created", Value: base}, {Key: "state", Value: "pending"}},
		// activity as JSON text
		bson.D{{Key: "_id", Value: "dl2"}, {Key: "activity", Value: `{"id":"` + act2 + `","type":"Follow","actor":"` + alice + `"}`},
			{Key: "inbox", Value: inbox2}, {Key: "actor", Value: "av1"}, {Key: "attempts", Value: 0}, {Key: "created", Value: base}, {Key: "state", Value: "pending"}},
		// sent long ago: not pending, not moved
		bson.D{{Key: "_id", Value: "dl3"}, {Key: "activity", Value: doc("https://local.example/activities/3")}, {Key: "inbox", Value: inbox1},
			{Key: "actor", Value: "av1"}, {Key: "attempts", Value: 1}, {Key: "created", Value: base}, {Key: "state", Value: "done"}},
		// the same activity to the same inbox as dl1: one job only
		bson.D{{Key: "_id", Value: "dl4"}, {Key: "activity", Value: doc(act1)}, {Key: "inbox", Value: inbox1},
			{Key: "actor", Value: "av1"}, {Key: "attempts", Value: 1}, {Key: "created", Value: base}, {Key: "state", Value: "pending"}},
		// no activity id: cannot be a job
		bson.D{{Key: "_id", Value: "dl5"}, {Key: "activity", Value: bson.D{{Key: "type", Value: "Create"}}}, {Key: "inbox", Value: inbox1},
			{Key: "actor", Value: "av1"}, {Key: "attempts", Value: 0}, {Key: "created", Value: base}, {Key: "state", Value: "pending"}},
		// already queued by the new engine
		bson.D{{Key: "_id", Value: "dl6"}, {Key: "activity", Value: doc(act6)}, {Key: "inbox", Value: inbox6},
			{Key: "actor", Value: "av1"}, {Key: "attempts", Value: 2}, {Key: "created", Value: base}, {Key: "state", Value: "pending"}},
	)
	j, err := domain.NewJob(contract.JobID("engine-job"), act6, inbox6, "av1", alice+"#main-key", []byte(`{"id":"`+act6+`"}`), base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mongo.NewJobStore(db).Enqueue(Ctx(t), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
}

func deliveryState(t *testing.T, db *mongodrv.Database) map[string]string {
	t.Helper()
	cur, err := db.Collection("deliveries").Find(Ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		ID    string `bson:"_id"`
		State string `bson:"state"`
	}
	if err := cur.All(Ctx(t), &rows); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.State
	}
	return out
}

func jobByKey(t *testing.T, db *mongodrv.Database, activity, inbox string) (domain.Job, int) {
	t.Helper()
	key := domain.DedupeKey(activity, inbox)
	n := count(t, db, "jobs", bson.D{{Key: "dedupeKey", Value: key}})
	var d struct {
		ID string `bson:"_id"`
	}
	if err := db.Collection("jobs").FindOne(Ctx(t), bson.D{{Key: "dedupeKey", Value: key}}).Decode(&d); err != nil {
		return domain.Job{}, n
	}
	j, err := mongo.NewJobStore(db).Get(Ctx(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return j, n
}

func checkMoved(t *testing.T, db *mongodrv.Database) {
	t.Helper()
	if n := count(t, db, "jobs", bson.D{}); n != 3 {
		t.Fatalf("%d jobs, want 3 (dl1, dl2 moved, engine-job kept)", n)
	}
	j1, n := jobByKey(t, db, act1, inbox1)
	if n != 1 {
		t.Fatalf("%d jobs for dl1's activity and inbox", n)
	}
	if j1.State != domain.JobQueued || j1.Attempts != 3 || j1.SenderID != "av1" || j1.KeyID != alice+"#main-key" ||
		j1.Host != "r.example" || j1.ActivityID != act1 || !j1.CreatedAt.Equal(base) {
		t.Fatalf("dl1's job %+v", j1)
	}
	var payload struct {
		ID     string `json:"id"`
		Object struct {
			Content string `json:"content"`
		} `json:"object"`
	}
	if err := json.Unmarshal(j1.Payload, &payload); err != nil || payload.ID != act1 || payload.Object.Content != "hi" {
		t.Fatalf("dl1's payload %s (%v)", j1.Payload, err)
	}
	j2, n := jobByKey(t, db, act2, inbox2)
	if n != 1 || j2.Attempts != 0 || string(j2.Payload) != `{"id":"`+act2+`","type":"Follow","actor":"`+alice+`"}` || j2.Host != "s.example" {
		t.Fatalf("dl2's job (%d) %+v", n, j2)
	}
	if j6, n := jobByKey(t, db, act6, inbox6); n != 1 || contract.JobName(j6.ID) != "engine-job" {
		t.Fatalf("dl6: %d jobs, %+v; want the engine's job only", n, j6)
	}
	want := map[string]string{"dl1": "abandoned", "dl2": "abandoned", "dl3": "done", "dl4": "abandoned", "dl5": "unmovable", "dl6": "abandoned"}
	if got := deliveryState(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("legacy rows %v, want %v", got, want)
	}
	var dl5 struct {
		MoveError string `bson:"moveError"`
	}
	if err := db.Collection("deliveries").FindOne(Ctx(t), bson.D{{Key: "_id", Value: "dl5"}}).Decode(&dl5); err != nil || !strings.Contains(dl5.MoveError, "no id") {
		t.Fatalf("dl5 moveError %q (%v)", dl5.MoveError, err)
	}
}

// Migrations runs the migration cases: 001 on seeded duplicates, 004 on
// seeded legacy deliveries (twice, and after a simulated crash), down steps,
// the lock, and concurrent starts.
func Migrations(t *testing.T, client *mongodrv.Client, opts ...Option) {
	o := buildOptions(opts)
	runSuite(t, o, []suiteCase{
		{"VersionBeforeAndAfter", func(t *testing.T) {
			db := migrationDB(t, client, o)
			if v := version(t, client, db); v != o.startAt {
				t.Fatalf("fresh database at version %d, want %d", v, o.startAt)
			}
			up(t, client, db)
			if v := version(t, client, db); v != latest(t) {
				t.Fatalf("after up: version %d, want %d", v, latest(t))
			}
			up(t, client, db) // nothing to do is not an error
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatalf("indexes after migrations: %v", err)
			}
		}},
		{"001RemovesDuplicatesAndFillsReservedNames", func(t *testing.T) {
			db := migrationDB(t, client, o)
			oid := func(n byte) primitive.ObjectID { return primitive.ObjectID{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n} }
			const a, b = "https://r.example/users/a", "https://r.example/users/b"
			insert(t, db, "foreign_avatars",
				bson.D{{Key: "_id", Value: oid(1)}, {Key: "actorUri", Value: a}, {Key: "publicKeyId", Value: a + "#old"}, {Key: "fetchedAt", Value: base}},
				bson.D{{Key: "_id", Value: oid(2)}, {Key: "actorUri", Value: a}, {Key: "publicKeyId", Value: a + "#new"}, {Key: "fetchedAt", Value: base.Add(time.Hour)}},
				bson.D{{Key: "_id", Value: oid(3)}, {Key: "actorUri", Value: a}, {Key: "publicKeyId", Value: a + "#older"}, {Key: "fetchedAt", Value: base.Add(-time.Hour)}},
				bson.D{{Key: "_id", Value: oid(4)}, {Key: "actorUri", Value: b}, {Key: "publicKeyId", Value: b + "#k"}, {Key: "fetchedAt", Value: base}},
				// the same fetch time twice: the larger _id is kept
				bson.D{{Key: "_id", Value: oid(5)}, {Key: "actorUri", Value: b}, {Key: "publicKeyId", Value: b + "#k2"}, {Key: "fetchedAt", Value: base}},
			)
			const n1, n2 = "https://h.example/notes/1", "https://h.example/notes/2"
			post := func(id, uri string, at time.Time) bson.D {
				return bson.D{{Key: "_id", Value: id}, {Key: "objectUri", Value: uri}, {Key: "authorUri", Value: alice},
					{Key: "content", Value: id}, {Key: "visibility", Value: "public"}, {Key: "published", Value: at}}
			}
			insert(t, db, "posts", post("p-late", n1, base.Add(2*time.Minute)), post("p-first", n1, base),
				post("p-mid", n1, base.Add(time.Minute)), post("p-other", n2, base))
			insert(t, db, "dm_posts", post("d-late", n1, base.Add(time.Minute)), post("d-first", n1, base))
			follow := func(id byte, follower, state string, at time.Time) bson.D {
				return bson.D{{Key: "_id", Value: oid(id)}, {Key: "follower", Value: follower}, {Key: "followed", Value: alice},
					{Key: "state", Value: state}, {Key: "createdAt", Value: at}}
			}
			const f1, f2, f3 = "https://r.example/u/1", "https://r.example/u/2", "https://r.example/u/3"
			insert(t, db, "followers",
				follow(10, f1, "pending", base), follow(11, f1, "accepted", base.Add(time.Minute)), follow(12, f1, "pending", base.Add(2*time.Minute)),
				follow(13, f2, "pending", base.Add(time.Minute)), follow(14, f2, "pending", base),
				follow(15, f3, "accepted", base),
				bson.D{{Key: "_id", Value: oid(16)}, {Key: "follower", Value: alice}, {Key: "followed", Value: f1}, {Key: "state", Value: "accepted"}, {Key: "createdAt", Value: base}},
			)
			actor := func(id, owner, name string, at time.Time) bson.D {
				d := bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}, {Key: "publicKeyPem", Value: "k"}, {Key: "privateKeyPem", Value: "k"}, {Key: "createdAt", Value: at}}
				if owner != "" {
					d = append(d, bson.E{Key: "rootUserId", Value: owner})
				}
				return d
			}
			insert(t, db, "avatars", actor("av1", "u1", "alice", base), actor("av2", "u1", "bob", base),
				actor("inst", "", "instance", base), actor("av3", "u2", "carol", base))
			insert(t, db, "groups",
				bson.D{{Key: "_id", Value: "g1"}, {Key: "ownerId", Value: "u1"}, {Key: "name", Value: "club"}, {Key: "createdAt", Value: base}},
				bson.D{{Key: "_id", Value: "g2"}, {Key: "ownerId", Value: "u2"}, {Key: "name", Value: "carol"}, {Key: "createdAt", Value: base.Add(time.Minute)}})
			insert(t, db, "reserved_names", bson.D{{Key: "_id", Value: "alice"}, {Key: "name", Value: "alice"}, {Key: "kind", Value: "persona"},
				{Key: "ownerId", Value: "av1"}, {Key: "createdAt", Value: base.Add(-time.Hour)}})

			up(t, client, db)

			for coll, want := range map[string][]string{
				"foreign_avatars": {oid(2).Hex(), oid(5).Hex()},
				"posts":           {"p-first", "p-other"},
				"dm_posts":        {"d-first"},
				"followers":       {oid(11).Hex(), oid(14).Hex(), oid(15).Hex(), oid(16).Hex()},
			} {
				if got := ids(t, db, coll, bson.D{}); !sameSet(got, want) {
					t.Errorf("%s keeps %v, want %v", coll, got, want)
				}
				if n := count(t, db, coll, bson.D{{Key: "_dup001", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
					t.Errorf("%s: %d rows still carry the dedupe mark", coll, n)
				}
			}
			names := mongo.NewNameRegistry(db)
			all, err := names.List(Ctx(t), "")
			if err != nil {
				t.Fatal(err)
			}
			got := make(map[string]string)
			for _, n := range all {
				got[n.Name] = string(n.Kind) + ":" + n.OwnerID
			}
			want := map[string]string{"alice": "persona:av1", "bob": "persona:av2", "instance": "instance:inst",
				"carol": "persona:av3", "club": "group:g1"}
			for _, n := range domain.FixedReservedNames() {
				if _, err := domain.NormalizeName(n); err == nil && want[n] == "" {
					want[n] = "system:"
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("reserved names\n got %v\nwant %v", got, want)
			}
			if r, _ := names.Get(Ctx(t), "alice"); !r.CreatedAt.Equal(base.Add(-time.Hour)) {
				t.Fatalf("an existing reservation was overwritten: %+v", r)
			}

			// The unique indexes now hold and the stores read the survivors.
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatalf("indexes after 001: %v", err)
			}
			_, err = db.Collection("foreign_avatars").InsertOne(Ctx(t), bson.D{{Key: "actorUri", Value: a}})
			if !mongodrv.IsDuplicateKeyError(err) {
				t.Fatalf("a duplicate actorUri after 001: %v, want a duplicate key error", err)
			}
			content := mongo.NewContentStore(db)
			if f, err := content.ByActorURI(Ctx(t), a); err != nil || f.PublicKeyID != a+"#new" {
				t.Fatalf("kept foreign avatar %+v %v", f, err)
			}
			if p, err := content.PostByObjectURI(Ctx(t), n1); err != nil || p.ID != "p-first" {
				t.Fatalf("kept post %+v %v", p, err)
			}
			if f, err := mongo.NewFollowerStore(db).Get(Ctx(t), f1, alice); err != nil || f.State != domain.FollowAccepted {
				t.Fatalf("kept follow %+v %v", f, err)
			}
			for _, n := range []string{"admin", "carol", "instance"} {
				r, _ := domain.NewReservedName(n, domain.NameKindPersona, "someone", base)
				if err := names.Reserve(Ctx(t), r); !errors.Is(err, domain.ErrNameTaken) {
					t.Fatalf("reserve %s after 001: %v, want ErrNameTaken", n, err)
				}
			}
		}},
		{"004MovesPendingDeliveriesOnce", func(t *testing.T) {
			db := migrationDB(t, client, o)
			seedDeliveries(t, db)
			up(t, client, db)
			checkMoved(t, db)
			up(t, client, db) // a second start moves nothing
			checkMoved(t, db)
			// A crash after the jobs went in but before the rows were marked:
			// the row is pending again, its job is there.
			if _, err := db.Collection("deliveries").UpdateOne(Ctx(t), bson.D{{Key: "_id", Value: "dl1"}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: "pending"}}}}); err != nil {
				t.Fatal(err)
			}
			up(t, client, db)
			checkMoved(t, db)
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatal(err)
			}
			j, err := mongo.NewJobStore(db).LeaseBatch(Ctx(t), ports.LeaseRequest{Owner: "w", Token: "t", Now: time.Now().Add(time.Minute), Until: time.Now().Add(time.Hour),
				SkipHosts: []string{"r.example", "t.example"}, Limit: 1})
			if err != nil || len(j) != 1 || j[0].ActivityID != act2 {
				t.Fatalf("moved job not leasable: %+v %v", j, err)
			}
		}},
		{"004DownGivesBackQueuedJobs", func(t *testing.T) {
			db := migrationDB(t, client, o)
			seedDeliveries(t, db)
			up(t, client, db)
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatal(err)
			}
			// dl2's job is in flight: the rollback must leave it to the engine.
			leased, err := mongo.NewJobStore(db).LeaseBatch(Ctx(t), ports.LeaseRequest{Owner: "w", Token: "t", Now: time.Now().Add(time.Minute),
				Until: time.Now().Add(time.Hour), SkipHosts: []string{"r.example", "t.example"}, Limit: 1})
			if err != nil || len(leased) != 1 || leased[0].ActivityID != act2 {
				t.Fatalf("lease dl2's job: %+v %v", leased, err)
			}
			down(t, client, db, stepsDownTo(t, 3))
			if v := version(t, client, db); v != 3 {
				t.Fatalf("version %d after stepping down past 004, want 3", v)
			}
			want := map[string]string{"dl1": "pending", "dl2": "abandoned", "dl3": "done", "dl4": "abandoned", "dl5": "pending", "dl6": "abandoned"}
			if got := deliveryState(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("legacy rows after down %v, want %v", got, want)
			}
			var dl1 struct {
				Attempts int `bson:"attempts"`
			}
			if err := db.Collection("deliveries").FindOne(Ctx(t), bson.D{{Key: "_id", Value: "dl1"}}).Decode(&dl1); err != nil || dl1.Attempts != 3 {
				t.Fatalf("dl1 attempts %d (%v)", dl1.Attempts, err)
			}
			if _, n := jobByKey(t, db, act1, inbox1); n != 0 {
				t.Fatalf("dl1's job still queued after down (%d)", n)
			}
			if j, n := jobByKey(t, db, act2, inbox2); n != 1 || j.State != domain.JobLeased {
				t.Fatalf("dl2's leased job %+v (%d)", j, n)
			}
			up(t, client, db)
			if _, n := jobByKey(t, db, act1, inbox1); n != 1 {
				t.Fatalf("dl1 moved %d times after up again", n)
			}
			if got := deliveryState(t, db); got["dl1"] != "abandoned" || got["dl5"] != "unmovable" {
				t.Fatalf("legacy rows after up again %v", got)
			}
		}},
		{"005DownPutsEachBodyBackIntoItsJobs", func(t *testing.T) {
			db := migrationDB(t, client, o)
			up(t, client, db)
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatal(err)
			}
			ctx := Ctx(t)
			shared, own := []byte(`{"id":"https://l.example/a/1","type":"Create"}`), []byte(`{"id":"https://l.example/a/2","type":"Follow"}`)
			var jobs []domain.Job
			for i, p := range [][]byte{shared, shared, own} {
				j, err := domain.NewJob(contract.JobID(fmt.Sprintf("b%d", i)), fmt.Sprintf("https://l.example/a/%d", i), fmt.Sprintf("https://h%d.example/inbox", i),
					"av1", alice+"#main-key", p, base)
				if err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs, j)
			}
			if _, err := mongo.NewJobStore(db).Enqueue(ctx, jobs); err != nil {
				t.Fatal(err)
			}
			f, _ := domain.NewFanOut("https://l.example/a/1", alice, "av1", alice+"#main-key", shared, 2, "p", base, base)
			if err := mongo.NewFanOutStore(db).Create(ctx, f); err != nil {
				t.Fatal(err)
			}
			if n := count(t, db, "bodies", bson.D{}); n != 2 {
				t.Fatalf("%d bodies before down, want 2", n)
			}
			down(t, client, db, stepsDownTo(t, 4))
			if v := version(t, client, db); v != 4 {
				t.Fatalf("version %d after 005 down, want 4", v)
			}
			for id, want := range map[string][]byte{"b0": shared, "b1": shared, "b2": own} {
				var d struct {
					Payload []byte `bson:"payload"`
					BodyID  string `bson:"bodyId"`
				}
				if err := db.Collection("jobs").FindOne(ctx, bson.D{{Key: "_id", Value: contract.JobID(id)}}).Decode(&d); err != nil || string(d.Payload) != string(want) || d.BodyID != "" {
					t.Fatalf("%s after 005 down: payload %q body %q (%v)", id, d.Payload, d.BodyID, err)
				}
			}
			names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"bodies", "fan_outs"}}}}})
			if err != nil || len(names) != 0 {
				t.Fatalf("collections left after 005 down: %v %v", names, err)
			}
			up(t, client, db)
			if _, err := mongo.EnsureIndexes(ctx, db, nil); err != nil {
				t.Fatal(err)
			}
			got, err := mongo.NewJobStore(db).Get(ctx, contract.JobID("b2"))
			if err != nil || string(got.Payload) != string(own) {
				t.Fatalf("a job with its payload back, read after up again: %q %v", got.Payload, err)
			}
		}},
		{"006KeepsOneOwnerPerKeyID", func(t *testing.T) {
			db := migrationDB(t, client, o)
			for _, a := range migrationtest.KeyOwnerCache {
				d := bson.D{{Key: "actorUri", Value: a.ActorURI}, {Key: "fetchedAt", Value: base.Add(a.FetchedAt)}}
				if a.KeyID != "" {
					d = append(d, bson.E{Key: "publicKeyId", Value: a.KeyID})
				}
				insert(t, db, "foreign_avatars", d)
			}
			// As other writers may have left them: an empty and a null key
			// id (no claim: kept, the field unset), and one that is not a
			// string (no key at all: deleted).
			const emptyKey, nullKey, numberKey = "https://e.example/users/e3", "https://e.example/users/e4", "https://e.example/users/e5"
			insert(t, db, "foreign_avatars",
				bson.D{{Key: "actorUri", Value: emptyKey}, {Key: "publicKeyId", Value: ""}},
				bson.D{{Key: "actorUri", Value: nullKey}, {Key: "publicKeyId", Value: nil}},
				bson.D{{Key: "actorUri", Value: numberKey}, {Key: "publicKeyId", Value: 42}})
			up(t, client, db)
			actors := func() []string {
				t.Helper()
				cur, err := db.Collection("foreign_avatars").Find(Ctx(t), bson.D{})
				if err != nil {
					t.Fatal(err)
				}
				var docs []struct {
					ActorURI string `bson:"actorUri"`
				}
				if err := cur.All(Ctx(t), &docs); err != nil {
					t.Fatal(err)
				}
				out := make([]string, len(docs))
				for i, d := range docs {
					out[i] = d.ActorURI
				}
				return out
			}
			if got, want := actors(), append(migrationtest.KeptActors(), emptyKey, nullKey); !sameSet(got, want) {
				t.Fatalf("kept\n %q\nwant\n %q", got, want)
			}
			if n := count(t, db, "foreign_avatars", bson.D{{Key: "actorUri", Value: bson.D{{Key: "$in", Value: bson.A{emptyKey, nullKey}}}},
				{Key: "publicKeyId", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
				t.Fatalf("%d empty key ids left", n)
			}
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatalf("indexes after 006: %v", err)
			}
			keyIndexes := func() (plain, unique bool) {
				t.Helper()
				have := indexDocs(t, db.Collection("foreign_avatars"))
				_, plain = have["foreign_avatars_public_key_id"]
				return plain, have["foreign_avatars_public_key_id_key"]["unique"] == true
			}
			if plain, unique := keyIndexes(); plain || !unique {
				t.Fatalf("after 006: plain index %v, unique index %v", plain, unique)
			}
			content := mongo.NewContentStore(db)
			if f, err := content.ByKeyID(Ctx(t), "https://r.example/users/bob#main-key"); err != nil || f.ActorURI != "https://r.example/users/bob" {
				t.Fatalf("bob's key answers %+v %v", f, err)
			}
			err := content.Upsert(Ctx(t), domain.ForeignAvatar{ActorURI: "https://r.example/users/eve", PublicKeyID: "https://r.example/users/bob#main-key"})
			if !errors.Is(err, domain.ErrAlreadyExists) {
				t.Fatalf("a second claim after 006: %v, want ErrAlreadyExists", err)
			}

			down(t, client, db, stepsDownTo(t, 5))
			if plain, unique := keyIndexes(); !plain || unique {
				t.Fatalf("after 006 down: plain index %v, unique index %v", plain, unique)
			}
			insert(t, db, "foreign_avatars", bson.D{{Key: "actorUri", Value: "https://r.example/users/bob2"},
				{Key: "publicKeyId", Value: "https://r.example/users/bob#main-key"}, {Key: "fetchedAt", Value: base.Add(time.Hour)}})
			up(t, client, db)
			if f, err := content.ByKeyID(Ctx(t), "https://r.example/users/bob#main-key"); err != nil || f.ActorURI != "https://r.example/users/bob2" {
				t.Fatalf("after 006 again, the newer copy answers: %+v %v", f, err)
			}
			if plain, unique := keyIndexes(); plain || !unique {
				t.Fatalf("after 006 again: plain index %v, unique index %v", plain, unique)
			}
		}},
		{"007AccountsWithoutAStatusAreActiveAndModeration", func(t *testing.T) {
			db := migrationDB(t, client, o)
			insert(t, db, "root_users", bson.D{{Key: "_id", Value: "u1"}, {Key: "userName", Value: "old"},
				{Key: "passwordHash", Value: "$2a$h"}, {Key: "createdAt", Value: base}})
			up(t, client, db)
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatal(err)
			}
			users := mongo.NewAccountStore(db)
			if u, err := users.UserByID(Ctx(t), "u1"); err != nil || u.Status != domain.UserActive {
				t.Fatalf("an account stored before 007: %+v %v, want active", u, err)
			}
			if err := users.CreateUser(Ctx(t), domain.RootUser{ID: "u2", UserName: "new", CreatedAt: base.Add(time.Hour), Status: domain.UserPending, Reason: "hi"}); err != nil {
				t.Fatal(err)
			}
			if err := users.CreateUser(Ctx(t), domain.RootUser{ID: "u3", UserName: "newer", CreatedAt: base.Add(2 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			for st, want := range map[domain.UserStatus]string{domain.UserActive: "[u1 u3]", domain.UserPending: "[u2]"} {
				us, err := users.UsersByStatus(Ctx(t), st, 0)
				var ids []string
				for _, u := range us {
					ids = append(ids, u.ID)
				}
				if err != nil || fmt.Sprint(ids) != want {
					t.Fatalf("%s after 007: %v %v, want %s", st, ids, err, want)
				}
			}
			if _, ok := indexDocs(t, db.Collection("root_users"))["root_users_status_created"]; !ok {
				t.Fatal("007 made no root_users_status_created")
			}
			b, _ := domain.NewDomainBlock("spam.example", domain.SeveritySuspend, "spam", base)
			if err := mongo.NewModerationStore(db).AddDomainBlock(Ctx(t), b); err != nil {
				t.Fatal(err)
			}

			down(t, client, db, stepsDownTo(t, 6))
			names, err := db.ListCollectionNames(Ctx(t), bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{"domain_blocks", "domain_allows", "reports"}}}}})
			if err != nil || len(names) != 0 {
				t.Fatalf("collections left after 007 down: %v %v", names, err)
			}
			if _, ok := indexDocs(t, db.Collection("root_users"))["root_users_status_created"]; ok {
				t.Fatal("root_users_status_created left after 007 down")
			}
			if n := count(t, db, "root_users", bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: "status", Value: bson.D{{Key: "$exists", Value: true}}}},
				bson.D{{Key: "reason", Value: bson.D{{Key: "$exists", Value: true}}}},
			}}}); n != 0 {
				t.Fatalf("%d accounts keep a status or reason after 007 down", n)
			}
			up(t, client, db)
			if u, err := users.UserByID(Ctx(t), "u2"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
				t.Fatalf("a pending sign-up after 007 down and up: %+v %v (down cannot keep what the older build does not know)", u, err)
			}
		}},
		{"008DeletedPersonasMarkedAndUnmarked", func(t *testing.T) {
			db := migrationDB(t, client, o)
			up(t, client, db)
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatal(err)
			}
			if _, ok := indexDocs(t, db.Collection("avatars"))["avatars_retired"]; !ok {
				t.Fatal("008 made no avatars_retired")
			}
			actors, names := mongo.NewAccountStore(db), mongo.NewNameRegistry(db)
			keys := domain.KeyPair{PublicPEM: "-----BEGIN PUBLIC KEY-----", PrivatePEM: "-----BEGIN PRIVATE KEY-----"}
			if err := actors.CreateAvatar(Ctx(t), domain.Avatar{ID: "av1", RootUserID: "u1", Name: "dora", Keys: keys, CreatedAt: base}); err != nil {
				t.Fatal(err)
			}
			rn, _ := domain.NewReservedName("dora", domain.NameKindPersona, "av1", base)
			if err := names.Reserve(Ctx(t), rn); err != nil {
				t.Fatal(err)
			}
			if err := actors.RetireAvatar(Ctx(t), "av1", base.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := names.MarkDeleted(Ctx(t), "dora", "av1", base.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}

			down(t, client, db, stepsDownTo(t, 7)) // to 007, below 008
			if _, ok := indexDocs(t, db.Collection("avatars"))["avatars_retired"]; ok {
				t.Fatal("avatars_retired left after 008 down")
			}
			if n := count(t, db, "avatars", bson.D{{Key: "deletedAt", Value: bson.D{{Key: "$exists", Value: true}}}}) +
				count(t, db, "reserved_names", bson.D{{Key: "deletedAt", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
				t.Fatalf("%d deletion marks left after 008 down", n)
			}
			up(t, client, db)
			// An older build knew no deletion: the persona came back live.
			if a, err := actors.AvatarByName(Ctx(t), "dora"); err != nil || !a.DeletedAt.IsZero() {
				t.Fatalf("dora after 008 down and up: %+v %v", a, err)
			}
			if r, err := names.Get(Ctx(t), "dora"); err != nil || r.Deleted() {
				t.Fatalf("dora's name after 008 down and up: %+v %v", r, err)
			}
		}},
		{"015NotificationsKeptAndDropped", func(t *testing.T) {
			db := migrationDB(t, client, o)
			up(t, client, db)
			have := indexDocs(t, db.Collection("notifications"))
			for _, ix := range []string{"notifications_recipient_key", "notifications_recipient_id", "notifications_actor"} {
				if _, ok := have[ix]; !ok {
					t.Fatalf("015 made no %s: %v", ix, have)
				}
			}
			if u, _ := have["notifications_recipient_key"]["unique"].(bool); !u {
				t.Fatal("notifications_recipient_key is not unique")
			}
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatalf("indexes after 015: %v", err)
			}
			store := mongo.NewNotificationStore(db)
			n, err := domain.NewNotification("01", "https://herald.example/users/vera", domain.NotifyFollow, "https://r.example/users/bob", "", "https://r.example/follows/1", base)
			if err != nil {
				t.Fatal(err)
			}
			if created, err := store.AddNotification(Ctx(t), n); err != nil || !created {
				t.Fatalf("add after 015: %v %v", created, err)
			}
			down(t, client, db, stepsDownTo(t, 14))
			if c := count(t, db, "notifications", bson.D{}); c != 0 {
				t.Fatalf("%d notifications left after 015 down", c)
			}
			up(t, client, db)
			if got, err := store.Notifications(Ctx(t), n.Recipient, domain.NotificationFilter{Limit: 10}); err != nil || len(got) != 0 {
				t.Fatalf("after 015 down and up: %v %v", got, err)
			}
		}},
		{"016PersonaBioKeptAndUnset", func(t *testing.T) {
			db := migrationDB(t, client, o)
			// A persona stored before 016 has no note field: it reads as
			// no bio.
			insert(t, db, "avatars", bson.D{{Key: "_id", Value: "av1"}, {Key: "rootUserId", Value: "u1"}, {Key: "name", Value: "vera"},
				{Key: "displayName", Value: "Vera"}, {Key: "publicKeyPem", Value: "-----BEGIN PUBLIC KEY-----"}, {Key: "privateKeyPem", Value: "-----BEGIN PRIVATE KEY-----"}})
			up(t, client, db)
			actors := mongo.NewAccountStore(db)
			if a, err := actors.AvatarByID(Ctx(t), "av1"); err != nil || a.Note != "" || a.DisplayName != "Vera" {
				t.Fatalf("a persona from before 016: %q %q %v", a.DisplayName, a.Note, err)
			}
			if err := actors.SetAvatarProfile(Ctx(t), "av1", "Vera", "hello"); err != nil {
				t.Fatal(err)
			}
			down(t, client, db, stepsDownTo(t, 15))
			if n := count(t, db, "avatars", bson.D{{Key: "note", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
				t.Fatalf("%d bios left after 016 down", n)
			}
			if n := count(t, db, "avatars", bson.D{{Key: "displayName", Value: "Vera"}}); n != 1 {
				t.Fatal("016 down lost the display name")
			}
			up(t, client, db)
			if a, err := actors.AvatarByID(Ctx(t), "av1"); err != nil || a.Note != "" {
				t.Fatalf("vera after 016 down and up: %q %v", a.Note, err)
			}
		}},
		{"017ConversationsKeptAndDropped", func(t *testing.T) {
			db := migrationDB(t, client, o)
			up(t, client, db)
			if _, ok := indexDocs(t, db.Collection("conversations"))["conversations_persona_last"]; !ok {
				t.Fatal("017 made no conversations_persona_last")
			}
			if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
				t.Fatalf("indexes after 017: %v", err)
			}
			store := mongo.NewNotificationStore(db)
			c := domain.Conversation{ID: "k1", Persona: "https://herald.example/users/vera", LastStatusID: "01", Unread: true,
				Participants: []string{"https://herald.example/users/vera", "https://r.example/users/bob"}}
			if err := store.AddToConversation(Ctx(t), c); err != nil {
				t.Fatalf("add after 017: %v", err)
			}
			down(t, client, db, stepsDownTo(t, 16))
			if c := count(t, db, "conversations", bson.D{}); c != 0 {
				t.Fatalf("%d conversations left after 017 down", c)
			}
			up(t, client, db)
			if got, err := store.Conversations(Ctx(t), c.Persona, domain.ConversationPage{Limit: 10}); err != nil || len(got) != 0 {
				t.Fatalf("after 017 down and up: %v %v", got, err)
			}
		}},
		{"DownStepByStep", func(t *testing.T) {
			db := migrationDB(t, client, o)
			insert(t, db, "avatars", bson.D{{Key: "_id", Value: "av1"}, {Key: "rootUserId", Value: "u1"}, {Key: "name", Value: "alice"}})
			up(t, client, db)
			indexGone := map[uint][2]string{17: {"conversations", "conversations_persona_last"}, 15: {"notifications", "notifications_recipient_key"}, 9: {"actor_blocks", "actor_blocks_pair"}, 8: {"avatars", "avatars_retired"}, 7: {"reports", "reports_activity_id"},
				6: {"foreign_avatars", "foreign_avatars_public_key_id_key"}, 3: {"jobs", "jobs_dedupe_key"}, 2: {"posts", "posts_object_uri"}}
			for v := latest(t); v > 0; {
				down(t, client, db, 1)
				got := version(t, client, db)
				if got >= v {
					t.Fatalf("after a step down from %d: version %d", v, got)
				}
				for gone := got + 1; gone <= v; gone++ {
					if ix, ok := indexGone[gone]; ok {
						if _, present := indexDocs(t, db.Collection(ix[0]))[ix[1]]; present {
							t.Fatalf("%s.%s still there below version %d", ix[0], ix[1], gone)
						}
					}
				}
				v = got
			}
			if n := count(t, db, "reserved_names", bson.D{{Key: "seededBy", Value: "001"}}); n != 0 {
				t.Fatalf("%d seeded reservations left after 001 down", n)
			}
			down(t, client, db, 1) // at version 0 there is nothing to undo
			if o.startAt > 0 {
				t.Logf("not migrating up again from version 0: %s", o.startReason)
				return
			}
			up(t, client, db)
			if v := version(t, client, db); v != latest(t) {
				t.Fatalf("up again: version %d", v)
			}
			if r, err := mongo.NewNameRegistry(db).Get(Ctx(t), "alice"); err != nil || r.OwnerID != "av1" {
				t.Fatalf("alice reserved again %+v %v", r, err)
			}
		}},
		{"LockHeldElsewhereIsNamed", func(t *testing.T) {
			db := migrationDB(t, client, o)
			insert(t, db, mongo.LockCollection, bson.D{{Key: "locking_key", Value: 0}, {Key: "pid", Value: 4242},
				{Key: "hostname", Value: "elsewhere.example"}, {Key: "created_at", Value: base}})
			ctx, cancel := context.WithTimeout(Ctx(t), 3*time.Second)
			defer cancel()
			err := mongo.MigrateUp(ctx, client, db.Name(), newTestLog(t).Logger)
			if err == nil || !strings.Contains(err.Error(), "elsewhere.example") || !strings.Contains(err.Error(), "4242") {
				t.Fatalf("migrate up under another's lock: %v, want an error naming the holder", err)
			}
			if v := version(t, client, db); v != o.startAt {
				t.Fatalf("migrations ran without the lock: version %d", v)
			}
			if _, err := db.Collection(mongo.LockCollection).DeleteMany(Ctx(t), bson.D{}); err != nil {
				t.Fatal(err)
			}
			up(t, client, db)
			if n := count(t, db, mongo.LockCollection, bson.D{}); n != 0 {
				t.Fatalf("MigrateUp left %d lock documents", n)
			}
		}},
		{"ConcurrentMigrateUpMigratesOnce", func(t *testing.T) {
			db := migrationDB(t, client, o)
			seedDeliveries(t, db)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					errs[i] = mongo.MigrateUp(Ctx(t), client, db.Name(), nil)
				}(i)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("process %d: %v", i, err)
				}
			}
			if v := version(t, client, db); v != latest(t) {
				t.Fatalf("version %d", v)
			}
			checkMoved(t, db)
		}},
	})
}
