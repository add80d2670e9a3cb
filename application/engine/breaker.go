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

// maxCachedBreakers bounds the breaker cache of a process.
const maxCachedBreakers = 50_000

// breakerCache is what this process knows of the hosts' breakers, guarded
// by Engine.mu: the states its own writes returned (so the success path,
// by far the most common, writes nothing for a healthy host), the hosts
// whose last attempt failed (FailingSlots), and the quarantined hosts of the
// store, read in one List every breakerCacheTTL.
type breakerCache struct {
	states      map[string]breakerEntry
	failing     map[string]struct{}
	quarantined map[string]time.Time // host → end of its quarantine
	viewAt      time.Time            // when quarantined was read; zero: never
	// lateSuccesses are successes waiting to be written (successWriteEvery),
	// by host, at the time of the latest.
	lateSuccesses map[string]time.Time
	lateWrittenAt time.Time
	// answers is when each host last answered an attempt here (any HTTP
	// status that is not a host failure): a delivery to a host without a
	// recent answer may wait in the Waits budget (Config.ParkAfter).
	answers map[string]time.Time
	// held is the hosts whose jobs wait, unattempted, until the time
	// given: the host just failed, or asked for time with Retry-After.
	held map[string]time.Time
}

type breakerEntry struct {
	state domain.RemoteInstance
	at    time.Time
}

func newBreakerCache() breakerCache {
	return breakerCache{states: map[string]breakerEntry{}, failing: map[string]struct{}{}, quarantined: map[string]time.Time{},
		lateSuccesses: map[string]time.Time{}, answers: map[string]time.Time{}, held: map[string]time.Time{}}
}

// answeredFor is how long an answer counts as recent: a host that answered
// promptly (within ParkAfter) within it is taken to answer again, and its
// deliveries keep their slots.
const answeredFor = 10 * time.Minute

// maxSkipHeld bounds how many held hosts a lease names to skip; the jobs of
// held hosts beyond it come back with a lease and go back unattempted.
const maxSkipHeld = 256

func (c *breakerCache) answered(host string, at time.Time) {
	if len(c.answers) >= maxCachedBreakers {
		for h, t := range c.answers {
			if at.Sub(t) >= answeredFor {
				delete(c.answers, h)
			}
		}
	}
	c.answers[host] = at
}

// answeredSlowly forgets that host answered lately: it answered, but
// took longer than ParkAfter, and is not taken to answer promptly.
func (c *breakerCache) answeredSlowly(host string) { delete(c.answers, host) }

func (c *breakerCache) answeredSince(host string, since time.Time) bool {
	t, ok := c.answers[host]
	return ok && !t.Before(since)
}

// hold keeps host's jobs until until (a later hold already there stays).
// It reports whether the hold is new or longer.
func (c *breakerCache) hold(host string, until, now time.Time) bool {
	if len(c.held) >= maxCachedBreakers {
		for h, t := range c.held {
			if !now.Before(t) {
				delete(c.held, h)
			}
		}
	}
	if t, ok := c.held[host]; ok && !t.Before(until) {
		return false
	}
	c.held[host] = until
	return true
}

func (c *breakerCache) heldUntil(host string, now time.Time) (time.Time, bool) {
	t, ok := c.held[host]
	if ok && !now.Before(t) {
		delete(c.held, host)
		return time.Time{}, false
	}
	return t, ok
}

// heldHosts lists the hosts held at now, or nil when there are more than
// limit (the lease then finds their jobs and sends them back).
func (c *breakerCache) heldHosts(now time.Time, limit int) []string {
	var out []string
	for h, t := range c.held {
		if !now.Before(t) {
			delete(c.held, h)
			continue
		}
		out = append(out, h)
	}
	if len(out) > limit {
		return nil
	}
	return out
}

func (c *breakerCache) failingHosts() []string {
	out := make([]string, 0, len(c.failing))
	for h := range c.failing {
		out = append(out, h)
	}
	return out
}

func (c *breakerCache) isFailing(host string) bool {
	_, ok := c.failing[host]
	return ok
}

func (c *breakerCache) isQuarantined(host string, now time.Time) bool {
	until, ok := c.quarantined[host]
	return ok && now.Before(until)
}

func (c *breakerCache) put(r domain.RemoteInstance, now time.Time) {
	if len(c.states) >= maxCachedBreakers {
		// Bound the cache: forget what is stale (it would be written again).
		for h, b := range c.states {
			if now.Sub(b.at) >= breakerCacheTTL {
				delete(c.states, h)
				delete(c.failing, h)
			}
		}
	}
	c.states[r.Host] = breakerEntry{state: r, at: now}
	if r.ConsecutiveFailures > 0 {
		c.failing[r.Host] = struct{}{}
	} else {
		delete(c.failing, r.Host)
	}
	if r.Quarantined(now) {
		c.quarantined[r.Host] = r.QuarantinedUntil
	} else {
		delete(c.quarantined, r.Host)
	}
}

// successKnown says a success of host at now changes nothing worth a
// write: the cached state is fresh, healthy, and its last success recent
// (operators see LastSuccessAt within a minute).
func (c *breakerCache) successKnown(host string, now time.Time) bool {
	b, ok := c.states[host]
	return ok && b.state.Healthy() && now.Sub(b.state.LastSuccessAt) < time.Minute && now.Sub(b.at) < breakerCacheTTL
}

// refreshQuarantines reads the quarantined hosts when the view is
// breakerCacheTTL old: one round trip per period for the whole process.
func (e *Engine) refreshQuarantines(ctx context.Context) {
	now := e.clock.Now()
	e.mu.Lock()
	due := e.breakers.viewAt.IsZero() || now.Sub(e.breakers.viewAt) >= breakerCacheTTL
	if due {
		e.breakers.viewAt = now // a failed read is retried next period, not every loop
	}
	e.mu.Unlock()
	if !due {
		return
	}
	list, err := e.instances.List(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("quarantined hosts not read; the last view stays", "err", err)
		}
		return
	}
	view := make(map[string]time.Time, len(list))
	for _, r := range list {
		view[r.Host] = r.QuarantinedUntil
	}
	e.mu.Lock()
	e.breakers.quarantined = view
	e.mu.Unlock()
}

// quarantinedUntil reports whether host is quarantined now. The view is
// only a hint: a host it names is checked against the store, so a
// quarantine an operator lifted in another process is not re-imposed.
func (e *Engine) quarantinedUntil(ctx context.Context, host string) (time.Time, bool) {
	now := e.clock.Now()
	e.mu.Lock()
	until, ok := e.breakers.quarantined[host]
	e.mu.Unlock()
	if !ok || !now.Before(until) {
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
	e.mu.Lock()
	e.breakers.put(r, now)
	e.mu.Unlock()
	return r.QuarantinedUntil, r.Quarantined(now)
}

// breakerEvent is one attempt's verdict on its host.
type breakerEvent struct {
	failure bool
	reason  string
	at      time.Time
}

// successWriteEvery spaces the writes of successes that change nothing
// urgent (a host not known failing here: its first contact, or a success
// whose cached state is stale): they are gathered and written together at
// most this often, so the first contacts of a fan-out's thousand hosts cost
// a few writes, not one per batch. A success of a host known failing resets
// its breaker at once. Operators see LastSuccessAt within a minute anyway.
const successWriteEvery = time.Second

// recordBreakers feeds a batch's attempts to their hosts' breakers, in one
// UpdateMany for every host that needs a write (a failure, a success of a
// host known failing, and the gathered successes once successWriteEvery has
// passed; stop writes the rest). A failure that opens a breaker moves the
// host's queued jobs past the quarantine, and the batch's retries of any
// quarantined host with them, before the batch is settled: the jobs' slots come
// back only then, so no job of the host is attempted in between.
func (e *Engine) recordBreakers(ctx context.Context, batch []result, final bool) {
	now := e.clock.Now()
	events := map[string][]breakerEvent{}
	e.mu.Lock()
	late := e.breakers.lateSuccesses
	for _, r := range batch {
		if r.outcome == nil {
			continue
		}
		host := r.job.Host
		ev := breakerEvent{failure: r.outcome.HostFailure, reason: r.outcome.Reason, at: r.at}
		switch {
		case ev.failure:
			if at, ok := late[host]; ok { // keep the order: that success came first
				events[host] = append(events[host], breakerEvent{at: at})
				delete(late, host)
			}
			events[host] = append(events[host], ev)
		case len(events[host]) > 0 || e.breakers.isFailing(host):
			events[host] = append(events[host], ev)
		case !e.breakers.successKnown(host, now):
			late[host] = ev.at
		}
	}
	if len(late) > 0 && (final || now.Sub(e.breakers.lateWrittenAt) >= successWriteEvery) {
		for host, at := range late {
			events[host] = append(events[host], breakerEvent{at: at})
		}
		clear(late)
		e.breakers.lateWrittenAt = now
	}
	e.mu.Unlock()
	if len(events) == 0 {
		return
	}
	hosts := make([]string, 0, len(events))
	for h := range events {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	opened := map[string]bool{}
	states, err := e.instances.UpdateMany(ctx, hosts, func(r *domain.RemoteInstance) {
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
		e.log.Warn("breaker changes not recorded", "hosts", len(hosts), "err", err)
		return
	}
	e.mu.Lock()
	for _, r := range states {
		e.breakers.put(r, now)
	}
	e.mu.Unlock()
	for _, host := range hosts {
		r, ok := states[host]
		if !opened[host] || !ok {
			continue
		}
		e.obs.Quarantined(host, r.QuarantinedUntil)
		n, err := e.jobs.DeferHost(ctx, host, r.QuarantinedUntil)
		e.log.Warn("host quarantined", "host", host, "until", r.QuarantinedUntil, "level", r.QuarantineLevel,
			"failures", r.ConsecutiveFailures, "jobs_deferred", n, "err", err)
	}
	// The batch's retries of a quarantined host wait for the end of the
	// quarantine: whether this batch opened it or an earlier one did while
	// the attempt was in flight (the per-host cap lets two run), the job
	// must not come due inside it, where DeferHost can no longer reach it.
	for i := range batch {
		r, ok := states[batch[i].job.Host]
		if st := &batch[i].st; ok && r.Quarantined(now) && st.State == domain.JobQueued && st.RunAt.Before(r.QuarantinedUntil) {
			st.RunAt = r.QuarantinedUntil
		}
	}
}
