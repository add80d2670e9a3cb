package mongo_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/event"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// BenchmarkLeaseAndSettle drains a queue as the engine does, through the
// Mongo job store only: leases of up to batch jobs with the per-host cap of
// 2, each lease's jobs settled as succeeded in one Settle, by workers
// leasers at once (each its own loop, one client). It reports the jobs
// drained per second and the commands sent per job (every command the
// client sent during the drain: finds, bulk writes, the bodies' reads), the
// round trips that are the cost on a real network.
//
//	MONGODB_URI=mongodb://127.0.0.1:27027/ go test -run '^$' -bench LeaseAndSettle -benchtime 1x ./adapters/mongo/
func BenchmarkLeaseAndSettle(b *testing.B) {
	if serverURI == "" || server == nil {
		b.Skip("no MongoDB server (set MONGODB_URI)")
	}
	for _, c := range []struct{ batch, workers int }{{1, 1}, {8, 1}, {32, 1}, {8, 4}} {
		b.Run(fmt.Sprintf("batch=%d/workers=%d", c.batch, c.workers), func(b *testing.B) {
			benchDrain(b, c.batch, c.workers)
		})
	}
}

func benchDrain(b *testing.B, batch, workers int) {
	const jobs, hosts = 1000, 100
	var counting atomic.Bool
	var commands atomic.Int64
	var mu sync.Mutex
	byName := map[string]time.Duration{}
	countOf := map[string]int{}
	monitor := &event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) {
		if counting.Load() {
			commands.Add(1)
		}
	}, Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
		if counting.Load() {
			mu.Lock()
			byName[e.CommandName] += e.Duration
			countOf[e.CommandName]++
			mu.Unlock()
		}
	}}
	defer func() {
		for n, d := range byName {
			b.Logf("%s: %d commands, mean %v", n, countOf[n], d/time.Duration(countOf[n]))
		}
	}()
	ctx := context.Background()
	c, err := mongodrv.Connect(ctx, options.Client().ApplyURI(serverURI).SetMonitor(monitor))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Disconnect(ctx)
	var drained int64
	var took time.Duration
	for range b.N {
		b.StopTimer()
		db, drop := benchDB(b, c)
		s := mongo.NewJobStore(db)
		base := time.Now().Add(-time.Hour)
		all := make([]domain.Job, jobs)
		for i := range all {
			j, err := domain.NewJob(contract.JobID(fmt.Sprintf("j%05d", i)), fmt.Sprintf("https://local.example/a/%d", i),
				fmt.Sprintf("https://h%03d.example/inbox", i%hosts), "actor-1", "https://local.example/users/a#main-key",
				[]byte(`{"type":"Create"}`), base)
			if err != nil {
				b.Fatal(err)
			}
			j.RunAt = base.Add(time.Duration(i) * time.Millisecond)
			all[i] = j
		}
		if _, err := s.Enqueue(ctx, all); err != nil {
			b.Fatal(err)
		}
		counting.Store(true)
		b.StartTimer()
		start := time.Now()
		var done atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; done.Load() < jobs; i++ {
					tok := fmt.Sprintf("w%d-%d", w, i)
					now := time.Now()
					got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "bench", Token: tok, Now: now, Until: now.Add(2 * time.Minute), Limit: batch, PerHost: 2})
					if err != nil {
						errs <- err
						return
					}
					if len(got) == 0 {
						continue // the others hold the rest
					}
					sts := make([]ports.Settlement, len(got))
					for k, j := range got {
						sts[k] = ports.Settlement{ID: j.ID, Token: tok, State: domain.JobSucceeded, Attempts: 1, FinishedAt: now}
					}
					lost, err := s.Settle(ctx, sts)
					if err != nil {
						errs <- err
						return
					}
					for _, l := range lost {
						if l != nil {
							errs <- l
							return
						}
					}
					done.Add(int64(len(got)))
				}
			}()
		}
		wg.Wait()
		took += time.Since(start)
		b.StopTimer()
		counting.Store(false)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		drained += done.Load()
		drop()
		b.StartTimer()
	}
	b.ReportMetric(float64(drained)/took.Seconds(), "jobs/s")
	b.ReportMetric(float64(commands.Load())/float64(drained), "cmds/job")
	b.ReportMetric(0, "ns/op") // the drain's time is in jobs/s
}

// benchDB is a fresh database prepared as bootstrap prepares one.
func benchDB(b *testing.B, c *mongodrv.Client) (*mongodrv.Database, func()) {
	b.Helper()
	ctx := context.Background()
	db := c.Database(fmt.Sprintf("herald_bench_%d", time.Now().UnixNano()))
	if err := mongo.Touch(ctx, db); err != nil {
		b.Fatal(err)
	}
	if _, err := mongo.EnsureIndexes(ctx, db, nil); err != nil {
		b.Fatal(err)
	}
	return db, func() { _ = db.Drop(ctx) }
}

// BenchmarkQueueView measures the operator's queue view
// (application.Operator.Queue: Counts and CountsByHost of queued, leased
// and dead, side by side) at the soak's load (issue 36): 30,000 queued and
// 120,000 finished jobs kept, on 200 hosts; a reading, and the answers of
// a page that polls.
//
//	MONGODB_URI=mongodb://127.0.0.1:27027/ go test -run '^$' -bench QueueView -benchtime 20x ./adapters/mongo/
func BenchmarkQueueView(b *testing.B) {
	if serverURI == "" || server == nil {
		b.Skip("no MongoDB server (set MONGODB_URI)")
	}
	ctx := context.Background()
	c, err := mongodrv.Connect(ctx, options.Client().ApplyURI(serverURI))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Disconnect(ctx)
	db, drop := benchDB(b, c)
	defer drop()
	now := time.Now().UTC()
	const total, queued = 150_000, 30_000
	for start := 0; start < total; start += 1000 {
		docs := make([]any, 0, 1000)
		for i := start; i < start+1000; i++ {
			d := bson.M{"_id": contract.JobID(fmt.Sprintf("j%07d", i)), "dedupeKey": fmt.Sprintf("k%07d", i),
				"activityId": fmt.Sprintf("https://local.example/a/%d", i/1000), "inbox": "/inbox", "host": fmt.Sprintf("h%d.example", i%200),
				"senderId": "actor-1", "keyId": "https://local.example/users/a#main-key", "bodyId": "b", "state": "queued", "attempts": 0,
				"runAt": now.Add(time.Duration(i) * time.Millisecond), "createdAt": now}
			if i >= queued {
				d["state"], d["attempts"], d["finishedAt"] = "succeeded", 1, now
				if i%100 == 0 {
					d["state"], d["lastError"] = "dead", "HTTP 410"
				}
			}
			docs = append(docs, d)
		}
		if _, err := db.Collection("jobs").InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	s := mongo.NewJobStore(db)
	// Each reading once, timed on its own: which of them the view waits for.
	start := time.Now()
	if _, err := s.Counts(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("Counts: %v", time.Since(start))
	for _, st := range []domain.JobState{domain.JobQueued, domain.JobLeased, domain.JobDead} {
		start := time.Now()
		if _, err := s.CountsByHost(ctx, st, 20); err != nil {
			b.Fatal(err)
		}
		b.Logf("CountsByHost(%s): %v", st, time.Since(start))
	}
	newOperator := func() *application.Operator {
		return application.NewOperator(application.OperatorDeps{JobAdmin: s, Jobs: s, Clock: system.Clock{}})
	}
	check := func(b *testing.B, q application.QueueStats, err error) {
		if err != nil || q.ByState[domain.JobQueued] != queued {
			b.Fatalf("queue view %v, %v", q.ByState, err)
		}
	}
	// A reading: an operator of its own each time, with no reading kept.
	b.Run("reading", func(b *testing.B) {
		for b.Loop() {
			q, err := newOperator().Queue(ctx)
			check(b, q, err)
		}
	})
	// What a page polling every 100 ms gets: where a reading took
	// application.SlowQueueReading or more, answers come from the latest
	// reading while the next is read behind them. Reported: the slowest
	// answer and the oldest reading answered with.
	b.Run("polled", func(b *testing.B) {
		op := newOperator()
		q, err := op.Queue(ctx)
		check(b, q, err)
		var slowest, oldest time.Duration
		for b.Loop() {
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			q, err := op.Queue(ctx)
			check(b, q, err)
			slowest, oldest = max(slowest, time.Since(start)), max(oldest, start.Sub(q.At))
		}
		b.ReportMetric(float64(slowest.Microseconds())/1000, "ms-slowest-answer")
		b.ReportMetric(float64(oldest.Microseconds())/1000, "ms-oldest-reading")
	})
}
