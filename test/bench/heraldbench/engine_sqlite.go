package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/event"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// benchEngineSQLite is the engine throughput run on the default store: the
// same 20,000 no-op jobs over 1,000 hosts, drained by the real Engine on
// the SQLite stores (the configuration `herald serve` uses), 8 and 32
// workers, three rounds interleaved with the same run on the memory
// stores, the bound: the engine's own cost, with no I/O. SQLite runs in
// process, so there are no statements to count on a wire; what costs is
// the commit (an fsync of the WAL each), and every write method of the
// SQLite stores is one commit, so the stores' write calls are counted.
func benchEngineSQLite(ctx context.Context, r *report) error {
	jobs, rounds := engineJobs, 3
	if r.quick {
		jobs, rounds = 5000, 1
	}
	runs := map[string][]engineRun{}
	for round := 0; round < rounds; round++ {
		for _, w := range []int{8, 32} {
			for _, store := range []string{"sqlite", "memory"} {
				h, err := runHeraldIn(ctx, store, w, jobs)
				if err != nil {
					return fmt.Errorf("herald on %s, %d workers: %w", store, w, err)
				}
				fmt.Fprintf(os.Stderr, "   %-6s %2d workers: %.0f jobs/s, %.3f commits/job\n", store, w, h.rate(), float64(h.Commits)/float64(h.Jobs))
				runs[key(store, w)] = append(runs[key(store, w)], h)
			}
		}
	}
	t := &table{
		title:   "Engine throughput on SQLite",
		command: "go run ./test/bench/heraldbench -only engine-sqlite",
		intro: fmt.Sprintf("The run of \"Engine throughput against River\" on the default store: %d no-op jobs over %d hosts drained by the real engine (`application/engine`) "+
			"on the SQLite stores (`synchronous=FULL`: every commit an fsync of the WAL; per-host cap 2), %d rounds interleaved with the same run on the memory stores, median. "+
			"Commits: the SQLite stores' write calls, each one statement or one `BEGIN IMMEDIATE` transaction; a lease batch that found nothing writes no WAL frame and is not counted. "+
			"Bound: the same engine on the memory stores (its own cost, no I/O), at the same worker count.",
			jobs, engineHosts, rounds),
		header: []string{"store", "workers", "jobs per second", "commits per job", "bound (jobs/s)", "ratio to bound", "32 / 8 workers"},
	}
	for _, w := range []int{8, 32} {
		m, bound := median(runs[key("sqlite", w)]), median(runs[key("memory", w)])
		vs8 := "–"
		if w == 32 {
			vs8 = ratio(m.rate(), median(runs[key("sqlite", 8)]).rate())
		}
		t.rows = append(t.rows, []string{"sqlite", fmt.Sprint(w), fmt.Sprintf("%.0f", m.rate()), fmt.Sprintf("%.3f", float64(m.Commits)/float64(m.Jobs)),
			fmt.Sprintf("%.0f", bound.rate()), ratio(m.rate(), bound.rate()), vs8})
	}
	r.add(t)
	return nil
}

// engineStores are the stores one engine run drains.
type engineStores struct {
	jobs      ports.JobStore
	instances ports.InstanceStore
	actors    ports.ActorStore
}

// runHeraldIn drains jobs with the real engine over fresh stores of one
// kind: "sqlite" (a data directory of its own) or "memory".
func runHeraldIn(ctx context.Context, store string, workers, jobs int) (engineRun, error) {
	return runHeraldOn(ctx, store, "", workers, jobs)
}

// runHeraldOn is runHeraldIn with the "mongo" kind too, on the server at
// mongoURI (a database of its own, dropped after): commits are then the
// job store's write calls and statements every command sent on the wire.
func runHeraldOn(ctx context.Context, store, mongoURI string, workers, jobs int) (engineRun, error) {
	var commits, commands atomic.Int64
	var counting atomic.Bool
	var st engineStores
	switch store {
	case "mongo":
		db, cleanup, err := openMongoDB(ctx, mongoURI, &event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) {
			if counting.Load() {
				commands.Add(1)
			}
		}})
		if err != nil {
			return engineRun{}, err
		}
		defer cleanup()
		st = engineStores{jobs: &countedJobs{JobStore: mongo.NewJobStore(db), commits: &commits},
			instances: &countedInstances{InstanceStore: mongo.NewInstanceStore(db), commits: &commits}, actors: mongo.NewAccountStore(db)}
	case "sqlite":
		db, cleanup, err := openSQLite(ctx)
		if err != nil {
			return engineRun{}, err
		}
		defer cleanup()
		st = engineStores{jobs: &countedJobs{JobStore: sqlite.NewJobStore(db), commits: &commits},
			instances: &countedInstances{InstanceStore: sqlite.NewInstanceStore(db), commits: &commits}, actors: sqlite.NewAccountStore(db)}
	case "memory":
		st = engineStores{jobs: memory.NewJobStore(), instances: memory.NewInstanceStore(), actors: memory.NewAccountStore()}
	default:
		return engineRun{}, fmt.Errorf("no engine run on %q", store)
	}
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		return engineRun{}, err
	}
	sender, err := domain.NewAvatar(system.IDs{}.NewID(), "", "sender", kp, time.Now())
	if err != nil {
		return engineRun{}, err
	}
	if err := st.actors.CreateAvatar(ctx, sender); err != nil {
		return engineRun{}, err
	}
	all := makeJobs("eng", jobs, engineHosts, time.Now().Add(-time.Hour))
	for i := range all {
		all[i].SenderID = sender.ID
	}
	if _, err := st.jobs.Enqueue(ctx, all); err != nil {
		return engineRun{}, err
	}
	commits.Store(0) // the enqueue is set-up, not the run
	counting.Store(true)

	obs := &settledCounter{want: int64(jobs), done: make(chan struct{})}
	clock := system.Clock{}
	// No wake source: the jobs are in before the engine starts, and its
	// first lease is at once (`herald serve` on SQLite is woken in process).
	eng := engine.New(engine.Deps{
		Jobs: st.jobs, Instances: st.instances, Deliverer: noopDeliverer{},
		Keys:  engine.NewCachedKeys(engine.ActorKeys{Actors: st.actors}, clock),
		Clock: clock, Random: system.Random{}, IDs: system.IDs{}, Observer: obs, Log: slog.New(slog.DiscardHandler),
	}, engine.Config{Workers: workers, PerHost: 2, Owner: "heraldbench"})
	var n, cmds int64
	took, err := drain(ctx, eng, obs, func() { n, cmds = commits.Load(), commands.Load() })
	if err != nil {
		return engineRun{}, err
	}
	return engineRun{System: "herald-" + store, Workers: workers, Jobs: jobs, Seconds: took.Seconds(), Commits: n, Statements: cmds}, nil
}

// countedJobs counts the job store's commits: every write method of the
// SQLite store is one, except a lease that found nothing (no change, no
// WAL frame, no fsync).
type countedJobs struct {
	ports.JobStore
	commits *atomic.Int64
}

func (c *countedJobs) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	jobs, err := c.JobStore.LeaseBatch(ctx, req)
	if len(jobs) > 0 {
		c.commits.Add(1)
	}
	return jobs, err
}

func (c *countedJobs) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	c.commits.Add(1)
	return c.JobStore.Settle(ctx, batch)
}

func (c *countedJobs) Reap(ctx context.Context, now time.Time, maxAttempts int) (ports.ReapResult, error) {
	c.commits.Add(1)
	return c.JobStore.Reap(ctx, now, maxAttempts)
}

// countedInstances counts the breaker's commits.
type countedInstances struct {
	ports.InstanceStore
	commits *atomic.Int64
}

func (c *countedInstances) Update(ctx context.Context, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error) {
	c.commits.Add(1)
	return c.InstanceStore.Update(ctx, host, fn)
}

func (c *countedInstances) UpdateMany(ctx context.Context, hosts []string, fn func(*domain.RemoteInstance)) (map[string]domain.RemoteInstance, error) {
	c.commits.Add(1)
	return c.InstanceStore.UpdateMany(ctx, hosts, fn)
}
