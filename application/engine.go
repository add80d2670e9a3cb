package application

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// EngineConfig holds the delivery engine's numbers (SPEC §2). Zero fields
// take the defaults of DefaultEngineConfig.
type EngineConfig struct {
	Workers int // deliveries at a time in this process (8)
	PerHost int // deliveries at a time per remote host (2)
	// FailingSlots caps the deliveries at a time, all hosts together, to
	// hosts whose last attempt failed (Workers/4, at least 1), so that dead
	// servers waiting out their timeouts cannot fill every slot.
	FailingSlots int
	LeaseFor     time.Duration // lease length (2 min)
	PollEvery    time.Duration // lease poll when nobody wakes the engine (5 s)
	ReapEvery    time.Duration // reaper period (30 s)
	PurgeEvery   time.Duration // retention purge period (1 h); negative disables it (TTL stores)
	Retention    time.Duration // finished jobs are kept this long (7 days)
	Grace        time.Duration // shutdown grace for in-flight deliveries (30 s)
	Owner        string        // this process's name on its leases
}

// DefaultEngineConfig returns SPEC §2's numbers.
func DefaultEngineConfig() EngineConfig {
	return EngineConfig{
		Workers:    8,
		PerHost:    2,
		LeaseFor:   2 * time.Minute,
		PollEvery:  5 * time.Second,
		ReapEvery:  30 * time.Second,
		PurgeEvery: time.Hour,
		Retention:  7 * 24 * time.Hour,
		Grace:      30 * time.Second,
	}
}

func (c EngineConfig) withDefaults() EngineConfig {
	d := DefaultEngineConfig()
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.PerHost <= 0 {
		c.PerHost = d.PerHost
	}
	if c.FailingSlots <= 0 {
		c.FailingSlots = max(1, c.Workers/4)
	}
	c.FailingSlots = min(c.FailingSlots, c.Workers)
	if c.LeaseFor <= 0 {
		c.LeaseFor = d.LeaseFor
	}
	if c.PollEvery <= 0 {
		c.PollEvery = d.PollEvery
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
	return c
}

// Engine is the delivery engine: one dispatcher that leases jobs while this
// process has free slots (skipping hosts at their cap), a goroutine per
// running delivery, a reaper and a retention purge. It replaces the old
// serial worker: a slow or dead host can hold at most PerHost slots.
type Engine struct {
	jobs      ports.JobStore
	instances ports.InstanceStore
	deliverer ports.Deliverer
	keys      SigningKeys
	clock     ports.Clock
	rnd       ports.Random
	ids       ports.IDs
	wakes     ports.WakeSource
	obs       ports.EngineObserver
	log       *slog.Logger
	cfg       EngineConfig

	wake  chan struct{} // enqueues in this process; buffered 1, coalescing
	freed chan struct{} // a delivery finished; buffered 1, coalescing

	mu       sync.Mutex
	inFlight int
	perHost  map[string]int
	failing  int // in-flight deliveries to hosts whose last attempt failed
	// failingHosts are the hosts whose cached breaker shows failures.
	failingHosts map[string]struct{}
	breakers     map[string]breakerEntry
}

// breakerEntry caches a host's breaker state so the success path, by far
// the most common, needs no write when the host is already healthy.
type breakerEntry struct {
	state domain.RemoteInstance
	at    time.Time
}

// breakerCacheTTL bounds how stale another process's view of a host may be.
const breakerCacheTTL = 10 * time.Second

// EngineDeps are the engine's collaborators.
type EngineDeps struct {
	Jobs      ports.JobStore
	Instances ports.InstanceStore
	Deliverer ports.Deliverer
	Keys      SigningKeys
	Clock     ports.Clock
	Random    ports.Random
	IDs       ports.IDs
	Wakes     ports.WakeSource     // optional: wake-ups from other processes
	Observer  ports.EngineObserver // optional
	Log       *slog.Logger
}

// NewEngine builds an engine; call Run to start it.
func NewEngine(deps EngineDeps, cfg EngineConfig) *Engine {
	obs := deps.Observer
	if obs == nil {
		obs = ports.NopObserver{}
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		jobs: deps.Jobs, instances: deps.Instances, deliverer: deps.Deliverer, keys: deps.Keys,
		clock: deps.Clock, rnd: deps.Random, ids: deps.IDs, wakes: deps.Wakes, obs: obs,
		log: log.With("component", "engine"), cfg: cfg.withDefaults(),
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1),
		perHost: make(map[string]int), breakers: make(map[string]breakerEntry),
		failingHosts: make(map[string]struct{}),
	}
}

// Config returns the effective configuration.
func (e *Engine) Config() EngineConfig { return e.cfg }

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
// cancels the rest and releases their leases without spending an attempt.
// It returns once every delivery goroutine has settled its job.
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

	// Deliveries run on their own context: shutdown must not cut them off
	// before the grace period is over.
	deliverCtx, cancelDeliveries := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDeliveries()
	var workers sync.WaitGroup
	e.dispatch(ctx, deliverCtx, &workers)

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
	loops.Wait()
	e.log.Info("engine stopped")
	return nil
}

// InFlight is the number of deliveries running now.
func (e *Engine) InFlight() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inFlight
}

// dispatch is the leasing loop. Only this goroutine leases, so the per-host
// counts it skips by are exact for this process.
func (e *Engine) dispatch(ctx, deliverCtx context.Context, workers *sync.WaitGroup) {
	var poll <-chan time.Time
	backoff := time.Duration(0)
	failures := 0
	for ctx.Err() == nil {
		job, failing, ok, err := e.leaseNext(ctx)
		if err == nil && failures > 0 {
			e.log.Info("leasing works again", "failed_leases", failures)
			failures = 0
		}
		switch {
		case ok:
			backoff = 0
			workers.Add(1)
			go func() {
				defer workers.Done()
				e.work(deliverCtx, job, failing)
			}()
			continue
		case err != nil && ctx.Err() == nil:
			failures++
			backoff = min(max(2*backoff, 100*time.Millisecond), e.cfg.PollEvery)
			e.log.Error("lease failed; backing off", "err", err, "backoff", backoff, "failed_leases", failures)
			select {
			case <-ctx.Done():
			case <-e.clock.After(backoff):
			}
			continue
		}
		if poll == nil {
			poll = e.clock.After(e.cfg.PollEvery)
		}
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-e.freed:
		case <-poll:
			poll = nil
		}
	}
}

// leaseNext leases one job if a slot is free. ok is false when no slot is
// free or nothing is runnable. failing says the job's host failed its last
// attempt, so the job runs in the failing hosts' shared slots.
func (e *Engine) leaseNext(ctx context.Context) (job domain.Job, failing, ok bool, err error) {
	e.mu.Lock()
	if e.inFlight >= e.cfg.Workers {
		e.mu.Unlock()
		return domain.Job{}, false, false, nil
	}
	var skip []string
	for h, n := range e.perHost {
		if n >= e.cfg.PerHost {
			skip = append(skip, h)
		}
	}
	if e.failing >= e.cfg.FailingSlots {
		// The failing hosts' slots are taken: skip every host known to be
		// failing, so the free slots go to hosts that answer.
		for h := range e.failingHosts {
			if e.perHost[h] < e.cfg.PerHost { // else already skipped
				skip = append(skip, h)
			}
		}
	}
	e.mu.Unlock()

	now := e.clock.Now()
	started := time.Now()
	// The lease runs on a context shutdown does not cancel: a lease cut off
	// midway may still have been granted by the store, and the job would
	// stay leased, worked by nobody, until the reaper. A lease that comes
	// back is worked (or released) like any other.
	leaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	job, err = e.jobs.Lease(leaseCtx, ports.LeaseRequest{
		Owner: e.cfg.Owner, Token: e.ids.NewID(), Now: now, Until: now.Add(e.cfg.LeaseFor), SkipHosts: skip,
	})
	cancel()
	found := err == nil
	e.obs.Leased(time.Since(started), found)
	if errors.Is(err, domain.ErrNoJob) {
		return domain.Job{}, false, false, nil
	}
	if err != nil {
		return domain.Job{}, false, false, err
	}
	e.mu.Lock()
	e.inFlight++
	e.perHost[job.Host]++
	_, failing = e.failingHosts[job.Host]
	if failing {
		e.failing++
	}
	n := e.inFlight
	e.mu.Unlock()
	e.obs.InFlight(n)
	return job, failing, true, nil
}

// work runs one leased job and frees its slot.
func (e *Engine) work(ctx context.Context, job domain.Job, failing bool) {
	defer func() {
		e.mu.Lock()
		e.inFlight--
		if e.perHost[job.Host]--; e.perHost[job.Host] <= 0 {
			delete(e.perHost, job.Host)
		}
		if failing {
			e.failing--
		}
		n := e.inFlight
		e.mu.Unlock()
		e.obs.InFlight(n)
		signal(e.freed)
	}()
	e.Process(ctx, job)
}

// Process runs one leased job to its next state: it is not attempted while
// its host is quarantined (the job waits, its attempts untouched), else it
// is delivered and completed, retried or failed by the rules of SPEC §2.
// Every store update presents the job's lease token.
func (e *Engine) Process(ctx context.Context, job domain.Job) {
	log := e.log.With("job_id", job.ID, "host", job.Host, "attempt", job.Attempts+1)
	if until, q := e.quarantinedUntil(ctx, job.Host); q {
		e.settle(ctx, log, job, "deferred", func(c context.Context) error {
			return e.jobs.Release(c, job.ID, job.LeaseToken, until)
		})
		return
	}
	key, err := e.keys.SigningKey(ctx, job.SenderID)
	if errors.Is(err, domain.ErrNotFound) {
		// The sending actor is gone: nothing can ever sign this job.
		if e.settle(ctx, log, job, string(domain.JobDead), func(c context.Context) error {
			return e.jobs.Fail(c, job.ID, job.LeaseToken, job.Attempts, "sender "+job.SenderID+" no longer exists", e.clock.Now())
		}) {
			e.obs.Settled(domain.JobDead)
		}
		return
	}
	if err != nil {
		// Our own store failed; that is not the job's fault, so it spends
		// no attempt.
		log.Error("signing key unavailable; job released", "err", err)
		e.settle(ctx, log, job, "released", func(c context.Context) error {
			return e.jobs.Release(c, job.ID, job.LeaseToken, e.clock.Now().Add(e.cfg.PollEvery))
		})
		return
	}

	started := e.clock.Now()
	wallStart := time.Now()
	outcome := e.deliverer.Deliver(ctx, ports.Delivery{
		Inbox: job.Inbox, Payload: job.Payload, KeyID: job.KeyID, PrivateKeyPEM: key,
	})
	e.obs.Delivered(job.Host, outcome, time.Since(wallStart))
	if ctx.Err() != nil {
		// Shutdown cut the attempt off: the remote may or may not have it,
		// but it did not fail, so it spends no attempt.
		e.settle(context.WithoutCancel(ctx), log, job, "released", func(c context.Context) error {
			return e.jobs.Release(c, job.ID, job.LeaseToken, e.clock.Now())
		})
		return
	}

	now := e.clock.Now()
	e.recordBreaker(ctx, log, job.Host, outcome, now)
	d := domain.Decide(job.Attempts, outcome, now, e.rnd.Float64())
	log = log.With("outcome", outcome.Kind.String(), "status", outcome.Status, "took", now.Sub(started))
	var apply func(context.Context) error
	switch d.State {
	case domain.JobSucceeded:
		apply = func(c context.Context) error { return e.jobs.Complete(c, job.ID, job.LeaseToken, now) }
	case domain.JobQueued:
		log = log.With("retry_at", d.RunAt, "reason", d.Reason)
		apply = func(c context.Context) error {
			return e.jobs.Retry(c, job.ID, job.LeaseToken, ports.RetryUpdate{Attempts: d.Attempts, RunAt: d.RunAt, LastError: d.Reason})
		}
	default:
		log = log.With("reason", d.Reason)
		apply = func(c context.Context) error {
			return e.jobs.Fail(c, job.ID, job.LeaseToken, d.Attempts, d.Reason, now)
		}
	}
	if e.settle(ctx, log, job, string(d.State), apply) {
		e.obs.Settled(d.State)
	}
}

// settle applies a job's next state, retrying while the store is down, for
// as long as the lease holds (after that the reaper will requeue the job
// anyway). A lost lease means someone else holds the job now: the result
// is dropped, which is what fencing is for.
func (e *Engine) settle(ctx context.Context, log *slog.Logger, job domain.Job, to string, apply func(context.Context) error) bool {
	ctx = context.WithoutCancel(ctx) // a decided result is worth recording even while shutting down
	backoff := 50 * time.Millisecond
	for {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := apply(c)
		cancel()
		switch {
		case err == nil:
			if to == string(domain.JobDead) {
				log.Warn("job dead", "to", to)
			} else {
				log.Debug("job settled", "to", to)
			}
			return true
		case errors.Is(err, domain.ErrLeaseLost):
			log.Warn("lease lost before the result was recorded; another worker holds the job", "to", to)
			return false
		}
		if !e.clock.Now().Add(backoff).Before(job.LeaseUntil) {
			log.Error("could not record the job's result before its lease ends; the reaper will requeue it", "to", to, "err", err)
			return false
		}
		log.Warn("store refused the job's result; retrying", "to", to, "err", err, "backoff", backoff)
		<-e.clock.After(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// quarantinedUntil reports whether host is quarantined now. A cached
// "quarantined" is confirmed from the store, so a quarantine an operator
// lifted in another process is not re-imposed from a stale cache.
func (e *Engine) quarantinedUntil(ctx context.Context, host string) (time.Time, bool) {
	now := e.clock.Now()
	e.mu.Lock()
	b, ok := e.breakers[host]
	e.mu.Unlock()
	if ok && now.Sub(b.at) < breakerCacheTTL && !b.state.Quarantined(now) {
		return time.Time{}, false
	}
	r, err := e.instances.Get(ctx, host)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		r = domain.NewRemoteInstance(host)
	case err != nil:
		// Unknown breaker state: attempt the delivery. At worst one
		// attempt goes to a quarantined host; never does a job stall.
		e.log.Warn("breaker state unavailable", "host", host, "err", err)
		return time.Time{}, false
	}
	e.cacheBreaker(r, now)
	return r.QuarantinedUntil, r.Quarantined(now)
}

func (e *Engine) cacheBreaker(r domain.RemoteInstance, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.breakers) >= maxCachedBreakers {
		// Bound the cache: forget what is stale (it would be read again).
		for h, b := range e.breakers {
			if now.Sub(b.at) >= breakerCacheTTL {
				delete(e.breakers, h)
				delete(e.failingHosts, h)
			}
		}
	}
	e.breakers[r.Host] = breakerEntry{state: r, at: now}
	if r.ConsecutiveFailures > 0 {
		e.failingHosts[r.Host] = struct{}{}
	} else {
		delete(e.failingHosts, r.Host)
	}
}

// maxCachedBreakers bounds the breaker cache of a process.
const maxCachedBreakers = 50_000

// recordBreaker feeds one outcome to the host's circuit breaker. A failure
// that opens the breaker moves the host's queued jobs past the quarantine.
func (e *Engine) recordBreaker(ctx context.Context, log *slog.Logger, host string, o domain.Outcome, now time.Time) {
	if !o.HostFailure {
		e.mu.Lock()
		b, ok := e.breakers[host]
		e.mu.Unlock()
		// Skip the write when the host is known healthy and its last
		// success is fresh; operators see LastSuccessAt within a minute.
		if ok && b.state.Healthy() && now.Sub(b.state.LastSuccessAt) < time.Minute && now.Sub(b.at) < breakerCacheTTL {
			return
		}
		r, err := e.instances.Update(ctx, host, func(r *domain.RemoteInstance) { r.RecordSuccess(now) })
		if err != nil {
			log.Warn("breaker success not recorded", "err", err)
			return
		}
		e.cacheBreaker(r, now)
		return
	}
	var opened bool
	r, err := e.instances.Update(ctx, host, func(r *domain.RemoteInstance) { opened = r.RecordFailure(now, o.Reason) })
	if err != nil {
		log.Warn("breaker failure not recorded", "err", err)
		return
	}
	e.cacheBreaker(r, now)
	if !opened {
		return
	}
	e.obs.Quarantined(host, r.QuarantinedUntil)
	n, err := e.jobs.DeferHost(ctx, host, r.QuarantinedUntil)
	log.Warn("host quarantined", "until", r.QuarantinedUntil, "level", r.QuarantineLevel,
		"failures", r.ConsecutiveFailures, "jobs_deferred", n, "err", err)
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
