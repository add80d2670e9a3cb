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
		{"LeaseQueryIsAnIndexScan", func(t *testing.T) {
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
			// Some leased, so state is selective.
			if got, err := jobs.LeaseBatch(Ctx(t), ports.LeaseRequest{Owner: "w", Token: "t", Now: base.Add(time.Hour), Until: base.Add(2 * time.Hour), Limit: 500}); err != nil || len(got) != 500 {
				t.Fatalf("leased %d of 500: %v", len(got), err)
			}
			// An uncapped lease's candidates (leaseCandidates, jobs_batch.go).
			query := bson.D{{Key: "state", Value: "queued"}, {Key: "runAt", Value: bson.D{{Key: "$lte", Value: base.Add(time.Hour)}}},
				{Key: "host", Value: bson.D{{Key: "$nin", Value: bson.A{"h01.example", "h02.example"}}}}}
			sort := bson.D{{Key: "runAt", Value: 1}, {Key: "_id", Value: 1}}
			var plan bson.Raw
			err := db.RunCommand(Ctx(t), bson.D{
				{Key: "explain", Value: bson.D{
					{Key: "find", Value: "jobs"},
					{Key: "filter", Value: query},
					{Key: "sort", Value: sort},
					{Key: "hint", Value: "jobs_lease"},
					{Key: "limit", Value: 20},
				}},
				{Key: "verbosity", Value: "queryPlanner"},
			}).Decode(&plan)
			if err != nil {
				t.Fatalf("explain: %v", err)
			}
			winning, err := plan.LookupErr("queryPlanner", "winningPlan")
			if err != nil {
				// FerretDB v2 explains the PostgreSQL plan DocumentDB runs.
				postgresPlan(t, db, query, sort)
				return
			}
			stages, indexes := planStages(winning)
			t.Logf("lease plan stages %v over indexes %v", stages, indexes)
			if !slices.Contains(stages, "IXSCAN") || !slices.Contains(indexes, "jobs_lease") ||
				slices.Contains(stages, "COLLSCAN") || slices.Contains(stages, "SORT") {
				t.Fatalf("the lease is not an index scan on jobs_lease with the sort from the index: stages %v, indexes %v\n%s",
					stages, indexes, winning)
			}
		}},
	})
}

// postgresPlan is LeaseQueryIsAnIndexScan on FerretDB v2, whose explain
// shows, for the lease's find, the PostgreSQL plan DocumentDB runs, not
// MongoDB's planner. What it can show:
// the query is served by an index, never a sequential scan of the
// collection. What it cannot: DocumentDB takes the rows from a composite
// index and sorts them (a Sort node), where MongoDB takes the sort from
// jobs_lease; that stays for a real MongoDB.
func postgresPlan(t *testing.T, db *mongodrv.Database, query, sort bson.D) {
	t.Helper()
	var plan bson.Raw
	err := db.RunCommand(Ctx(t), bson.D{{Key: "explain", Value: bson.D{
		{Key: "find", Value: "jobs"}, {Key: "filter", Value: query}, {Key: "sort", Value: sort}, {Key: "limit", Value: 1},
	}}}).Decode(&plan)
	if err != nil {
		t.Fatalf("explain find: %v", err)
	}
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
	t.Logf("the lease query's PostgreSQL plan on DocumentDB: nodes %v over indexes %v", nodes, indexes)
	if len(nodes) == 0 {
		t.Fatalf("no PostgreSQL plan in the explain: %s", plan)
	}
	indexed := slices.ContainsFunc(nodes, func(n string) bool { return strings.Contains(n, "Index") })
	if !indexed || slices.Contains(nodes, "Seq Scan") {
		t.Fatalf("the lease query is not served by an index: nodes %v, indexes %v\n%s", nodes, indexes, plan)
	}
	if slices.Contains(nodes, "Sort") {
		t.Logf("UNVERIFIED here: the sort comes from a Sort node, not from jobs_lease's order (MongoDB's plan needs a real MongoDB)")
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
