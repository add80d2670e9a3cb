package proof_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// proofStore is one proof's store as the test process sees it: the flags
// that make a worker open it, the ports the test enqueues and saves the
// sender through, and the few reads the checks need, which each store
// answers in one query of its own (counting 20,000 jobs by state and
// attempts through JobAdmin.List would read every job and its body).
type proofStore interface {
	// kind names the store in skips and figures.
	kind() string
	// workerFlags open this store in a worker.
	workerFlags() []string
	jobs() ports.JobStore
	actors() ports.ActorStore
	// finished counts the succeeded and the dead jobs.
	finished(ctx context.Context) (succeeded, dead int, err error)
	// states counts jobs by "state/attempts=N".
	states(t *testing.T) map[string]int
	// lastFinished is the latest FinishedAt of any job.
	lastFinished(t *testing.T) time.Time
	// leasedBy is the activity ids of the jobs owner holds leased.
	leasedBy(t *testing.T, owner string) map[string]bool
	// capHeld is what the store still counts against the per-host cap
	// (PostgreSQL: host_slots in flight; Mongo: host locks held), which
	// must be nothing once every job is done.
	capHeld(t *testing.T) int
	// serverCPU starts measuring the CPU the store's server spends; the
	// function it returns reads it, with what was measured.
	serverCPU(t *testing.T) func() (cpu time.Duration, what string, ok bool)
}

// pgStore is a PostgreSQL proof's schema.
type pgStore struct{ d *database }

func newPGStore(t *testing.T) *pgStore { return &pgStore{d: newDatabase(t, true)} }

func (p *pgStore) kind() string { return "PostgreSQL" }
func (p *pgStore) workerFlags() []string {
	return []string{"-store", "postgres", "-database-url", p.d.url}
}
func (p *pgStore) jobs() ports.JobStore     { return postgres.NewJobStore(p.d.pool) }
func (p *pgStore) actors() ports.ActorStore { return postgres.NewAccountStore(p.d.pool) }

func (p *pgStore) finished(ctx context.Context) (succeeded, dead int, err error) {
	err = p.d.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'succeeded'), count(*) FILTER (WHERE state = 'dead') FROM jobs`).
		Scan(&succeeded, &dead)
	return
}

func (p *pgStore) states(t *testing.T) map[string]int {
	t.Helper()
	rows, err := p.d.pool.Query(testCtx(t), `SELECT state, attempts, count(*) FROM jobs GROUP BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var attempts, n int
		if err := rows.Scan(&state, &attempts, &n); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%s/attempts=%d", state, attempts)] = n
	}
	return out
}

func (p *pgStore) lastFinished(t *testing.T) time.Time {
	t.Helper()
	var last time.Time
	if err := p.d.pool.QueryRow(testCtx(t), `SELECT max(finished_at) FROM jobs`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	return last
}

func (p *pgStore) leasedBy(t *testing.T, owner string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	rows, err := p.d.pool.Query(testCtx(t), `SELECT a.activity_id FROM jobs j JOIN job_activities a ON a.id = j.activity WHERE j.state = 'leased' AND j.lease_owner = $1`, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	return out
}

func (p *pgStore) capHeld(t *testing.T) int {
	return p.d.count(t, `SELECT coalesce(sum(in_flight), 0)::int FROM host_slots`)
}

// serverCPU reads the backends serving the schema when asked (they live
// as long as the workers' pools, so call it before stopping them).
func (p *pgStore) serverCPU(t *testing.T) func() (time.Duration, string, bool) {
	return func() (time.Duration, string, bool) {
		cpu, ok := backendCPU(t, p.d)
		return cpu, "PostgreSQL backends", ok
	}
}

// mongoURI is the server the Mongo proofs run on.
func mongoURI() string { return os.Getenv("MONGODB_URI") }

// pingMongo says why the Mongo proofs cannot run, or "".
func pingMongo() string {
	uri := mongoURI()
	if uri == "" {
		return "MONGODB_URI is unset (.ci/run sets it to FerretDB v2 on DocumentDB)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongo.Connect(ctx, uri)
	if err != nil {
		return fmt.Sprintf("no Mongo server answers at MONGODB_URI (%v)", err)
	}
	_ = c.Disconnect(ctx)
	return ""
}

// requireMongo skips, naming what stays unverified, when no Mongo server
// answers.
func requireMongo(t *testing.T, unverified string) {
	t.Helper()
	if mongoSkipReason != "" {
		t.Skipf("UNVERIFIED: %s; not proven on the Mongo store: %s", mongoSkipReason, unverified)
	}
}

// The Mongo proofs do not call t.Parallel: they run one at a time, before
// the parallel PostgreSQL and
// SQLite ones (Go runs a package's sequential tests first). On FerretDB v2
// a Mongo proof keeps both cores of this machine busy (the server spends
// about 180 ms of CPU per delivery), and run beside the others it took the
// PostgreSQL 4-process proof past its 2 minutes and left its own proofs'
// workers with leases of several seconds.

// mongoStore is a Mongo proof's database of its own, prepared as
// bootstrap prepares one (collections touched, migrations, indexes) and
// dropped when the test ends.
type mongoStore struct {
	name   string
	client *mongodrv.Client
	db     *mongodrv.Database
	js     *mongo.JobStore
}

// emptyMongoDatabase is a database of the test's own, with nothing in it,
// dropped when the test ends.
func emptyMongoDatabase(t *testing.T) *mongodrv.Database {
	t.Helper()
	client, err := mongo.Connect(testCtx(t), mongoURI())
	if err != nil {
		t.Fatalf("mongo: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	db := client.Database("herald_proof_" + hex.EncodeToString(b))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			t.Errorf("drop database %s: %v", db.Name(), err)
		}
		_ = client.Disconnect(ctx)
	})
	return db
}

func newMongoStore(t *testing.T) *mongoStore {
	t.Helper()
	ctx := testCtx(t)
	db := emptyMongoDatabase(t)
	m := &mongoStore{name: db.Name(), client: db.Client(), db: db}
	client := m.client
	log := slog.New(slog.DiscardHandler)
	if err := mongo.Touch(ctx, m.db); err != nil {
		t.Fatalf("touch: %v", err)
	}
	if err := mongo.MigrateUp(ctx, client, m.name, log); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if _, err := mongo.EnsureIndexes(ctx, m.db, log); err != nil {
		t.Fatalf("indexes: %v", err)
	}
	m.js = mongo.NewJobStore(m.db)
	return m
}

func (m *mongoStore) kind() string { return "Mongo" }
func (m *mongoStore) workerFlags() []string {
	return []string{"-store", "mongo", "-mongodb-uri", mongoURI(), "-mongo-database", m.name}
}
func (m *mongoStore) jobs() ports.JobStore     { return m.js }
func (m *mongoStore) actors() ports.ActorStore { return mongo.NewAccountStore(m.db) }

func (m *mongoStore) finished(ctx context.Context) (succeeded, dead int, err error) {
	c, err := m.js.Counts(ctx)
	return c[domain.JobSucceeded], c[domain.JobDead], err
}

func (m *mongoStore) states(t *testing.T) map[string]int {
	t.Helper()
	ctx := testCtx(t)
	cur, err := m.db.Collection("jobs").Aggregate(ctx, mongodrv.Pipeline{
		{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: bson.D{{Key: "state", Value: "$state"}, {Key: "attempts", Value: "$attempts"}}},
			{Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}},
		}}},
	})
	if err != nil {
		t.Fatalf("jobs by state: %v", err)
	}
	var rows []struct {
		ID struct {
			State    string `bson:"state"`
			Attempts int    `bson:"attempts"`
		} `bson:"_id"`
		N int `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		t.Fatalf("jobs by state: %v", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[fmt.Sprintf("%s/attempts=%d", r.ID.State, r.ID.Attempts)] += r.N
	}
	return out
}

func (m *mongoStore) lastFinished(t *testing.T) time.Time {
	t.Helper()
	var d struct {
		FinishedAt time.Time `bson:"finishedAt"`
	}
	err := m.db.Collection("jobs").FindOne(testCtx(t), bson.D{{Key: "finishedAt", Value: bson.D{{Key: "$exists", Value: true}}}},
		options.FindOne().SetSort(bson.D{{Key: "finishedAt", Value: -1}}).SetProjection(bson.D{{Key: "finishedAt", Value: 1}})).Decode(&d)
	if err != nil {
		t.Fatalf("last finished job: %v", err)
	}
	return d.FinishedAt
}

func (m *mongoStore) leasedBy(t *testing.T, owner string) map[string]bool {
	t.Helper()
	ctx := testCtx(t)
	cur, err := m.db.Collection("jobs").Find(ctx,
		bson.D{{Key: "state", Value: string(domain.JobLeased)}, {Key: "leaseOwner", Value: owner}},
		options.Find().SetProjection(bson.D{{Key: "activityId", Value: 1}}))
	if err != nil {
		t.Fatalf("leases of %s: %v", owner, err)
	}
	var docs []struct {
		ActivityID string `bson:"activityId"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatalf("leases of %s: %v", owner, err)
	}
	out := map[string]bool{}
	for _, d := range docs {
		out[d.ActivityID] = true
	}
	return out
}

// capHeld counts the host locks still held: a capped lease holds its
// host's lock (job_host_locks, adapters/mongo) only while it counts and
// leases, and gives it back at once.
func (m *mongoStore) capHeld(t *testing.T) int {
	t.Helper()
	n, err := m.db.Collection("job_host_locks").CountDocuments(testCtx(t),
		bson.D{{Key: "until", Value: bson.D{{Key: "$gt", Value: time.Now().UTC()}}}})
	if err != nil {
		t.Fatalf("host locks: %v", err)
	}
	return int(n)
}

// serverCPU measures the whole Mongo server when it runs on this machine:
// the FerretDB process and the PostgreSQL cluster under it (its
// postmaster's data directory names mongo-compat, as setup.sh makes it),
// from /proc. It is the server's CPU over the run, shared with whatever
// else used that server meanwhile (another proof, another session's
// tests): a figure for the report, asserted nowhere.
func (m *mongoStore) serverCPU(t *testing.T) func() (time.Duration, string, bool) {
	before, ok := mongoServerCPU()
	return func() (time.Duration, string, bool) {
		after, ok2 := mongoServerCPU()
		return after - before, "FerretDB and its PostgreSQL (the whole server)", ok && ok2
	}
}

// mongoServerCPU sums the CPU of every ferretdb process, and of the
// mongo-compat PostgreSQL cluster: its postmaster (with the CPU of its
// children that exited) and its live children.
func mongoServerCPU() (time.Duration, bool) {
	type proc struct {
		ppid       int
		comm       string
		cpu, child time.Duration
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	procs := map[int]proc{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 15 {
			continue
		}
		tick := func(i int) time.Duration { n, _ := strconv.Atoi(f[i]); return time.Duration(n) * 10 * time.Millisecond }
		ppid, _ := strconv.Atoi(f[1])
		procs[pid] = proc{ppid: ppid, comm: s[open+1 : closing], cpu: tick(11) + tick(12), child: tick(13) + tick(14)}
	}
	var total time.Duration
	found := false
	for pid, p := range procs {
		switch {
		case p.comm == "ferretdb":
			total += p.cpu
			found = true
		case p.comm == "postgres" && procs[p.ppid].comm != "postgres":
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if !strings.Contains(string(cmd), "mongo-compat") {
				continue
			}
			total += p.cpu + p.child
			for _, c := range procs {
				if c.ppid == pid {
					total += c.cpu
				}
			}
		}
	}
	return total, found
}
