package mongotest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// specIndexes is every index SPEC §4 asks for, by collection, under the
// names the package documents.
var specIndexes = map[string][]string{
	"posts":            {"posts_object_uri", "posts_author_published", "posts_group_published"},
	"dm_posts":         {"dm_posts_object_uri", "dm_posts_participants_key"},
	"foreign_avatars":  {"foreign_avatars_actor_uri", "foreign_avatars_public_key_id_key"},
	"followers":        {"followers_pair"},
	"avatars":          {"avatars_root_to_avatar"},
	"root_users":       {"root_users_user_name", "root_users_status_created"},
	"reserved_names":   {"reserved_names_name"},
	"jobs":             {"jobs_dedupe_key", "jobs_lease", "jobs_host_state", "jobs_finished_at", "jobs_slot"},
	"remote_instances": {"remote_instances_host"},
	"reports":          {"reports_activity_id", "reports_created"},
}

// indexDocs lists a collection's indexes by name.
func indexDocs(t *testing.T, c *mongodrv.Collection) map[string]bson.M {
	t.Helper()
	cur, err := c.Indexes().List(Ctx(t))
	if err != nil {
		t.Fatalf("list indexes of %s: %v", c.Name(), err)
	}
	var all []bson.M
	if err := cur.All(Ctx(t), &all); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]bson.M, len(all))
	for _, ix := range all {
		out[ix["name"].(string)] = ix
	}
	return out
}

// Indexes runs the cases of Touch and EnsureIndexes, and the lease query
// plan.
func Indexes(t *testing.T, client *mongodrv.Client, opts ...Option) {
	o := buildOptions(opts)
	runSuite(t, o, []suiteCase{
		{"TouchCreatesEveryCollection", func(t *testing.T) {
			db := EmptyDB(t, client)
			for i := 0; i < 2; i++ {
				if err := mongo.Touch(Ctx(t), db); err != nil {
					t.Fatalf("touch #%d: %v", i+1, err)
				}
			}
			names, err := db.ListCollectionNames(Ctx(t), bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"root_users", "tokens", "avatars", "groups", "reserved_names", "foreign_avatars",
				"posts", "dm_posts", "followers", "remote_instances", "jobs", "tombstones", "domain_blocks", "domain_allows", "reports"} {
				if !slices.Contains(names, want) {
					t.Errorf("collection %s missing after Touch (have %v)", want, names)
				}
			}
		}},
		{"EnsureIndexesIsIdempotent", func(t *testing.T) {
			db := EmptyDB(t, client)
			if err := mongo.Touch(Ctx(t), db); err != nil {
				t.Fatal(err)
			}
			log := newTestLog(t)
			for i := 0; i < 3; i++ {
				if _, err := mongo.EnsureIndexes(Ctx(t), db, log.Logger); err != nil {
					t.Fatalf("ensure #%d: %v", i+1, err)
				}
			}
			for coll, names := range specIndexes {
				have := indexDocs(t, db.Collection(coll))
				for _, n := range names {
					if _, ok := have[n]; !ok {
						t.Errorf("index %s.%s missing", coll, n)
					}
				}
			}
			for coll, n := range map[string]string{"posts": "posts_object_uri", "jobs": "jobs_dedupe_key", "reserved_names": "reserved_names_name", "followers": "followers_pair",
				"reports": "reports_activity_id"} {
				if u, _ := indexDocs(t, db.Collection(coll))[n]["unique"].(bool); !u {
					t.Errorf("%s.%s is not unique", coll, n)
				}
			}
			// The host slots: one job per slot, and only leased jobs hold
			// one; a key id: one cached actor per key id, and a copy without
			// one claims nothing.
			for coll, n := range map[string]string{"jobs": "jobs_slot", "foreign_avatars": "foreign_avatars_public_key_id_key"} {
				ix := indexDocs(t, db.Collection(coll))[n]
				switch {
				case ix["unique"] != true:
					t.Errorf("%s.%s is not unique: %v", coll, n, ix)
				case o.noSparse != "":
					t.Logf("%s.%s's sparse flag cannot be read back here: %s", coll, n, o.noSparse)
				case ix["sparse"] != true:
					t.Errorf("%s.%s is not sparse: %v", coll, n, ix)
				}
			}
			if w := log.warnings(); (o.noTTL && len(w) != 3) || (!o.noTTL && len(w) != 0) {
				t.Fatalf("warnings over three starts: %q (no TTL on this server: %v; want one per start without TTL)", w, o.noTTL)
			}
		}},
		{"TTLOnFinishedJobsOrPurgeFallback", func(t *testing.T) {
			db := EmptyDB(t, client)
			if err := mongo.Touch(Ctx(t), db); err != nil {
				t.Fatal(err)
			}
			ttl, err := mongo.EnsureIndexes(Ctx(t), db, nil)
			if err != nil {
				t.Fatal(err)
			}
			ix := indexDocs(t, db.Collection("jobs"))["jobs_finished_at"]
			if o.noTTL {
				if ttl || ix["expireAfterSeconds"] != nil {
					t.Fatalf("ttl = %v, index %v; this server has no TTL", ttl, ix)
				}
				t.Log("no TTL here: EnsureIndexes reported ttl=false, so bootstrap runs the purge loop")
				return
			}
			if !ttl {
				t.Fatal("ttl = false on a server with TTL indexes")
			}
			secs := fmt.Sprint(ix["expireAfterSeconds"])
			if secs != fmt.Sprint(int64(mongo.JobRetention/time.Second)) && secs != fmt.Sprint(int32(mongo.JobRetention/time.Second)) {
				t.Fatalf("jobs_finished_at expires after %v s, want %d", ix["expireAfterSeconds"], int64(mongo.JobRetention/time.Second))
			}
		}},
		{"ConflictingIndexIsNamed", func(t *testing.T) {
			db := EmptyDB(t, client)
			posts := db.Collection("posts")
			if _, err := posts.Indexes().CreateOne(Ctx(t), mongodrv.IndexModel{Keys: bson.D{{Key: "objectUri", Value: 1}},
				Options: options.Index().SetName("posts_object_uri")}); err != nil {
				t.Fatal(err)
			}
			_, err := mongo.EnsureIndexes(Ctx(t), db, nil)
			if err == nil || !strings.Contains(err.Error(), "posts.posts_object_uri") || !strings.Contains(err.Error(), "unique") {
				t.Fatalf("a non-unique posts_object_uri: err = %v, want one naming the index and the option", err)
			}
			db2 := EmptyDB(t, client)
			if _, err := db2.Collection("posts").Indexes().CreateOne(Ctx(t), mongodrv.IndexModel{Keys: bson.D{{Key: "objectUri", Value: 1}},
				Options: options.Index().SetName("legacy_uri").SetUnique(true)}); err != nil {
				t.Fatal(err)
			}
			_, err = mongo.EnsureIndexes(Ctx(t), db2, nil)
			if err == nil || !strings.Contains(err.Error(), "legacy_uri") {
				t.Fatalf("same keys under another name: err = %v, want one naming legacy_uri", err)
			}
		}},
		{"PlainKeyIndexIsRetired", func(t *testing.T) {
			// An earlier version's start made the plain index on key ids,
			// which has the unique one's keys: EnsureIndexes replaces it,
			// and stays put when run again.
			db := EmptyDB(t, client)
			if err := mongo.Touch(Ctx(t), db); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Collection("foreign_avatars").Indexes().CreateOne(Ctx(t), mongodrv.IndexModel{Keys: bson.D{{Key: "publicKeyId", Value: 1}},
				Options: options.Index().SetName("foreign_avatars_public_key_id")}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if _, err := mongo.EnsureIndexes(Ctx(t), db, nil); err != nil {
					t.Fatalf("ensure #%d over the plain index: %v", i+1, err)
				}
				have := indexDocs(t, db.Collection("foreign_avatars"))
				if _, ok := have["foreign_avatars_public_key_id"]; ok {
					t.Fatalf("ensure #%d kept the plain index", i+1)
				}
				if have["foreign_avatars_public_key_id_key"]["unique"] != true {
					t.Fatalf("ensure #%d: no unique index on key ids: %v", i+1, have)
				}
			}
		}},
		{"DuplicateDataFailsIndexBuildClearly", func(t *testing.T) {
			db := EmptyDB(t, client)
			for _, id := range []string{"p1", "p2"} {
				if _, err := db.Collection("posts").InsertOne(Ctx(t), bson.D{{Key: "_id", Value: id}, {Key: "objectUri", Value: "https://h.example/n/1"}}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := mongo.EnsureIndexes(Ctx(t), db, nil)
			if err == nil || !strings.Contains(err.Error(), "posts.posts_object_uri") {
				t.Fatalf("err = %v, want one naming posts.posts_object_uri", err)
			}
		}},
		{"LeaseQueriesAreIndexScans", func(t *testing.T) {
			db := NewDB(t, client)
			jobs := mongo.NewJobStore(db)
			base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
			batch := make([]domain.Job, 3000)
			for i := range batch {
				j, err := domain.NewJob(contract.JobID(fmt.Sprintf("j%05d", i)), fmt.Sprintf("https://local.example/a/%d", i),
					fmt.Sprintf("https://h%02d.example/inbox", i%50), "actor-1", "https://local.example/users/a#main-key", []byte(`{}`), base)
				if err != nil {
					t.Fatal(err)
				}
				j.RunAt = base.Add(time.Duration(i%600) * time.Second)
				batch[i] = j
			}
			if _, err := jobs.Enqueue(Ctx(t), batch); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 50; i++ { // some leased, so state is selective
				if _, err := jobs.LeaseBatch(Ctx(t), ports.LeaseRequest{Owner: "w", Token: fmt.Sprint("t", i), Now: base.Add(time.Hour), Until: base.Add(2 * time.Hour),
					Limit: 10}); err != nil {
					t.Fatal(err)
				}
			}
			// The lease's two reads (jobs_batch.go): the ready hosts, then
			// the queued jobs of those below their cap, host by host.
			queries := []struct {
				coll, hint  string
				filter, srt bson.D
			}{
				{"job_hosts", "job_hosts_ready", bson.D{{Key: "readyAt", Value: bson.D{{Key: "$lte", Value: base.Add(time.Hour)}}},
					{Key: "_id", Value: bson.D{{Key: "$nin", Value: bson.A{"h01.example", "h02.example"}}}}}, bson.D{{Key: "readyAt", Value: 1}}},
				{"jobs", "jobs_host_state", bson.D{{Key: "host", Value: bson.D{{Key: "$in", Value: bson.A{"h03.example", "h04.example", "h05.example"}}}},
					{Key: "state", Value: "queued"}}, bson.D{{Key: "runAt", Value: 1}}},
			}
			for _, q := range queries {
				var plan bson.Raw
				err := db.RunCommand(Ctx(t), bson.D{
					{Key: "explain", Value: bson.D{
						{Key: "find", Value: q.coll}, {Key: "filter", Value: q.filter}, {Key: "sort", Value: q.srt},
						{Key: "hint", Value: q.hint}, {Key: "limit", Value: 48},
					}},
					{Key: "verbosity", Value: "queryPlanner"},
				}).Decode(&plan)
				if err != nil {
					t.Fatalf("explain %s: %v", q.coll, err)
				}
				winning, err := plan.LookupErr("queryPlanner", "winningPlan")
				var stages, indexes []string
				if err == nil {
					stages, indexes = planStages(winning)
				}
				if len(stages) == 0 {
					postgresPlan(t, plan, q.coll) // FerretDB v2: DocumentDB's PostgreSQL plan
					continue
				}
				t.Logf("%s: plan stages %v over indexes %v", q.coll, stages, indexes)
				if !slices.Contains(stages, "IXSCAN") || !slices.Contains(indexes, q.hint) ||
					slices.Contains(stages, "COLLSCAN") || slices.Contains(stages, "SORT") {
					t.Fatalf("the lease's read of %s is not an index scan on %s with the order from the index: stages %v, indexes %v\n%s",
						q.coll, q.hint, stages, indexes, winning)
				}
			}
		}},
	})
}

// postgresPlan is LeaseQueriesAreIndexScans on FerretDB v2, whose explain
// of a find shows the PostgreSQL plan DocumentDB runs, not MongoDB's
// planner. What it can show: the query is served by an index, never a
// sequential scan of the collection. What it cannot: whether DocumentDB
// takes the order from the index or sorts the rows (a Sort node), which
// stays for a real MongoDB.
func postgresPlan(t *testing.T, plan bson.Raw, coll string) {
	t.Helper()
	var nodes, indexes []string
	var walk func(bson.RawValue)
	walk = func(v bson.RawValue) {
		switch v.Type {
		case bson.TypeArray:
			vals, _ := v.Array().Values()
			for _, x := range vals {
				walk(x)
			}
		case bson.TypeEmbeddedDocument:
			elems, _ := v.Document().Elements()
			for _, e := range elems {
				s, isString := e.Value().StringValueOK()
				switch {
				case e.Key() == "Node Type" && isString:
					nodes = append(nodes, s)
				case e.Key() == "Index Name" && isString:
					indexes = append(indexes, s)
				default:
					walk(e.Value())
				}
			}
		}
	}
	walk(plan.Lookup("queryPlanner"))
	t.Logf("%s: the lease query's PostgreSQL plan on DocumentDB: nodes %v over indexes %v", coll, nodes, indexes)
	if len(nodes) == 0 {
		t.Fatalf("no PostgreSQL plan in the explain: %s", plan)
	}
	indexed := slices.ContainsFunc(nodes, func(n string) bool { return strings.Contains(n, "Index") })
	if !indexed || slices.Contains(nodes, "Seq Scan") {
		t.Fatalf("the lease's read of %s is not served by an index: nodes %v, indexes %v\n%s", coll, nodes, indexes, plan)
	}
	if slices.Contains(nodes, "Sort") {
		t.Logf("UNVERIFIED here: the sort of %s comes from a Sort node, not from the index's order (MongoDB's plan needs a real MongoDB)", coll)
	}
}

// planStages walks an explain plan of any shape (classic or SBE) for stage
// names and index names.
func planStages(v bson.RawValue) (stages, indexes []string) {
	var walk func(bson.RawValue)
	walk = func(v bson.RawValue) {
		switch v.Type {
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			var elems []bson.RawElement
			if v.Type == bson.TypeArray {
				vals, _ := v.Array().Values()
				for _, x := range vals {
					walk(x)
				}
				return
			}
			elems, _ = v.Document().Elements()
			for _, e := range elems {
				switch e.Key() {
				case "stage":
					if s, ok := e.Value().StringValueOK(); ok {
						stages = append(stages, s)
					}
				case "indexName":
					if s, ok := e.Value().StringValueOK(); ok {
						indexes = append(indexes, s)
					}
				default:
					walk(e.Value())
				}
			}
		}
	}
	walk(v)
	return stages, indexes
}
