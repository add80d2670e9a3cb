package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The maintenance services run beside the dispatcher, each on its own
// period of the injected clock, and share nothing with it but the store.

// reaper requeues jobs whose lease expired: their worker died (a kill -9)
// or stalled (SPEC §2, every 30 s). A reap counts as an attempt.
type reaper struct {
	jobs  ports.JobStore
	clock ports.Clock
	obs   ports.EngineObserver
	log   *slog.Logger
	every time.Duration
}

// run reaps every period until ctx ends, and calls wake when a pass
// requeued jobs.
func (r *reaper) run(ctx context.Context, wake func()) {
	every(ctx, r.clock, r.every, func(ctx context.Context) {
		res, err := r.jobs.Reap(ctx, r.clock.Now(), domain.MaxAttempts)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Error("reaper pass failed", "err", err)
		case res.Requeued+res.Dead > 0:
			r.obs.Reaped(res)
			r.log.Warn("reaper recovered jobs with expired leases", "requeued", res.Requeued, "dead", res.Dead)
			wake()
		}
	})
}

// purger deletes finished jobs older than the retention period (SPEC §2:
// 7 days, every hour; a store with a TTL index needs none: every < 0).
type purger struct {
	jobs      ports.JobStore
	clock     ports.Clock
	log       *slog.Logger
	every     time.Duration
	retention time.Duration
}

func (p *purger) run(ctx context.Context) {
	if p.every <= 0 {
		return
	}
	every(ctx, p.clock, p.every, func(ctx context.Context) {
		n, err := p.jobs.Purge(ctx, p.clock.Now().Add(-p.retention))
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Error("retention purge failed", "err", err)
		case n > 0:
			p.log.Info("retention purge", "deleted", n)
		}
	})
}

// every calls f each period until ctx ends.
func every(ctx context.Context, clock ports.Clock, period time.Duration, f func(context.Context)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-clock.After(period):
			f(ctx)
		}
	}
}
