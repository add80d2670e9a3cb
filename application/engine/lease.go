package engine

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Leasing is pipelined: the round trips run beside the dispatcher (lease),
// at most leaseDepth at once, and their jobs wait in the dispatcher's
// ahead until a slot is free. While leases come back full (a backlog), the
// dispatcher leases up to leaseAhead jobs beyond its free slots, so that
// the slots the running batch frees are filled at once from ahead while
// the next round trip is in flight, instead of standing idle for it. A
// second lease goes out beside a first only for a whole batch (Workers
// jobs), so that the round trips stay as large as without it: what a job
// costs the store is mostly its share of a statement and a commit.

// leasePipe is the dispatcher's lease round trips.
type leasePipe struct {
	replies  chan leaseReply // buffered leaseDepth
	inFlight int             // round trips going
	reserved int             // jobs the round trips going asked for
	more     bool            // the last lease came back full
	short    bool            // the last lease came back with fewer jobs than it asked for
	// failures counts the leases failed in a row, backoff the wait before
	// the next.
	failures int
	backoff  time.Duration
}

// aheadJob is a leased job waiting in ahead, and when its lease came back:
// its wait for a slot counts from then, not from the lease's start, so a
// slow round trip is not taken for a wait (admit).
type aheadJob struct {
	job     domain.Job
	arrived time.Time
}

// leaseReply is one lease round trip's answer, sent to the dispatcher.
type leaseReply struct {
	jobs  []domain.Job
	asked int
	err   error
}

// leaseIfRoom sends a lease round trip when something happened that a
// lease may answer and there is room for it. When less than a batch is
// free while deliveries run, it first lets them end (gather), so that one
// round trip fills their slots too instead of leasing slot by slot as they
// free.
func (d *dispatcher) leaseIfRoom(ctx context.Context, now time.Time) {
	if !d.leaseNow {
		return
	}
	want := d.leaseRoom()
	if d.pipe.inFlight == 0 && len(d.ahead) == 0 && want > 0 && want < d.cfg.Workers {
		d.gather(ctx)
		want = d.leaseRoom()
	}
	if want <= 0 || d.pipe.inFlight >= leaseDepth || (d.pipe.inFlight > 0 && want < d.cfg.Workers) {
		return
	}
	d.pipe.inFlight++
	d.pipe.reserved += want
	d.leaseNow = false
	go d.lease(ctx, d.leaseRequest(now, want))
}

// leaseRoom is how many jobs the next lease may ask for: the free slots,
// plus leaseAhead when the last lease came back full (more is likely
// runnable, and the running batch's slots will want it) and the results
// keep up, less the jobs leased and not yet started and those the leases
// in flight asked for.
func (d *dispatcher) leaseRoom() int {
	room := d.cfg.Workers - d.slots.taken()
	// Ahead only while the results keep up (no more than a batch of them
	// unwritten): when the store is slow or away, a job leased ahead would
	// wait for the completer with its lease running.
	if d.pipe.more && d.done.unwritten() < d.cfg.flushMax {
		room += d.cfg.leaseAhead
	}
	return room - len(d.ahead) - d.pipe.reserved
}

// gather waits, up to the lease window (1 ms), for the deliveries still running to end,
// so that the next lease fills their slots too: with deliveries that end
// together (a fast host, a no-op benchmark) one round trip then leases for
// every slot instead of one. It returns at once when every slot is free,
// on an enqueue, or at shutdown.
func (d *dispatcher) gather(ctx context.Context) {
	if d.slots.taken() == 0 {
		return
	}
	window := time.NewTimer(d.cfg.leaseWindow) // wall clock: see Engine
	defer window.Stop()
	for d.slots.taken() > 0 {
		select {
		case <-d.freed:
		case <-window.C:
			return
		case <-d.wake:
			signal(d.wake) // for the dispatcher's next wait: the lease comes now anyway
			return
		case <-ctx.Done():
			return
		}
	}
}

// leaseRequest builds the store request for up to limit jobs, naming the
// hosts to skip (hostPolicy.skipHosts): the held ones, and every failing
// host when their share of the waits is taken.
//
// The per-host cap is the store's to keep (LeaseRequest.PerHost): it counts
// every process's leases, the ones leased ahead included, so this process
// skips nothing for it.
func (d *dispatcher) leaseRequest(now time.Time, limit int) ports.LeaseRequest {
	return ports.LeaseRequest{
		Owner: d.cfg.Owner, Token: d.ids.NewID(), Now: now, Until: now.Add(d.cfg.LeaseFor),
		Limit: limit, PerHost: d.cfg.PerHost, SkipHosts: d.hosts.skipHosts(now, d.slots.failingFull()),
	}
}

// lease runs one lease round trip and sends its reply. It runs on a
// context shutdown does not cancel: a lease cut off midway may still have
// been granted by the store, and its jobs would stay leased, worked by
// nobody, until the reaper. A batch that comes back is worked (or
// released) like any other.
func (d *dispatcher) lease(ctx context.Context, req ports.LeaseRequest) {
	started := time.Now()
	leaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	jobs, err := d.jobs.LeaseBatch(leaseCtx, req)
	cancel()
	d.obs.Leased(time.Since(started), len(jobs))
	d.pipe.replies <- leaseReply{jobs: jobs, asked: req.Limit, err: err}
}

// leased takes a lease's reply: its jobs wait in ahead for a slot; a
// failed lease is tried again after a backoff that doubles up to the poll,
// and what it leased before it failed goes back.
func (d *dispatcher) leased(ctx context.Context, r leaseReply) {
	p := &d.pipe
	p.inFlight--
	p.reserved -= r.asked
	if r.err != nil {
		// A lease that failed part way may hand back jobs it leased before
		// the failure (a store that leases in rounds, or that could not
		// read their bodies): they are this process's, and go back
		// unattempted now rather than wait a whole lease for the reaper.
		for _, j := range r.jobs {
			d.done.add(release(j, j.RunAt, "leased by a lease round trip that then failed"))
		}
		p.more, p.short = false, false
		if ctx.Err() != nil {
			return
		}
		p.failures++
		p.backoff = min(max(2*p.backoff, 100*time.Millisecond), d.cfg.PollEvery)
		d.log.Error("lease failed; backing off", "err", r.err, "backoff", p.backoff, "failed_leases", p.failures)
		select {
		case <-ctx.Done():
		case <-d.clock.After(p.backoff):
		}
		d.leaseNow = true
		return
	}
	if p.failures > 0 {
		d.log.Info("leasing works again", "failed_leases", p.failures)
		p.failures = 0
	}
	p.backoff = 0
	arrived := d.clock.Now()
	if len(r.jobs) > 0 {
		d.busySince = arrived
	}
	for _, j := range r.jobs {
		d.ahead = append(d.ahead, aheadJob{job: j, arrived: arrived})
	}
	p.more = len(r.jobs) == r.asked
	p.short = !p.more
	d.leaseNow = d.leaseNow || p.more
}
