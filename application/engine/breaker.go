package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/heraldfed/herald/domain"
)

// breakerCacheTTL bounds how stale this process's view of another
// process's breaker changes may be. Within it:
//   - a quarantine another process opened is seen at the latest when the
//     view is next refreshed, breakerCacheTTL after the last refresh (one
//     List of the quarantined hosts per period, never a read per job);
//     meanwhile that process has moved the host's queued jobs past the
//     quarantine (DeferHost), so only a job that came due in between (a
//     fresh enqueue, a retry) can be attempted (TestEngineSeesAnotherProcessQuarantineWithinTheTTL);
//   - an operator's lift in another process is seen at once: a job whose
//     host the view says is quarantined is checked against the store
//     before it is held back (jobs of quarantined hosts are few: their
//     queued jobs were deferred);
//   - a host another process saw failing, that this one cached healthy,
//     has its next success here written (resetting the count) at most
//     breakerCacheTTL late.
const breakerCacheTTL = 10 * time.Second

// successWriteEvery spaces the writes of successes that change nothing
// urgent (a host not known failing here: its first contact, or a success
// whose cached state is stale): they are gathered and written together at
// most this often, so the first contacts of a fan-out's thousand hosts cost
// a few writes, not one per batch. A success of a host known failing resets
// its breaker at once. Operators see LastSuccessAt within a minute anyway.
const successWriteEvery = time.Second

type breakerEntry struct {
	state domain.RemoteInstance
	at    time.Time
}

// refresh reads the quarantined hosts when the view is breakerCacheTTL
// old: one round trip per period for the whole process.
func (p *hostPolicy) refresh(ctx context.Context) {
	now := p.clock.Now()
	p.mu.Lock()
	due := p.viewAt.IsZero() || now.Sub(p.viewAt) >= breakerCacheTTL
	if due {
		p.viewAt = now // a failed read is retried next period, not every loop
	}
	p.mu.Unlock()
	if !due {
		return
	}
	list, err := p.instances.List(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("quarantined hosts not read; the last view stays", "err", err)
		}
		return
	}
	view := make(map[string]time.Time, len(list))
	for _, r := range list {
		view[r.Host] = r.QuarantinedUntil
	}
	p.mu.Lock()
	p.quarantined = view
	p.mu.Unlock()
}

// quarantinedUntil reports whether host is quarantined now. The view is
// only a hint: a host it names is checked against the store, so a
// quarantine an operator lifted in another process is not re-imposed.
func (p *hostPolicy) quarantinedUntil(ctx context.Context, host string) (time.Time, bool) {
	now := p.clock.Now()
	p.mu.Lock()
	quarantined := p.isQuarantined(host, now)
	p.mu.Unlock()
	if !quarantined {
		return time.Time{}, false
	}
	r, err := p.instances.Get(ctx, host)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		r = domain.NewRemoteInstance(host)
	case err != nil:
		// Unknown breaker state: attempt the delivery. At worst one
		// attempt goes to a quarantined host; never does a job stall.
		p.log.Warn("breaker state unavailable", "host", host, "err", err)
		return time.Time{}, false
	}
	p.mu.Lock()
	p.put(r, now)
	p.mu.Unlock()
	return r.QuarantinedUntil, r.Quarantined(now)
}

// breakerEvent is one attempt's verdict on its host.
type breakerEvent struct {
	failure bool
	reason  string
	at      time.Time
}

// recordBreakers feeds a batch's attempts to their hosts' breakers, in one
// UpdateMany for every host that needs a write (a failure, a success of a
// host known failing, and the gathered successes once successWriteEvery has
// passed; the final flush writes the rest). A failure that opens a breaker
// moves the host's queued jobs past the quarantine, and the batch's retries
// of any quarantined host with them, before the batch is settled: the
// jobs' slots come back only then, so no job of the host is attempted in
// between.
func (p *hostPolicy) recordBreakers(ctx context.Context, batch []result, final bool) {
	now := p.clock.Now()
	events := p.breakerEvents(batch, now, final)
	if len(events) == 0 {
		return
	}
	hosts := make([]string, 0, len(events))
	for h := range events {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	opened := map[string]bool{}
	states, err := p.instances.UpdateMany(ctx, hosts, func(r *domain.RemoteInstance) {
		o := false
		for _, ev := range events[r.Host] {
			if ev.failure {
				o = r.RecordFailure(ev.at, ev.reason) || o
			} else {
				r.RecordSuccess(ev.at)
			}
		}
		opened[r.Host] = o // fn may run again for a host: the last run is what was stored
	})
	if err != nil {
		p.log.Warn("breaker changes not recorded", "hosts", len(hosts), "err", err)
		return
	}
	p.mu.Lock()
	for _, r := range states {
		p.put(r, now)
	}
	p.mu.Unlock()
	for _, host := range hosts {
		r, ok := states[host]
		if !ok {
			continue
		}
		if opened[host] {
			p.obs.Quarantined(host, r.QuarantinedUntil)
			n, err := p.jobs.DeferHost(ctx, host, r.QuarantinedUntil)
			p.log.Warn("host quarantined", "host", host, "until", r.QuarantinedUntil, "level", r.QuarantineLevel,
				"failures", r.ConsecutiveFailures, "jobs_deferred", n, "err", err)
		}
		// The batch's retries of a quarantined host wait for the end of
		// the quarantine: whether this batch opened it or an earlier one
		// did while the attempt was in flight (the per-host cap lets two
		// run), the job must not come due inside it, where DeferHost can
		// no longer reach it.
		if r.Quarantined(now) {
			deferReleases(batch, host, r.QuarantinedUntil, func(result) bool { return true })
		}
	}
}

// breakerEvents sorts a batch's attempts into the writes they need, by
// host. Successes of hosts not known failing wait in lateSuccesses, and
// go with the next write once successWriteEvery has passed (or final).
func (p *hostPolicy) breakerEvents(batch []result, now time.Time, final bool) map[string][]breakerEvent {
	events := map[string][]breakerEvent{}
	p.mu.Lock()
	defer p.mu.Unlock()
	late := p.lateSuccesses
	for _, r := range batch {
		if r.outcome == nil {
			continue
		}
		host := r.job.Host
		ev := breakerEvent{failure: r.outcome.HostFailure, reason: r.outcome.Reason, at: r.at}
		_, failing := p.failing[host]
		switch {
		case ev.failure:
			if at, ok := late[host]; ok { // keep the order: that success came first
				events[host] = append(events[host], breakerEvent{at: at})
				delete(late, host)
			}
			events[host] = append(events[host], ev)
		case len(events[host]) > 0 || failing:
			events[host] = append(events[host], ev)
		case !p.successKnown(host, now):
			late[host] = ev.at
		}
	}
	if len(late) > 0 && (final || now.Sub(p.lateWrittenAt) >= successWriteEvery) {
		for host, at := range late {
			events[host] = append(events[host], breakerEvent{at: at})
		}
		clear(late)
		p.lateWrittenAt = now
	}
	return events
}

// put caches a host's breaker state as a write or a read returned it.
// Called with mu held.
func (p *hostPolicy) put(r domain.RemoteInstance, now time.Time) {
	// Forget what is stale (it would be written again).
	trim(p.states, func(h string, b breakerEntry) bool {
		if now.Sub(b.at) < breakerCacheTTL {
			return false
		}
		delete(p.failing, h)
		return true
	})
	p.states[r.Host] = breakerEntry{state: r, at: now}
	if r.ConsecutiveFailures > 0 {
		p.failing[r.Host] = struct{}{}
	} else {
		delete(p.failing, r.Host)
	}
	if r.Quarantined(now) {
		p.quarantined[r.Host] = r.QuarantinedUntil
	} else {
		delete(p.quarantined, r.Host)
	}
}

// successKnown says a success of host at now changes nothing worth a
// write: the cached state is fresh, healthy, and its last success recent
// (operators see LastSuccessAt within a minute). Called with mu held.
func (p *hostPolicy) successKnown(host string, now time.Time) bool {
	b, ok := p.states[host]
	return ok && b.state.Healthy() && now.Sub(b.state.LastSuccessAt) < time.Minute && now.Sub(b.at) < breakerCacheTTL
}

// isQuarantined reads the quarantine view. Called with mu held.
func (p *hostPolicy) isQuarantined(host string, now time.Time) bool {
	until, ok := p.quarantined[host]
	return ok && now.Before(until)
}
