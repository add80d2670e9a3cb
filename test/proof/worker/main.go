// Command worker is one delivery process of the proofs (test/proof): the
// real engine (application/engine) over the stores -store names (postgres, mongo or
// sqlite; by default postgres, or sqlite with -data-dir) and the real
// signed HTTP client, and nothing else (no HTTP server, no migrations: the
// test prepares the schema or database). The proofs start several of it
// as OS processes, kill some with SIGKILL, and cut their database away.
//
// It logs JSON to stderr (the engine's, the waker's and its own lines) and
// writes events to stdout, one JSON object a line:
//
//	{"event":"ready",...}    the engine runs and its LISTEN connection is up
//	                         (on the stores without a cross-process
//	                         wake-up, SQLite and Mongo: once connected)
//	{"event":"reaped",...}   a reaper pass of this process recovered jobs
//	{"event":"failed",...}   a delivery attempt failed: host, kind, status, reason
//	{"event":"summary",...}  at exit after SIGTERM: what the observer counted
//
// Every request it sends carries the User-Agent "herald-proof/<name>", so the
// test's fake inboxes know which process sent what.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// UserAgentPrefix starts the User-Agent of every delivery; the process name
// follows.
const UserAgentPrefix = "herald-proof/"

func main() {
	os.Exit(run())
}

func run() int {
	var (
		name     = flag.String("name", "", "this process's name, sent in the User-Agent and used as lease owner")
		dbURL    = flag.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (search_path selects the schema)")
		dataDir  = flag.String("data-dir", "", "SQLite data directory: run on the SQLite stores instead (the test migrates it)")
		store    = flag.String("store", "", "postgres, mongo or sqlite (default: sqlite with -data-dir, else postgres)")
		mongoURI = flag.String("mongodb-uri", os.Getenv("MONGODB_URI"), "MongoDB URI (-store mongo)")
		mongoDB  = flag.String("mongo-database", "", "Mongo database the test prepared (-store mongo)")
		workers  = flag.Int("workers", 8, "deliveries at a time (HERALD_WORKERS)")
		perHost  = flag.Int("per-host", 2, "deliveries at a time per host (HERALD_PER_HOST)")
		leaseFor = flag.Duration("lease", 2*time.Minute, "lease length (production: 2m)")
		reap     = flag.Duration("reap", 30*time.Second, "reaper period (production: 30s)")
		poll     = flag.Duration("poll", 5*time.Second, "lease poll without wake-ups (production: 5s)")
		grace    = flag.Duration("grace", 10*time.Second, "shutdown grace for in-flight deliveries")
		timeout  = flag.Duration("timeout", 10*time.Second, "timeout of one delivery")
	)
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile here (diagnosis only)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("proc", *name)
	if *store == "" {
		*store = "postgres"
		if *dataDir != "" {
			*store = "sqlite"
		}
	}
	usage := map[string]bool{
		"postgres": *dbURL != "", "sqlite": *dataDir != "", "mongo": *mongoURI != "" && *mongoDB != "",
	}
	if ok, known := usage[*store]; *name == "" || !known || !ok {
		log.Error("worker needs -name and, by -store: postgres -database-url (or DATABASE_URL), sqlite -data-dir, " +
			"mongo -mongodb-uri (or MONGODB_URI) and -mongo-database")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var st stores
	var err error
	switch *store {
	case "sqlite":
		st, err = openSQLite(ctx, *dataDir, log)
	case "mongo":
		st, err = openMongo(ctx, *mongoURI, *mongoDB, log)
	default:
		st, err = openPostgres(ctx, *dbURL, log)
	}
	if err != nil {
		log.Error("cannot connect", "err", err)
		return 1
	}
	defer st.close()

	out := &events{enc: json.NewEncoder(os.Stdout)}
	obs := &observer{out: out}
	client := delivery.New(delivery.Config{
		Timeout:      *timeout,
		AllowPrivate: true, // the fake inboxes are on loopback
		UserAgent:    UserAgentPrefix + *name,
	})
	defer client.Close()
	waker := &readyWaker{inner: st.wakes, ready: func() {
		out.emit(map[string]any{"event": "ready", "name": *name, "pid": os.Getpid()})
	}}
	jobs := &watchedJobs{JobStore: st.jobs, held: map[string]lease{}}
	eng := engine.New(engine.Deps{
		Jobs:      jobs,
		Instances: st.instances,
		Deliverer: client,
		// As bootstrap wires it: keys cached for a minute, not read per job.
		Keys:     engine.NewCachedKeys(engine.ActorKeys{Actors: st.actors}, system.Clock{}),
		Clock:    system.Clock{},
		Random:   system.Random{},
		IDs:      system.IDs{},
		Wakes:    waker,
		Observer: obs,
		Log:      log,
	}, engine.Config{
		Workers: *workers, PerHost: *perHost, LeaseFor: *leaseFor, ReapEvery: *reap, PollEvery: *poll,
		Grace: *grace, Owner: fmt.Sprintf("%s/%d", *name, os.Getpid()),
	})
	cfg := eng.Config()
	log.Info("worker starting", "workers", cfg.Workers, "per_host", cfg.PerHost, "lease", cfg.LeaseFor,
		"reap_every", cfg.ReapEvery, "poll_every", cfg.PollEvery)
	_ = eng.Run(ctx)
	s := obs.summary()
	jobs.report(s)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s["cpu_seconds"] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	s["event"], s["name"], s["pid"] = "summary", *name, os.Getpid()
	out.emit(s)
	return 0
}

// events writes one JSON object a line to stdout, whole lines only.
type events struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (e *events) emit(v map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.enc.Encode(v)
}

// readyWaker passes the waker's wake-ups on and announces the first one:
// the waker wakes the engine once its LISTEN took effect, so from then on an
// enqueue in another process reaches this one at once.
type readyWaker struct {
	inner ports.WakeSource
	ready func()
}

func (w *readyWaker) Wakeups(ctx context.Context) <-chan struct{} {
	in := w.inner.Wakeups(ctx)
	out := make(chan struct{}, 1)
	go func() {
		first := true
		for {
			select {
			case <-ctx.Done():
				return
			case <-in:
				if first {
					first = false
					w.ready()
				}
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}

// observer counts what the engine reports, and writes every reaper pass
// that recovered jobs, and every failed delivery, to stdout at once (so it
// is known even if this process is killed afterwards).
type observer struct {
	out                                   *events
	leases, leasesFound                   atomic.Int64
	delivered, deliveredOK                atomic.Int64
	succeeded, retried, dead              atomic.Int64
	reapPasses, reapRequeued, reapDead    atomic.Int64
	quarantines                           atomic.Int64
	maxInFlight                           atomic.Int64
	leaseNanos                            atomic.Int64
	settledOther                          atomic.Int64
	deliveredFailures, deliveredHostFails atomic.Int64
	leasedJobs, flushes, flushedResults   atomic.Int64
}

var _ ports.EngineObserver = (*observer)(nil)

func (o *observer) Leased(took time.Duration, jobs int) {
	o.leases.Add(1)
	o.leaseNanos.Add(int64(took))
	o.leasedJobs.Add(int64(jobs))
	if jobs > 0 {
		o.leasesFound.Add(1)
	}
}

func (o *observer) Flushed(_ time.Duration, results int) {
	o.flushes.Add(1)
	o.flushedResults.Add(int64(results))
}

func (o *observer) Delivered(host string, out domain.Outcome, _ time.Duration) {
	o.delivered.Add(1)
	if out.Kind == domain.OutcomeDelivered {
		o.deliveredOK.Add(1)
	} else {
		o.deliveredFailures.Add(1)
		// Said at once (the engine logs a retry at debug level only), so a
		// proof that expects no failure can say which one it met.
		o.out.emit(map[string]any{"event": "failed", "host": host, "kind": out.Kind.String(), "status": out.Status, "reason": out.Reason})
	}
	if out.HostFailure {
		o.deliveredHostFails.Add(1)
	}
}

func (o *observer) Settled(s domain.JobState) {
	switch s {
	case domain.JobSucceeded:
		o.succeeded.Add(1)
	case domain.JobQueued:
		o.retried.Add(1)
	case domain.JobDead:
		o.dead.Add(1)
	default:
		o.settledOther.Add(1)
	}
}

func (o *observer) Reaped(r ports.ReapResult) {
	o.reapPasses.Add(1)
	o.reapRequeued.Add(int64(r.Requeued))
	o.reapDead.Add(int64(r.Dead))
	o.out.emit(map[string]any{"event": "reaped", "requeued": r.Requeued, "dead": r.Dead})
}

func (o *observer) Quarantined(string, time.Time) { o.quarantines.Add(1) }

func (o *observer) InFlight(n int) {
	for {
		m := o.maxInFlight.Load()
		if int64(n) <= m || o.maxInFlight.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

func (o *observer) summary() map[string]any {
	leases := o.leases.Load()
	var meanLease float64
	if leases > 0 {
		meanLease = float64(o.leaseNanos.Load()) / float64(leases) / 1e6
	}
	return map[string]any{
		"leases": leases, "leases_found": o.leasesFound.Load(), "mean_lease_ms": meanLease,
		"leased_jobs": o.leasedJobs.Load(), "flushes": o.flushes.Load(), "flushed_results": o.flushedResults.Load(),
		"delivered": o.delivered.Load(), "delivered_ok": o.deliveredOK.Load(),
		"delivered_failures": o.deliveredFailures.Load(), "host_failures": o.deliveredHostFails.Load(),
		"succeeded": o.succeeded.Load(), "retried": o.retried.Load(), "dead": o.dead.Load(),
		"reap_passes": o.reapPasses.Load(), "reaped_requeued": o.reapRequeued.Load(), "reaped_dead": o.reapDead.Load(),
		"quarantines": o.quarantines.Load(), "max_in_flight": o.maxInFlight.Load(),
	}
}

// watchedJobs is the store's JobStore with a stopwatch: it notes when
// each lease of this process was taken and until when it held, and at the
// job's settlement how long the job was held and whether that was after its
// lease had ended. It changes nothing.
type watchedJobs struct {
	ports.JobStore
	mu             sync.Mutex
	held           map[string]lease // job id → its current lease
	maxHold        time.Duration
	settled        int64
	afterLeaseEnd  int64 // settlements that came after the lease's end
	leaseLostCount int64 // settlements refused with ErrLeaseLost
}

type lease struct{ at, until time.Time }

func (w *watchedJobs) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	jobs, err := w.JobStore.LeaseBatch(ctx, req)
	w.mu.Lock()
	for _, j := range jobs {
		w.held[j.ID] = lease{at: time.Now(), until: j.LeaseUntil}
	}
	w.mu.Unlock()
	return jobs, err
}

func (w *watchedJobs) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	lost, err := w.JobStore.Settle(ctx, batch)
	if err != nil {
		return lost, err // the engine retries or gives up; the leases are still ours or lost
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, st := range batch {
		if errors.Is(lost[i], domain.ErrLeaseLost) {
			w.leaseLostCount++
			continue
		}
		l, ok := w.held[st.ID]
		if !ok {
			continue
		}
		delete(w.held, st.ID)
		w.settled++
		w.maxHold = max(w.maxHold, now.Sub(l.at))
		if now.After(l.until) {
			w.afterLeaseEnd++
		}
	}
	return lost, nil
}

func (w *watchedJobs) report(s map[string]any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s["store_settled"] = w.settled
	s["settled_after_lease_end"] = w.afterLeaseEnd
	s["lease_lost"] = w.leaseLostCount
	s["max_hold_ms"] = float64(w.maxHold) / 1e6
	s["unsettled_leases"] = len(w.held)
}
