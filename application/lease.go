package application

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// leased is one job of a lease batch and whether it runs in the failing
// hosts' shared slots.
type leased struct {
	job     domain.Job
	failing bool
}

// leaseBatch leases, in one round trip, as many jobs as this process has
// free slots, and takes their slots. asked is how many it asked for (0: no
// slot was free, nothing was asked).
//
// The per-host cap is the store's to keep (LeaseRequest.PerHost): it counts
// every process's leases, so this process skips nothing for it. What the
// engine adds is FailingSlots: when the failing hosts' slots are taken it
// skips every host known to be failing; when some are free, the store may
// still return more failing-host jobs than fit, and those go straight back
// (a release through the completer: no attempt spent, their place in the
// queue kept).
func (e *Engine) leaseBatch(ctx context.Context) (batch []leased, asked int, err error) {
	e.mu.Lock()
	free := e.cfg.Workers - e.inFlight
	var skip []string
	if e.failing >= e.cfg.FailingSlots {
		skip = e.breakers.failingHosts()
	}
	e.mu.Unlock()
	if free <= 0 {
		return nil, 0, nil
	}

	now := e.clock.Now()
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
	var over []domain.Job
	for _, j := range jobs {
		failing := e.breakers.isFailing(j.Host)
		if failing && e.failing >= e.cfg.FailingSlots {
			over = append(over, j)
			continue
		}
		if failing {
			e.failing++
		}
		e.inFlight++
		batch = append(batch, leased{job: j, failing: failing})
	}
	n := e.inFlight
	e.mu.Unlock()
	e.obs.InFlight(n)
	for _, j := range over {
		e.completer.add(e.release(j, j.RunAt, "failing hosts' slots taken"))
	}
	// A batch with jobs sent back still counts as full: the next lease
	// skips the failing hosts and may find more.
	if len(over) > 0 {
		return batch, len(batch), nil
	}
	return batch, free, nil
}
