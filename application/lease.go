package application

import (
	"context"
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

// leaseBatch leases, in one round trip, as many jobs as this process has
// free slots, and takes their slots. asked is how many it asked for (0: no
// slot was free, nothing was asked).
//
// The per-host cap is the store's to keep (LeaseRequest.PerHost): it counts
// every process's leases, so this process skips nothing for it. What the
// engine adds:
//   - a job of a host whose last attempt failed runs in the Waits budget,
//     at most FailingSlots of them at a time: when those are taken the
//     lease skips every host known to be failing, and the failing-host
//     jobs the store returns anyway go straight back (a release through
//     the completer: no attempt spent, their place in the queue kept);
//   - a job of a held host (one that just failed, or asked to wait with
//     Retry-After: see hold) goes back to the end of the hold, unattempted;
//     the lease skips held hosts when they are few enough to name;
//   - a job of a host that has not answered lately may move from its slot
//     to Waits after ParkAfter (parkDue).
func (e *Engine) leaseBatch(ctx context.Context) (batch []leased, asked int, err error) {
	now := e.clock.Now()
	e.mu.Lock()
	free := e.cfg.Workers - e.inFlight
	skip := e.breakers.heldHosts(now, maxSkipHeld)
	if e.failing >= e.cfg.FailingSlots || e.waiting >= e.cfg.Waits {
		skip = append(skip, e.breakers.failingHosts()...)
	}
	e.mu.Unlock()
	if free <= 0 {
		return nil, 0, nil
	}

	started := time.Now()
	// The lease runs on a context shutdown does not cancel: a lease cut off
	// midway may still have been granted by the store, and its jobs would
	// stay leased, worked by nobody, until the reaper. A batch that comes
	// back is worked (or released) like any other.
	leaseCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	jobs, err := e.jobs.LeaseBatch(leaseCtx, ports.LeaseRequest{
		Owner: e.cfg.Owner, Token: e.ids.NewID(), Now: now, Until: now.Add(e.cfg.LeaseFor),
		Limit: free, PerHost: e.cfg.PerHost, SkipHosts: skip,
	})
	cancel()
	e.obs.Leased(time.Since(started), len(jobs))
	if err != nil {
		return nil, free, err
	}
	if len(jobs) == 0 {
		return nil, free, nil
	}

	e.mu.Lock()
	batch = make([]leased, 0, len(jobs))
	var back []result
	for _, j := range jobs {
		if until, held := e.breakers.heldUntil(j.Host, now); held {
			back = append(back, e.release(j, until, "host held after a failure"))
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
		default:
			if !e.breakers.answeredSince(j.Host, now.Add(-answeredFor)) {
				f.parkAt = now.Add(e.cfg.ParkAfter)
			}
			e.inFlight++
		}
		e.flights[f] = struct{}{}
		batch = append(batch, leased{job: j, flight: f})
	}
	n := e.inFlight + e.waiting
	e.mu.Unlock()
	e.obs.InFlight(n)
	for _, r := range back {
		e.completer.add(r)
	}
	// A batch with jobs sent back still counts as full:
	// the next lease skips the failing hosts and may find more.
	if len(back) > 0 {
		return batch, len(batch), nil
	}
	return batch, free, nil
}
