package engine

import (
	"context"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// leased is one job of a lease batch and its place among the running
// deliveries.
type leased struct {
	job    domain.Job
	flight *flight
}

// leaseDepth is how many lease round trips the dispatcher keeps going at
// once: one for the slots that are free, and one ahead for the slots that
// the running batch will free. A lease is a commit (a WAL flush) and a
// round trip; two of them overlap in the server and in the network, so the
// slots do not stand idle while one is in flight.
const leaseDepth = 2

// aheadWaitShare: a job leased ahead starts only within LeaseFor/8 of its
// lease (admit), or goes back.
const aheadWaitShare = 8

// leaseReply is one lease round trip's answer, sent to the dispatcher.
type leaseReply struct {
	jobs  []domain.Job
	asked int
	err   error
}

// leaseRequest builds the store request for up to limit jobs, naming the
// hosts to skip: the held ones (while they are few enough to name), and
// every failing host when their share of the Waits budget is taken.
//
// The per-host cap is the store's to keep (LeaseRequest.PerHost): it counts
// every process's leases, the ones leased ahead included, so this process
// skips nothing for it.
func (e *Engine) leaseRequest(now time.Time, limit int) ports.LeaseRequest {
	e.mu.Lock()
	skip := e.breakers.heldHosts(now, maxSkipHeld)
	if e.failing >= e.cfg.FailingSlots || e.waiting >= e.cfg.Waits {
		skip = append(skip, e.breakers.failingHosts()...)
	}
	e.mu.Unlock()
	return ports.LeaseRequest{
		Owner: e.cfg.Owner, Token: e.ids.NewID(), Now: now, Until: now.Add(e.cfg.LeaseFor),
		Limit: limit, PerHost: e.cfg.PerHost, SkipHosts: skip,
	}
}

// lease runs one lease round trip and sends its reply. It runs on a
// context shutdown does not cancel: a lease cut off midway may still have
// been granted by the store, and its jobs would stay leased, worked by
// nobody, until the reaper. A batch that comes back is worked (or
// released) like any other.
func (e *Engine) lease(ctx context.Context, req ports.LeaseRequest, reply chan<- leaseReply) {
	started := time.Now()
	leaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	jobs, err := e.jobs.LeaseBatch(leaseCtx, req)
	cancel()
	e.obs.Leased(time.Since(started), len(jobs))
	reply <- leaseReply{jobs: jobs, asked: req.Limit, err: err}
}

// admit starts the jobs leased and not yet started (ahead, in queue order)
// as far as this process has room, and returns the ones still waiting and
// how many it sent back.
// What the engine adds to the store's per-host cap:
//   - a job of a held host (one that just failed, or asked to wait with
//     Retry-After: see hold) goes back to the end of the hold, unattempted;
//   - a job of a host whose last attempt failed runs in the Waits budget,
//     at most FailingSlots of them at a time: the failing-host jobs beyond
//     that go straight back (a release through the completer: no attempt
//     spent, their place in the queue kept);
//   - any other job takes one of the Workers slots, and may move from it
//     to Waits after ParkAfter (parkDue) when its host has not answered
//     lately;
//   - no job starts while the deliveries running and the results not yet
//     written reach Workers + Waits + FlushMax: what a kill -9 may
//     re-deliver stays within that however far the store falls behind;
//   - a job that waited here for more than an eighth of its lease goes
//     back, unattempted, rather than start late: every delivery starts
//     with at least 7/8 of its lease to deliver and write its result in,
//     as one leased for a free slot does (rare: jobs are leased ahead only
//     while the results keep up, leaseRoom).
//
// The first job that needs a slot when none is free stops admission: the
// rest wait, in order, for the next freed slot.
func (e *Engine) admit(deliverCtx context.Context, ahead []domain.Job, now time.Time, workers *sync.WaitGroup) (rest []domain.Job, sentBack int) {
	if len(ahead) == 0 {
		return ahead, 0
	}
	var start []leased
	var back []result
	// Deliveries whose results a kill -9 would lose: the running ones and
	// the results not yet written. Past the bound, nothing starts until
	// the completer has written a batch (it signals flushed).
	unwritten := e.completer.unwritten()
	budget := e.cfg.Workers + e.cfg.Waits + e.cfg.FlushMax
	e.mu.Lock()
	i := 0
jobs:
	for ; i < len(ahead); i++ {
		j := ahead[i]
		if e.inFlight+e.waiting+unwritten >= budget {
			break // the results are behind: this job and the rest wait
		}
		if until, held := e.breakers.heldUntil(j.Host, now); held {
			back = append(back, e.release(j, until, "host held after a failure"))
			continue
		}
		if j.LeaseUntil.Sub(now) < e.cfg.LeaseFor-e.cfg.LeaseFor/aheadWaitShare {
			// Leased ahead and kept waiting (slow deliveries, results
			// behind): its lease has run too far for a delivery whose
			// result must be written before it ends.
			back = append(back, e.release(j, j.RunAt, "leased ahead and waited too long for a slot"))
			continue
		}
		f := &flight{host: j.Host, failing: e.breakers.isFailing(j.Host)}
		switch {
		case f.failing && (e.failing >= e.cfg.FailingSlots || e.waiting >= e.cfg.Waits):
			back = append(back, e.release(j, j.RunAt, "failing hosts' slots taken"))
			continue
		case f.failing:
			f.inWaits = true
			e.failing++
			e.waiting++
		case e.inFlight >= e.cfg.Workers:
			break jobs // no slot: this job and the rest wait
		default:
			if !e.breakers.answeredSince(j.Host, now.Add(-answeredFor)) {
				f.parkAt = now.Add(e.cfg.ParkAfter)
			}
			e.inFlight++
		}
		e.flights[f] = struct{}{}
		start = append(start, leased{job: j, flight: f})
	}
	rest = ahead[i:]
	n := e.inFlight + e.waiting
	e.mu.Unlock()
	if len(start) > 0 {
		e.obs.InFlight(n)
	}
	for _, r := range back {
		e.completer.add(r)
	}
	for _, l := range start {
		workers.Add(1)
		go func() {
			defer workers.Done()
			e.work(deliverCtx, l.job, l.flight)
		}()
	}
	return rest, len(back)
}

// leaseRoom is how many jobs the next lease may ask for: the free slots,
// plus LeaseAhead when the last lease came back full (more is likely
// runnable, and the running batch's slots will want it) and the results
// keep up, less the jobs
// leased and not yet started and those the leases in flight asked for.
func (e *Engine) leaseRoom(ahead, reserved int, more bool) int {
	unwritten := e.completer.unwritten()
	e.mu.Lock()
	room := e.cfg.Workers - e.inFlight
	e.mu.Unlock()
	// Ahead only while the results keep up (no more than a batch of them
	// unwritten): when the store is slow or away, a job leased ahead would
	// wait for the completer with its lease running.
	if more && unwritten < e.cfg.FlushMax {
		room += max(0, e.cfg.LeaseAhead)
	}
	return room - ahead - reserved
}
