package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/event"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
	"go.mongodb.org/mongo-driver/mongo/writeconcern"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// jobStore is the part of a store the benchmarks drive.
type jobStore interface {
	ports.JobStore
	ports.JobAdmin
}

// storeKind opens a fresh, empty job store of one technology.
type storeKind struct {
	name string
	open func(ctx context.Context) (jobStore, func(), error)
	skip string // why it is not measured, when empty it is
	// roundTrips measures the store's floor: committed one-row writes per
	// second with the given concurrency (a lease and its completion are
	// two of them). Nil for the memory store, whose floor is itself.
	roundTrips func(ctx context.Context, workers int) (float64, error)
}

func storesFor(dbURL, mongoURI string) []storeKind {
	kinds := []storeKind{
		{name: "memory", open: func(context.Context) (jobStore, func(), error) { return memory.NewJobStore(), func() {}, nil }},
		{name: "sqlite", open: func(ctx context.Context) (jobStore, func(), error) {
			db, cleanup, err := openSQLite(ctx)
			if err != nil {
				return nil, nil, err
			}
			return sqlite.NewJobStore(db), cleanup, nil
		}, roundTrips: sqliteWrites},
		{name: "postgres", open: func(ctx context.Context) (jobStore, func(), error) { return openPostgres(ctx, dbURL) },
			roundTrips: func(ctx context.Context, workers int) (float64, error) { return postgresWrites(ctx, dbURL, workers) }},
	}
	m := storeKind{name: "mongo", skip: "no MongoDB server here (set MONGODB_URI to measure it)"}
	if mongoURI != "" {
		m.skip = ""
		m.open = func(ctx context.Context) (jobStore, func(), error) { return openMongo(ctx, mongoURI) }
		m.roundTrips = func(ctx context.Context, workers int) (float64, error) { return mongoWrites(ctx, mongoURI, workers) }
	}
	return append(kinds, m)
}

// openSQLite opens and migrates a database in a data directory of its
// own, removed by the cleanup, with the settings `herald serve` uses.
func openSQLite(ctx context.Context) (*sqlite.DB, func(), error) {
	dir, err := os.MkdirTemp("", "heraldbench-sqlite-")
	if err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(ctx, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	cleanup := func() {
		_ = db.Close()
		_ = os.RemoveAll(dir)
	}
	if err := sqlite.MigrateUp(ctx, db, slog.New(slog.DiscardHandler)); err != nil {
		cleanup()
		return nil, nil, err
	}
	if err := sqlite.EnsureIndexes(ctx, db); err != nil {
		cleanup()
		return nil, nil, err
	}
	return db, cleanup, nil
}

// sqliteWrites is the floor of the SQLite store on this machine: committed
// one-row UPDATEs per second through its one writer connection (a
// FollowerStore.SetState is one such statement), each a WAL append and an
// fsync, with the given concurrency, for three seconds.
func sqliteWrites(ctx context.Context, workers int) (float64, error) {
	db, cleanup, err := openSQLite(ctx)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	followers := sqlite.NewFollowerStore(db)
	now := time.Now()
	for w := 0; w < 64; w++ {
		f, err := domain.NewFollower(fmt.Sprintf("https://r.example/u/%d", w), "https://herald.example/users/alice", "", domain.FollowPending, now)
		if err != nil {
			return 0, err
		}
		if _, err := followers.Add(ctx, f); err != nil {
			return 0, err
		}
	}
	return countFor(3*time.Second, workers, func(w int) error {
		return followers.SetState(ctx, fmt.Sprintf("https://r.example/u/%d", w%64), "https://herald.example/users/alice", domain.FollowAccepted, time.Now())
	})
}

// countFor runs op in workers goroutines for d and returns the operations
// per second; the first error stops the count.
func countFor(d time.Duration, workers int, op func(worker int) error) (float64, error) {
	var total atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := op(w); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				total.Add(1)
			}
		}(w)
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return 0, err
	}
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}

// openPostgres migrates a schema of its own, dropped by the cleanup.
func openPostgres(ctx context.Context, dbURL string) (jobStore, func(), error) {
	admin, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return nil, nil, err
	}
	schema := "bench_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return nil, nil, err
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		admin.Close()
		return nil, nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	pool, err := postgres.Connect(ctx, u.String())
	if err == nil {
		err = postgres.MigrateUp(ctx, pool, slog.New(slog.DiscardHandler))
	}
	if err == nil {
		err = postgres.EnsureIndexes(ctx, pool)
	}
	cleanup := func() {
		if pool != nil {
			pool.Close()
		}
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return postgres.NewJobStore(pool), cleanup, nil
}

func openMongo(ctx context.Context, uri string) (jobStore, func(), error) {
	db, cleanup, err := openMongoDB(ctx, uri, nil)
	if err != nil {
		return nil, nil, err
	}
	return mongo.NewJobStore(db), cleanup, nil
}

// openMongoDB is a fresh database prepared as `herald serve` prepares one,
// dropped by the cleanup; monitor (may be nil) sees the client's commands.
func openMongoDB(ctx context.Context, uri string, monitor *event.CommandMonitor) (*mongodrv.Database, func(), error) {
	var extra []*options.ClientOptions
	if monitor != nil {
		extra = append(extra, options.Client().SetMonitor(monitor))
	}
	client, err := mongo.Connect(ctx, uri, extra...)
	if err != nil {
		return nil, nil, err
	}
	name := "bench_" + strings.ToLower(rand.Text()[:10])
	db := client.Database(name)
	cleanup := func() {
		_ = db.Drop(context.Background())
		_ = client.Disconnect(context.Background())
	}
	if err := prepareMongo(ctx, client, db, name); err != nil {
		cleanup()
		return nil, nil, err
	}
	return db, cleanup, nil
}

func prepareMongo(ctx context.Context, client *mongodrv.Client, db *mongodrv.Database, name string) error {
	if err := mongo.Touch(ctx, db); err != nil {
		return err
	}
	if err := mongo.MigrateUp(ctx, client, name, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	_, err := mongo.EnsureIndexes(ctx, db, slog.New(slog.DiscardHandler))
	return err
}

// payload is a realistic Create{Note} of about 1 KiB.
var payload = []byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://herald.example/users/alice/activities/01","type":"Create","actor":"https://herald.example/users/alice","published":"2026-12-02T12:00:00Z","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["https://herald.example/users/alice/followers"],"object":{"id":"https://herald.example/users/alice/statuses/01","type":"Note","attributedTo":"https://herald.example/users/alice","content":"` + strings.Repeat("Federation is a team sport. ", 24) + `","published":"2026-12-02T12:00:00Z","to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["https://herald.example/users/alice/followers"]}}`)

// benchJobID is the i-th job id of a run named prefix: a UUID (as every
// job id is) whose first bytes hash the prefix and whose last count i, so
// a run's ids are distinct from another's and ascend as UUIDv7s do.
func benchJobID(prefix string, i int) string {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return fmt.Sprintf("%08x-0000-7000-8000-%012x", h.Sum32(), i)
}

// makeJobs builds n deliveries of one activity to n inboxes on hosts hosts,
// due from runAt on (spread by a millisecond each, as a fan-out's are not).
func makeJobs(prefix string, n, hosts int, runAt time.Time) []domain.Job {
	jobs := make([]domain.Job, n)
	for i := range jobs {
		id := benchJobID(prefix, i)
		inbox := fmt.Sprintf("https://h%04d.example/users/u%d/inbox", i%hosts, i)
		j, err := domain.NewJob(id, "https://herald.example/activities/"+prefix, inbox, "sender", "https://herald.example/users/alice#main-key", payload, runAt)
		if err != nil {
			panic(err)
		}
		j.RunAt = runAt.Add(time.Duration(i) * time.Millisecond)
		jobs[i] = j
	}
	return jobs
}

// fill enqueues n jobs in batches of 10,000.
func fill(ctx context.Context, s jobStore, prefix string, n, hosts int, runAt time.Time) error {
	for start := 0; start < n; start += 10_000 {
		k := min(10_000, n-start)
		jobs := makeJobs(fmt.Sprintf("%s%03d", prefix, start/10_000), k, hosts, runAt.Add(time.Duration(start)*time.Millisecond))
		if _, err := s.Enqueue(ctx, jobs); err != nil {
			return err
		}
	}
	return nil
}

// mongoServer names the server at uri as its buildInfo does (FerretDB
// says it is one), for a table's note.
func mongoServer(ctx context.Context, uri string) string {
	client, err := mongo.Connect(ctx, uri)
	if err != nil {
		return "the server at MONGODB_URI (" + err.Error() + ")"
	}
	defer client.Disconnect(context.Background())
	var info struct {
		Version  string `bson:"version"`
		FerretDB *struct {
			Version string `bson:"version"`
		} `bson:"ferretdb"`
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return "the server at MONGODB_URI (buildInfo: " + err.Error() + ")"
	}
	if info.FerretDB != nil {
		return fmt.Sprintf("FerretDB %s (MongoDB %s wire protocol) at MONGODB_URI", info.FerretDB.Version, info.Version)
	}
	return "MongoDB " + info.Version + " at MONGODB_URI"
}

// mongoWrites is the floor of the Mongo store on its server: acknowledged
// single-document updates ($inc, majority write concern, as the stores
// write) per second, each worker on its own document, for three seconds.
func mongoWrites(ctx context.Context, uri string, workers int) (float64, error) {
	db, cleanup, err := openMongoDB(ctx, uri, nil)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	c := db.Collection("floor", options.Collection().SetWriteConcern(writeconcern.Majority()))
	docs := make([]any, 64)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "n", Value: 0}}
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		return 0, err
	}
	return countFor(3*time.Second, workers, func(w int) error {
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: w % 64}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
		return err
	})
}

// postgresWrites is the floor of any PostgreSQL queue on this machine: one
// committed single-row UPDATE per round trip, each worker on its own row so
// nothing waits on a lock, for three seconds.
func postgresWrites(ctx context.Context, dbURL string, workers int) (float64, error) {
	u, cleanup, err := freshSchema(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	pool, err := postgres.Connect(ctx, u)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE floor (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
		INSERT INTO floor (id) SELECT generate_series(0, 63)`); err != nil {
		return 0, err
	}
	return countFor(3*time.Second, workers, func(w int) error {
		_, err := pool.Exec(ctx, `UPDATE floor SET n = n + 1 WHERE id = $1`, w%64)
		return err
	})
}
