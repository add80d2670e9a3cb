package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/postgres"
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
}

func storesFor(dbURL, mongoURI string) []storeKind {
	kinds := []storeKind{
		{name: "memory", open: func(context.Context) (jobStore, func(), error) { return memory.NewJobStore(), func() {}, nil }},
		{name: "postgres", open: func(ctx context.Context) (jobStore, func(), error) { return openPostgres(ctx, dbURL) }},
	}
	m := storeKind{name: "mongo", skip: "no MongoDB server here (set MONGODB_URI to measure it)"}
	if mongoURI != "" {
		m.skip = ""
		m.open = func(ctx context.Context) (jobStore, func(), error) { return openMongo(ctx, mongoURI) }
	}
	return append(kinds, m)
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
	client, err := mongo.Connect(ctx, uri)
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
	return mongo.NewJobStore(db), cleanup, nil
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

// makeJobs builds n deliveries of one activity to n inboxes on hosts hosts,
// due from runAt on (spread by a millisecond each, as a fan-out's are not).
func makeJobs(prefix string, n, hosts int, runAt time.Time) []domain.Job {
	jobs := make([]domain.Job, n)
	for i := range jobs {
		id := fmt.Sprintf("%s-%08d", prefix, i)
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
