package engine

import (
	"context"
	"log/slog"
	"sync"

	"github.com/heraldfed/herald/ports"
)

// Engine is the delivery engine: a dispatcher that leases a batch of jobs
// for this process's free slots in one round trip (the store keeps the
// per-host cap for every process) and runs each in a goroutine of its own,
// the host policy those deliveries consult and feed, a completer that
// writes the results in batches, a reaper and a retention purge. A slow or
// dead host can hold at most PerHost slots, and a host that has not
// answered lately gives its slot back after ParkAfter.
//
// Two waits are on the wall clock, not the injected one: the dispatcher's
// lease window and the completer's flush window. They are throughput
// devices of a millisecond or a few, deciding only how many jobs share a
// round trip, never what happens to a job; every rule of SPEC §2 (lease
// length, poll, reaper, retry curve, grace, breaker) runs on the injected
// clock, so the tests drive them with the fake one and are not held up by
// these.
type Engine struct {
	cfg   Config
	clock ports.Clock
	wakes ports.WakeSource
	keys  SigningKeys
	log   *slog.Logger

	dispatcher *dispatcher
	completer  *batchCompleter
	reaper     *reaper
	purger     *purger
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
	cfg = cfg.withDefaults()
	obs := deps.Observer
	if obs == nil {
		obs = ports.NopObserver{}
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "engine")
	// Per-job loggers are built only when debug logs are on.
	debug := log.Enabled(context.Background(), slog.LevelDebug)
	hosts := newHostPolicy(hostDeps{
		instances: deps.Instances, jobs: deps.Jobs, clock: deps.Clock, rnd: deps.Random, obs: obs, log: log, debug: debug,
	}, cfg)
	done := newBatchCompleter(completerDeps{
		jobs: deps.Jobs, hosts: hosts, clock: deps.Clock, obs: obs, log: log, debug: debug,
	}, cfg)
	c := &courier{
		deliverer: deps.Deliverer, keys: deps.Keys, policy: deps.Policy, hosts: hosts,
		clock: deps.Clock, rnd: deps.Random, obs: obs, log: log, retryIn: cfg.PollEvery,
	}
	return &Engine{
		cfg: cfg, clock: deps.Clock, wakes: deps.Wakes, keys: deps.Keys, log: log,
		dispatcher: newDispatcher(dispatcherDeps{
			jobs: deps.Jobs, ids: deps.IDs, clock: deps.Clock, obs: obs, log: log, hosts: hosts, done: done, deliver: c.deliver,
		}, cfg),
		completer: done,
		reaper:    &reaper{jobs: deps.Jobs, clock: deps.Clock, obs: obs, log: log, every: cfg.ReapEvery},
		purger:    &purger{jobs: deps.Jobs, clock: deps.Clock, log: log, every: cfg.PurgeEvery, retention: cfg.Retention},
	}
}

// Config returns the effective configuration.
func (e *Engine) Config() Config { return e.cfg }

// InFlight is the number of deliveries running now, in slots and waiting.
func (e *Engine) InFlight() int { return e.dispatcher.slots.running() }

// Run leases and delivers until ctx ends, then shuts down gracefully: it
// stops leasing, lets in-flight deliveries finish within the grace period,
// cancels the rest and releases their leases without spending an attempt,
// and writes every result before it returns.
func (e *Engine) Run(ctx context.Context) error {
	var services sync.WaitGroup
	e.startServices(ctx, &services)
	completerDone := make(chan struct{})
	go func() { defer close(completerDone); e.completer.run() }()

	// Deliveries run on their own context: shutdown must not cut them off
	// before the grace period is over.
	deliverCtx, cancelDeliveries := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDeliveries()
	var deliveries sync.WaitGroup
	e.dispatcher.run(ctx, deliverCtx, &deliveries)
	e.completer.setIdle(true) // no more leases: the completer need not wait for any
	e.finishDeliveries(&deliveries, cancelDeliveries)

	// Every delivery has handed its result over: write them all.
	e.completer.stop()
	<-completerDone
	services.Wait()
	e.log.Info("engine stopped")
	return nil
}

// startServices runs the reaper, the purge and the wake-ups from other
// processes until ctx ends.
func (e *Engine) startServices(ctx context.Context, services *sync.WaitGroup) {
	services.Add(2)
	go func() { defer services.Done(); e.reaper.run(ctx, e.Wake) }()
	go func() { defer services.Done(); e.purger.run(ctx) }()
	if e.wakes != nil {
		services.Add(1)
		go func() { defer services.Done(); e.listen(ctx) }()
	}
}

// finishDeliveries waits for the deliveries in flight, within the grace
// period; past it, they are cancelled (their leases are released).
func (e *Engine) finishDeliveries(deliveries *sync.WaitGroup, cancel context.CancelFunc) {
	e.log.Info("engine stopping: no more leases", "in_flight", e.InFlight(), "grace", e.cfg.Grace)
	done := make(chan struct{})
	go func() { deliveries.Wait(); close(done) }()
	select {
	case <-done:
	case <-e.clock.After(e.cfg.Grace):
		e.log.Warn("grace period over: cancelling in-flight deliveries, their leases are released", "in_flight", e.InFlight())
		cancel()
		<-done
	}
}

// signal sends on a coalescing channel (buffered 1) without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
