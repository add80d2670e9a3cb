package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The delivery path, one step per file:
//
//	enqueue.go    enqueue → wake the engine
//	engine.go     configuration, Run, the dispatch loop, reaper and purge (this file)
//	lease.go      lease → a batch of jobs for the free slots, in one round trip
//	deliver.go    deliver → one job's attempt and what it decided
//	outcome.go    outcome → the settlement that records it
//	completer.go  the completer: settlements and breaker changes written in batches
//	breaker.go    the breaker cache and the quarantine view the deliveries read

// Config holds the delivery engine's numbers (SPEC §2). Zero fields
// take the defaults of DefaultConfig.
type Config struct {
	Workers int // deliveries at a time in this process (8)
	// PerHost is the most deliveries at a time to one remote host (2), for
	// the whole deployment: the store counts every process's leases.
	PerHost int
	// Waits is the budget of waits on hosts that have not answered, beside
	// the Workers slots (Workers): a delivery to a host whose last attempt
	// failed runs in it from its start, and one to a host that has not
	// answered lately (its first contact) moves into it when it has run
	// ParkAfter without an answer, giving its slot back. A dead server's
	// timeout then costs a slot at most ParkAfter, not the whole timeout,
	// while at most Workers deliveries at a time go to hosts that answer.
	Waits int
	// FailingSlots caps the deliveries at a time, all hosts together, to
	// hosts whose last attempt failed (Workers/4, at least 1): they run in
	// the Waits budget, so that their retries leave room there for the
	// first contacts that wait.
	FailingSlots int
	// ParkAfter is how long a delivery to a host that has not answered
	// lately holds its slot before it waits in the Waits budget (1 s:
	// most servers answer in well under a second).
	ParkAfter time.Duration
	// Hold is how long an attempt that failed against its host holds the
	// host's other jobs, unattempted (holdFailedHosts): zero, the first step
	// of the retry curve (16 s and its jitter), or a 429's Retry-After if
	// longer; negative, no hold (the benchmark measures what it saves).
	Hold time.Duration

	LeaseFor   time.Duration // lease length (2 min)
	PollEvery  time.Duration // lease poll when nobody wakes the engine (5 s)
	ReapEvery  time.Duration // reaper period (30 s)
	PurgeEvery time.Duration // retention purge period (1 h); negative disables it (TTL stores)
	Retention  time.Duration // finished jobs are kept this long (7 days)
	Grace      time.Duration // shutdown grace for in-flight deliveries (30 s)
	Owner      string        // this process's name on its leases

	// BusyPoll is the lease poll for BusyFor (2 s) after a wake-up or a
	// lease that found work, when a lease comes back short of the free
	// slots (100 ms). Other processes may hold hosts at the per-host cap,
	// and their slots free without a word to this process; polling every
	// 5 s then would leave the whole fan-out to whichever process leased
	// first (SPEC §9: the work spreads across processes).
	BusyPoll time.Duration
	BusyFor  time.Duration

	// LeaseWindow is how long the dispatcher, woken by a freed slot while
	// other deliveries still run, waits for more slots to free before it
	// leases, so that one round trip fills several (1 ms; negative: lease
	// at once). It never delays a lease when every slot is free.
	LeaseWindow time.Duration
	// LeaseAhead is how many jobs the dispatcher leases beyond its free
	// slots while leases come back full (Workers; negative: none): the
	// next batch, leased while the current one is in flight, so that freed
	// slots need not wait for a round trip. They hold their leases and
	// their hosts' slots (for every process) while they wait; a kill -9
	// leaves them to the reaper, undelivered.
	LeaseAhead int
	// FlushEvery is how long the completer gathers results before it
	// writes them (10 ms); it writes at once when FlushMax results wait, or
	// when the dispatcher found nothing to lease.
	FlushEvery time.Duration
	// FlushMax is the most results one write carries (4×Workers, at least
	// 32). Deliveries running and results not yet written are what a kill
	// -9 sends again: the dispatcher starts no delivery while they number
	// Workers + Waits + FlushMax, so that is the bound however far the
	// store falls behind.
	FlushMax int
}

// DefaultConfig returns SPEC §2's numbers.
func DefaultConfig() Config {
	return Config{
		Workers:     8,
		PerHost:     2,
		ParkAfter:   time.Second,
		LeaseFor:    2 * time.Minute,
		PollEvery:   5 * time.Second,
		BusyPoll:    100 * time.Millisecond,
		BusyFor:     2 * time.Second,
		ReapEvery:   30 * time.Second,
		PurgeEvery:  time.Hour,
		Retention:   7 * 24 * time.Hour,
		Grace:       30 * time.Second,
		LeaseWindow: time.Millisecond,
		FlushEvery:  10 * time.Millisecond,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.PerHost <= 0 {
		c.PerHost = d.PerHost
	}
	if c.Waits <= 0 {
		c.Waits = c.Workers
	}
	if c.FailingSlots <= 0 {
		c.FailingSlots = max(1, c.Workers/4)
	}
	c.FailingSlots = min(c.FailingSlots, c.Waits)
	if c.ParkAfter <= 0 {
		c.ParkAfter = d.ParkAfter
	}
	if c.LeaseFor <= 0 {
		c.LeaseFor = d.LeaseFor
	}
	if c.PollEvery <= 0 {
		c.PollEvery = d.PollEvery
	}
	if c.BusyPoll <= 0 {
		c.BusyPoll = d.BusyPoll
	}
	c.BusyPoll = min(c.BusyPoll, c.PollEvery)
	if c.BusyFor <= 0 {
		c.BusyFor = d.BusyFor
	}
	if c.ReapEvery <= 0 {
		c.ReapEvery = d.ReapEvery
	}
	if c.PurgeEvery == 0 {
		c.PurgeEvery = d.PurgeEvery
	}
	if c.Retention <= 0 {
		c.Retention = d.Retention
	}
	if c.Grace <= 0 {
		c.Grace = d.Grace
	}
	if c.Owner == "" {
		c.Owner = "herald"
	}
	if c.LeaseWindow == 0 {
		c.LeaseWindow = d.LeaseWindow
	}
	if c.LeaseAhead == 0 {
		c.LeaseAhead = c.Workers
	}
	if c.FlushEvery <= 0 {
		c.FlushEvery = d.FlushEvery
	}
	if c.FlushMax <= 0 {
		c.FlushMax = max(32, 4*c.Workers)
	}
	return c
}

// Engine is the delivery engine: one dispatcher that leases a batch of
// jobs for this process's free slots in one round trip (the store keeps the
// per-host cap for every process), a goroutine per running delivery, a
// completer that writes the results in batches, a reaper and a retention
// purge. A slow or dead host can hold at most PerHost slots, and a host
// that has not answered lately gives its slot back after ParkAfter (Waits).
//
// Two waits are on the wall clock, not the injected one: the dispatcher's
// LeaseWindow and the completer's FlushEvery. They are throughput devices
// of a millisecond or a few, deciding only how many jobs share a round
// trip, never what happens to a job; every rule of SPEC §2 (lease length,
// poll, reaper, retry curve, grace, breaker) runs on the injected clock, so
// the tests drive them with the fake one and are not held up by these.
type Engine struct {
	jobs      ports.JobStore
	instances ports.InstanceStore
	deliverer ports.Deliverer
	keys      SigningKeys
	policy    Policy
	clock     ports.Clock
	rnd       ports.Random
	ids       ports.IDs
	wakes     ports.WakeSource
	obs       ports.EngineObserver
	log       *slog.Logger
	cfg       Config
	debug     bool // debug logs enabled: per-job loggers are worth building

	wake    chan struct{} // enqueues in this process; buffered 1, coalescing
	freed   chan struct{} // a delivery finished; buffered 1, coalescing
	flushed chan struct{} // the completer wrote a batch (host slots came back)

	// idle is set while the dispatcher waits because nothing was runnable
	// (or has stopped): the completer then writes what it has at once,
	// since results held back may be what keeps hosts at their cap.
	idle      atomic.Bool
	completer *completer

	mu       sync.Mutex
	inFlight int // deliveries holding one of the Workers slots
	waiting  int // deliveries in the Waits budget
	failing  int // in-flight deliveries to hosts whose last attempt failed (in Waits)
	flights  map[*flight]struct{}
	breakers breakerCache
}

// flight is one running delivery, guarded by Engine.mu.
type flight struct {
	host    string
	parkAt  time.Time // when it moves to the Waits budget; zero: never (its host answers)
	inWaits bool      // it holds a place in Waits, not a slot
	failing bool      // its host's last attempt failed (it counts in failing)
}

// Policy is the federation policy the engine obeys (application.Moderation).
type Policy interface {
	// RefusesDelivery says why nothing may be sent to host (SPEC §11:
	// "suspended", "not allowed (allowlist mode)"), or "" when it may; an
	// error when the rules cannot be read (nothing is sent for now).
	RefusesDelivery(ctx context.Context, host string) (why string, err error)
}

// Deps are the engine's collaborators.
type Deps struct {
	Jobs      ports.JobStore
	Instances ports.InstanceStore
	Deliverer ports.Deliverer
	Keys      SigningKeys
	Clock     ports.Clock
	Random    ports.Random
	IDs       ports.IDs
	Wakes     ports.WakeSource     // optional: wake-ups from other processes
	Observer  ports.EngineObserver // optional
	// Policy is the federation policy: a job to a host it refuses ends
	// without a request. Nil federates with everyone.
	Policy Policy
	Log    *slog.Logger
}

// New builds an engine; call Run to start it.
func New(deps Deps, cfg Config) *Engine {
	obs := deps.Observer
	if obs == nil {
		obs = ports.NopObserver{}
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{
		jobs: deps.Jobs, instances: deps.Instances, deliverer: deps.Deliverer, keys: deps.Keys, policy: deps.Policy,
		clock: deps.Clock, rnd: deps.Random, ids: deps.IDs, wakes: deps.Wakes, obs: obs,
		log: log.With("component", "engine"), cfg: cfg.withDefaults(),
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1), flushed: make(chan struct{}, 1),
		breakers: newBreakerCache(), flights: map[*flight]struct{}{},
	}
	e.debug = e.log.Enabled(context.Background(), slog.LevelDebug)
	e.completer = newCompleter(e)
	return e
}

// Config returns the effective configuration.
func (e *Engine) Config() Config { return e.cfg }

// Wake tells idle workers that jobs were enqueued. It never blocks.
func (e *Engine) Wake() { signal(e.wake) }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Run leases and delivers until ctx ends, then shuts down gracefully: it
// stops leasing, lets in-flight deliveries finish within the grace period,
// cancels the rest and releases their leases without spending an attempt,
// and writes every result before it returns.
func (e *Engine) Run(ctx context.Context) error {
	var loops sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); e.every(ctx, e.cfg.ReapEvery, e.reapOnce) }()
	go func() {
		defer loops.Done()
		if e.cfg.PurgeEvery > 0 {
			e.every(ctx, e.cfg.PurgeEvery, e.purgeOnce)
		}
	}()
	if e.wakes != nil {
		loops.Add(1)
		go func() {
			defer loops.Done()
			ch := e.wakes.Wakeups(ctx)
			for {
				select {
				case <-ctx.Done():
					return
				case <-ch:
					e.Wake()
				}
			}
		}()
	}
	completerDone := make(chan struct{})
	go func() { defer close(completerDone); e.completer.run() }()

	// Deliveries run on their own context: shutdown must not cut them off
	// before the grace period is over.
	deliverCtx, cancelDeliveries := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDeliveries()
	var workers sync.WaitGroup
	e.dispatch(ctx, deliverCtx, &workers)
	e.idle.Store(true) // no more leases: the completer need not wait for any
	e.completer.kick()

	e.log.Info("engine stopping: no more leases", "in_flight", e.InFlight(), "grace", e.cfg.Grace)
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-e.clock.After(e.cfg.Grace):
		e.log.Warn("grace period over: cancelling in-flight deliveries, their leases are released", "in_flight", e.InFlight())
		cancelDeliveries()
		<-done
	}
	// Every delivery has handed its result over: write them all.
	e.completer.stop()
	<-completerDone
	loops.Wait()
	e.log.Info("engine stopped")
	return nil
}

// InFlight is the number of deliveries running now, in slots and waiting.
func (e *Engine) InFlight() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inFlight + e.waiting
}

// slotsTaken is the number of deliveries holding a slot.
func (e *Engine) slotsTaken() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inFlight
}

// dispatch is the leasing loop. Only this goroutine admits leased jobs to
// slots, so the slot counts it leases by are exact for this process.
//
// Leasing is pipelined: the round trips run beside the dispatcher (lease),
// at most leaseDepth at once, and their jobs wait in ahead until a slot is
// free. While leases come back full (a backlog), the dispatcher leases up
// to LeaseAhead jobs beyond its free slots, so that the slots the running
// batch frees are filled at once from ahead while the next round trip is in
// flight, instead of standing idle for it. A second lease goes out beside a
// first only for a whole batch (Workers jobs), so that the round trips stay
// as large as without it: what a job costs the store is mostly its share of
// a statement and a commit.
func (e *Engine) dispatch(ctx, deliverCtx context.Context, workers *sync.WaitGroup) {
	var poll, busyPoll, park <-chan time.Time
	// busySince is the last wake-up or lease that found work: for BusyFor
	// after it a short lease is tried again every BusyPoll.
	var busySince time.Time
	backoff := time.Duration(0)
	failures := 0
	replies := make(chan leaseReply, leaseDepth)
	var ahead []domain.Job // leased, not yet started, in queue order
	leasing, reserved := 0, 0
	more := false    // the last lease came back full
	short := false   // the last lease came back with fewer jobs than it asked for
	leaseNow := true // something happened that a lease may answer
	for ctx.Err() == nil {
		e.refreshQuarantines(ctx)
		now := e.clock.Now()
		if next := e.parkDue(now); park == nil && !next.IsZero() {
			park = e.clock.After(next.Sub(now))
		}
		var sentBack int
		ahead, sentBack = e.admit(deliverCtx, ahead, now, workers)
		if sentBack > 0 {
			// The lease may find others in their place: it skips failing
			// hosts once their share of the Waits is taken.
			leaseNow = true
		}
		want := e.leaseRoom(len(ahead), reserved, more)
		if leaseNow && leasing == 0 && len(ahead) == 0 && want > 0 && want < e.cfg.Workers {
			// Less than a batch free while deliveries run: let them end
			// first (LeaseWindow), so that one round trip fills their
			// slots too instead of leasing slot by slot as they free.
			e.gather(ctx)
			want = e.leaseRoom(len(ahead), reserved, more)
		}
		if leaseNow && want > 0 && leasing < leaseDepth && (leasing == 0 || want >= e.cfg.Workers) {
			leasing++
			reserved += want
			leaseNow = false
			go e.lease(ctx, e.leaseRequest(now, want), replies)
		}
		// Nothing more to lease now: no slot is free, or nothing is
		// runnable, or a lease is in flight. When a lease came back short
		// tell the completer to write what it has (otherwise more results
		// are on their way and worth waiting for). While busy, it may be
		// only that other processes hold the runnable jobs' hosts at the
		// cap: look again soon (BusyPoll) rather than at the next 5 s
		// poll, which stays armed beside it (no clock wait is ever
		// abandoned).
		if leasing == 0 {
			if poll == nil {
				poll = e.clock.After(e.cfg.PollEvery)
			}
			if short {
				if busyPoll == nil && !busySince.IsZero() && e.clock.Now().Sub(busySince) < e.cfg.BusyFor {
					busyPoll = e.clock.After(e.cfg.BusyPoll)
				}
				e.idle.Store(true)
				e.completer.kick()
			}
		}
		select {
		case <-ctx.Done():
		case r := <-replies:
			leasing--
			reserved -= r.asked
			if r.err != nil {
				more, short = false, false
				if ctx.Err() != nil {
					break
				}
				failures++
				backoff = min(max(2*backoff, 100*time.Millisecond), e.cfg.PollEvery)
				e.log.Error("lease failed; backing off", "err", r.err, "backoff", backoff, "failed_leases", failures)
				select {
				case <-ctx.Done():
				case <-e.clock.After(backoff):
				}
				leaseNow = true
				break
			}
			if failures > 0 {
				e.log.Info("leasing works again", "failed_leases", failures)
				failures = 0
			}
			backoff = 0
			if len(r.jobs) > 0 {
				busySince = e.clock.Now()
			}
			ahead = append(ahead, r.jobs...)
			more = len(r.jobs) == r.asked
			short = !more
			if more {
				leaseNow = true
			}
		case <-e.wake:
			busySince = e.clock.Now()
			leaseNow = true
		case <-e.freed:
			leaseNow = true
		case <-e.flushed:
			leaseNow = true
		case <-poll:
			poll = nil
			leaseNow = true
		case <-busyPoll:
			busyPoll = nil
			leaseNow = true
		case <-park:
			park = nil
			leaseNow = true
		}
		e.idle.Store(false)
	}
	// No more leases (SPEC §2: on SIGTERM stop leasing, let the deliveries
	// in flight finish, release the rest). A lease in progress when
	// shutdown began is seen through, so that its jobs are not left leased
	// for the reaper; they and the ones leased ahead go back to the queue
	// unattempted. None starts now: a slot that frees after the signal
	// (a slow store's lease comes back seconds later) is not a reason to
	// begin a delivery the operator asked to stop.
	for ; leasing > 0; leasing-- {
		r := <-replies
		ahead = append(ahead, r.jobs...)
	}
	for _, j := range ahead {
		e.completer.add(e.release(j, j.RunAt, "leased ahead; the engine is stopping"))
	}
}

// gather waits, up to LeaseWindow, for the deliveries still running to end,
// so that the next lease fills their slots too: with deliveries that end
// together (a fast host, a no-op benchmark) one round trip then leases for
// every slot instead of one. It returns at once when every slot is free,
// on an enqueue, or at shutdown.
func (e *Engine) gather(ctx context.Context) {
	if e.cfg.LeaseWindow < 0 || e.slotsTaken() == 0 {
		return
	}
	window := time.NewTimer(e.cfg.LeaseWindow) // wall clock: see Engine
	defer window.Stop()
	for e.slotsTaken() > 0 {
		select {
		case <-e.freed:
		case <-window.C:
			return
		case <-e.wake:
			signal(e.wake) // for the dispatcher's next wait: the lease comes now anyway
			return
		case <-ctx.Done():
			return
		}
	}
}

// work runs one leased job, hands its result to the completer and frees
// its slot (or its place in Waits). The host's slot in the store stays
// taken until the completer has written the result.
func (e *Engine) work(ctx context.Context, job domain.Job, f *flight) {
	r := e.deliver(ctx, job)
	e.mu.Lock()
	if r.outcome != nil && r.outcome.Answered() {
		if r.took <= e.cfg.ParkAfter {
			e.breakers.answered(job.Host, r.at)
		} else {
			// It answers, but slowly: its next deliveries give their slots
			// back after ParkAfter as a silent host's do, so that however
			// many servers are slow, the ones that answer promptly keep the
			// slots and the slow ones go on in the Waits budget, within
			// their per-host cap.
			e.breakers.answeredSlowly(job.Host)
		}
	}
	e.mu.Unlock()
	e.completer.add(r)
	e.mu.Lock()
	delete(e.flights, f)
	if f.inWaits {
		e.waiting--
	} else {
		e.inFlight--
	}
	if f.failing {
		e.failing--
	}
	n := e.inFlight + e.waiting
	e.mu.Unlock()
	e.obs.InFlight(n)
	signal(e.freed)
}

// parkDue moves the deliveries that have waited ParkAfter on a host that
// has not answered lately from their slots into the Waits budget, as far
// as it has room, and returns the next time one is due (zero: none). The
// dispatcher calls it on every turn, and its clock wait for the next one
// stays armed until it fires, like the polls.
func (e *Engine) parkDue(now time.Time) (next time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	moved := false
	for f := range e.flights {
		if f.inWaits || f.parkAt.IsZero() {
			continue
		}
		if now.Before(f.parkAt) {
			if next.IsZero() || f.parkAt.Before(next) {
				next = f.parkAt
			}
			continue
		}
		if e.waiting >= e.cfg.Waits {
			continue // it keeps its slot; a freed wait wakes the dispatcher
		}
		f.inWaits = true
		e.inFlight--
		e.waiting++
		moved = true
	}
	if moved {
		signal(e.freed)
	}
	return next
}

func (e *Engine) every(ctx context.Context, period time.Duration, f func(context.Context)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.clock.After(period):
			f(ctx)
		}
	}
}

// Reap requeues jobs whose lease expired (their worker died or stalled).
func (e *Engine) Reap(ctx context.Context) (ports.ReapResult, error) {
	r, err := e.jobs.Reap(ctx, e.clock.Now(), domain.MaxAttempts)
	if err != nil {
		return r, fmt.Errorf("reap: %w", err)
	}
	if r.Requeued+r.Dead > 0 {
		e.obs.Reaped(r)
		e.log.Warn("reaper recovered jobs with expired leases", "requeued", r.Requeued, "dead", r.Dead)
		e.Wake()
	}
	return r, nil
}

func (e *Engine) reapOnce(ctx context.Context) {
	if _, err := e.Reap(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("reaper pass failed", "err", err)
	}
}

// Purge deletes finished jobs older than the retention period.
func (e *Engine) Purge(ctx context.Context) (int, error) {
	n, err := e.jobs.Purge(ctx, e.clock.Now().Add(-e.cfg.Retention))
	if err != nil {
		return n, fmt.Errorf("purge: %w", err)
	}
	if n > 0 {
		e.log.Info("retention purge", "deleted", n)
	}
	return n, nil
}

func (e *Engine) purgeOnce(ctx context.Context) {
	if _, err := e.Purge(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("retention purge failed", "err", err)
	}
}
