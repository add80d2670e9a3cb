package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// dispatcher is the one goroutine that leases jobs (lease.go) and admits
// them to this process's slots (slots.go). Only it admits, so the slot
// counts it leases by are exact for this process; the deliveries it starts
// free their slots from their own goroutines, under the slots' lock.
//
// Its loop is a turn (do what can be done now) and a wait (for whatever
// may change that: a lease's reply, an enqueue, a freed slot, a written
// batch, a clock wait); its other state is the loop's alone.
type dispatcher struct {
	dispatcherDeps
	cfg   Config
	slots *slots

	wake  chan struct{} // enqueues (Engine.Wake); buffered 1, coalescing
	freed chan struct{} // a delivery ended or parked; buffered 1, coalescing

	ahead []aheadJob // leased, not yet started, in queue order
	pipe  leasePipe  // the lease round trips (lease.go)
	// leaseNow says something happened that a lease may answer.
	leaseNow bool

	// The clock waits: each stays armed until it fires, so none is ever
	// abandoned (the fake clock's tests count them).
	poll, busyPoll, park <-chan time.Time
	// busySince is the last wake-up or lease that found work: for busyFor
	// after it a short lease is tried again every busyPoll.
	busySince time.Time
}

// dispatcherDeps are what the dispatcher uses and does not own.
type dispatcherDeps struct {
	jobs  ports.JobStore
	ids   ports.IDs
	clock ports.Clock
	obs   ports.EngineObserver
	log   *slog.Logger
	hosts *hostPolicy
	done  completer
	// deliver makes one job's attempt (courier.deliver).
	deliver func(ctx context.Context, job domain.Job) result
}

func newDispatcher(deps dispatcherDeps, cfg Config) *dispatcher {
	return &dispatcher{
		dispatcherDeps: deps, cfg: cfg, slots: newSlots(cfg),
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1),
		pipe:     leasePipe{replies: make(chan leaseReply, leaseDepth)},
		leaseNow: true,
	}
}

// run leases and starts deliveries until ctx ends, then hands back the
// jobs it leased and did not start. Deliveries run on deliverCtx and are
// counted in deliveries.
func (d *dispatcher) run(ctx, deliverCtx context.Context, deliveries *sync.WaitGroup) {
	for ctx.Err() == nil {
		d.turn(ctx, deliverCtx, deliveries)
		d.wait(ctx)
	}
	d.stop()
}

// turn does what can be done now: read the quarantine view when it is
// due, move overdue deliveries to the waits, start what the slots admit,
// lease when there is room, and arm the polls when no lease is in flight.
func (d *dispatcher) turn(ctx, deliverCtx context.Context, deliveries *sync.WaitGroup) {
	d.hosts.refresh(ctx)
	now := d.clock.Now()
	d.parkDue(now)
	if d.admit(deliverCtx, now, deliveries) > 0 {
		// The lease may find others in their place: it skips failing
		// hosts once their share of the waits is taken.
		d.leaseNow = true
	}
	d.leaseIfRoom(ctx, now)
	if d.pipe.inFlight == 0 {
		d.armPolls()
	}
}

// armPolls arms the 5 s poll and, when the last lease came back short,
// tells the completer to write what it has (otherwise more results are on
// their way and worth waiting for). While busy it may be only that other
// processes hold the runnable jobs' hosts at the cap: it looks again soon
// (busyPoll) rather than at the next poll, which stays armed beside it.
func (d *dispatcher) armPolls() {
	if d.poll == nil {
		d.poll = d.clock.After(d.cfg.PollEvery)
	}
	if !d.pipe.short {
		return
	}
	if d.busyPoll == nil && !d.busySince.IsZero() && d.clock.Now().Sub(d.busySince) < d.cfg.busyFor {
		d.busyPoll = d.clock.After(d.cfg.busyPoll)
	}
	d.done.setIdle(true)
}

// parkDue moves the deliveries due to park into the waits (slots.park) and
// keeps one clock wait armed for the next.
func (d *dispatcher) parkDue(now time.Time) {
	next, moved := d.slots.park(now, d.hosts.silence)
	if moved {
		signal(d.freed)
	}
	if d.park == nil && !next.IsZero() {
		d.park = d.clock.After(next.Sub(now))
	}
}

// wait blocks until something happens that the next turn may act on.
func (d *dispatcher) wait(ctx context.Context) {
	select {
	case <-ctx.Done():
	case r := <-d.pipe.replies:
		d.leased(ctx, r)
	case <-d.wake:
		d.busySince = d.clock.Now()
		d.leaseNow = true
	case <-d.freed:
		d.leaseNow = true
	case <-d.done.flushed():
		d.leaseNow = true
	case <-d.poll:
		d.poll = nil
		d.leaseNow = true
	case <-d.busyPoll:
		d.busyPoll = nil
		d.leaseNow = true
	case <-d.park:
		d.park = nil
		d.leaseNow = true
	}
	d.done.setIdle(false)
}

// stop ends the dispatcher's work (SPEC §2: on SIGTERM stop leasing, let
// the deliveries in flight finish, release the rest). A lease in progress
// when shutdown began is seen through, so that its jobs are not left
// leased for the reaper; they and the ones leased ahead go back to the
// queue unattempted. None starts now: a slot that frees after the signal
// (a slow store's lease comes back seconds later) is not a reason to begin
// a delivery the operator asked to stop.
func (d *dispatcher) stop() {
	for ; d.pipe.inFlight > 0; d.pipe.inFlight-- {
		r := <-d.pipe.replies
		for _, j := range r.jobs {
			d.ahead = append(d.ahead, aheadJob{job: j})
		}
	}
	for _, a := range d.ahead {
		d.done.add(release(a.job, a.job.RunAt, "leased ahead; the engine is stopping"))
	}
	d.ahead = nil
}
