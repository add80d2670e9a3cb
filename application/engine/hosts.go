package engine

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// hostPolicy is what this process knows of the remote hosts, under its
// own lock, and the rules it draws from it:
//   - the breakers (breaker.go): the states this process's writes
//     returned, so the success path, by far the most common, writes
//     nothing for a healthy host; the hosts whose last attempt failed
//     (their deliveries wait in the waits, failingSlots at most);
//     the quarantined hosts of the store, read in one List every
//     breakerCacheTTL;
//   - the holds: a host whose attempt just failed, or that asked for time
//     with Retry-After, has its other jobs wait, unattempted (hold);
//   - the answers: when each host last answered, promptly or slower than
//     ParkAfter, for where its next delivery runs.
//
// The dispatcher asks it about each job it admits (verdict) and each lease
// (skipHosts); a delivery tells it whether its host answered (heard); the
// completer has it record each batch before the batch is settled (record).
type hostPolicy struct {
	hostDeps
	parkAfter time.Duration
	noHold    bool // Config.NoHold

	mu          sync.Mutex
	states      map[string]breakerEntry
	failing     map[string]struct{}
	quarantined map[string]time.Time // host → end of its quarantine
	viewAt      time.Time            // when quarantined was read; zero: never
	// lateSuccesses are successes waiting to be written (successWriteEvery),
	// by host, at the time of the latest.
	lateSuccesses map[string]time.Time
	lateWrittenAt time.Time
	// answers is each host's last answer to an attempt here (any HTTP
	// status that is not a host failure): when, and whether it took longer
	// than ParkAfter.
	answers map[string]answer
	// held is the hosts whose jobs wait, unattempted, until the time given.
	held map[string]time.Time
	// silent counts, by host, the deliveries that parked on a host not
	// heard from lately and have not answered or been recorded: a lease
	// passes over the host meanwhile, so a server that accepts and never
	// answers gets one delivery timeout, not one for each per-host place,
	// before its failure holds it.
	silent map[string]int
}

// hostDeps are what the host policy uses and does not own.
type hostDeps struct {
	instances ports.InstanceStore
	jobs      ports.JobStore // DeferHost: holds and quarantines move the host's queued jobs
	clock     ports.Clock
	rnd       ports.Random // the hold's jitter
	obs       ports.EngineObserver
	log       *slog.Logger
	debug     bool
}

// answer is a host's last answer.
type answer struct {
	at   time.Time
	slow bool // it took longer than ParkAfter
}

// maxCachedBreakers bounds each of the host policy's maps.
const maxCachedBreakers = 50_000

// answeredFor is how long an answer counts as recent: a host that answered
// promptly (within ParkAfter) within it is taken to answer again, and its
// deliveries keep their slots.
const answeredFor = 10 * time.Minute

// maxSkipHeld bounds how many held hosts a lease names to skip; the jobs of
// held hosts beyond it come back with a lease and go back unattempted.
const maxSkipHeld = 256

func newHostPolicy(deps hostDeps, cfg Config) *hostPolicy {
	return &hostPolicy{hostDeps: deps, parkAfter: cfg.ParkAfter, noHold: cfg.NoHold,
		states: map[string]breakerEntry{}, failing: map[string]struct{}{}, quarantined: map[string]time.Time{},
		lateSuccesses: map[string]time.Time{}, answers: map[string]answer{}, held: map[string]time.Time{}, silent: map[string]int{}}
}

// hostVerdict is what the host policy says of a job's host at admission.
type hostVerdict struct {
	held      bool      // its jobs wait until heldUntil, unattempted
	heldUntil time.Time //
	failing   bool      // its last attempt failed: the delivery waits in the waits
	answered  bool      // it answered promptly lately: the delivery keeps its slot
	slow      bool      // its last answer, lately, took longer than ParkAfter: the delivery waits in the waits
}

// verdict is what the host policy says of host at now.
func (p *hostPolicy) verdict(host string, now time.Time) hostVerdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	var v hostVerdict
	v.heldUntil, v.held = p.heldUntil(host, now)
	_, v.failing = p.failing[host]
	if a, ok := p.answers[host]; ok && !a.at.Before(now.Add(-answeredFor)) {
		v.answered, v.slow = !a.slow, a.slow
	}
	return v
}

// skipHosts is the hosts a lease at now passes over: the held ones (while
// they are few enough to name), and, when failingFull (their share of the
// waits is taken), every failing host.
func (p *hostPolicy) skipHosts(now time.Time, failingFull bool) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	skip := p.heldHosts(now, maxSkipHeld)
	for h := range p.silent {
		skip = append(skip, h)
	}
	if failingFull {
		for h := range p.failing {
			skip = append(skip, h)
		}
	}
	return skip
}

// silence counts a parked delivery to host, not heard from lately
// (silent). slots.park calls it under its own lock: the host policy's lock
// is taken inside the slots', never the other way.
func (p *hostPolicy) silence(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent[host]++
}

// unsilence takes back one silent delivery to host: it answered, or its
// failure is recorded. Called with mu held.
func (p *hostPolicy) unsilence(host string) {
	if p.silent[host] <= 1 {
		delete(p.silent, host)
	} else {
		p.silent[host]--
	}
}

// heard takes an attempt's answer: a host that answered within ParkAfter
// keeps its slots for its next deliveries; one that answered slower has
// its next deliveries wait in the waits, so that however many servers are
// slow, the ones that answer promptly keep the slots and the slow ones go
// on in the waits, within their per-host cap. A silent host that answered
// is no longer passed over.
func (p *hostPolicy) heard(r result) {
	if !r.answered() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	trim(p.answers, func(_ string, a answer) bool { return r.at.Sub(a.at) >= answeredFor })
	p.answers[r.job.Host] = answer{at: r.at, slow: r.took > p.parkAfter}
	if r.silent {
		p.unsilence(r.job.Host)
	}
}

// record takes a batch of results before the completer settles it: the
// breaker changes (breaker.go), then the holds.
func (p *hostPolicy) record(ctx context.Context, batch []result, final bool) {
	p.recordBreakers(ctx, batch, final)
	p.holdFailed(ctx, batch)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range batch {
		if r.silent && !r.answered() { // an answer took it back already (heard)
			p.unsilence(r.job.Host)
		}
	}
}

// holdFailed holds the hosts of the batch's attempts that failed (a host
// failure: no answer, a timeout, a 5xx) or were asked to wait (a
// Retry-After): the host's other jobs are not attempted now but at the end
// of the hold, the first step of the retry curve or the Retry-After if
// longer, unattempted (their attempts untouched; DeferHost moves the queued
// ones in the store, for every process, and the lease sends back any that
// come due meanwhile). A dead server in a fan-out then costs one attempt
// per job slot it holds, not one per job; the jobs that failed retry on
// their own curve. A host the breaker has quarantined is left to the
// quarantine. It runs before the batch is settled, so that the host's slots
// come back only once its queued jobs have moved.
func (p *hostPolicy) holdFailed(ctx context.Context, batch []result) {
	if p.noHold {
		return
	}
	holds := map[string]time.Time{}
	for _, r := range batch {
		o := r.outcome
		if o == nil || !o.HostFailure && o.RetryAfter <= 0 {
			continue
		}
		hold := domain.RetryDelay(1, p.rnd.Float64())
		until := r.at.Add(max(hold, min(o.RetryAfter, domain.MaxRetryAfter)))
		if until.After(holds[r.job.Host]) {
			holds[r.job.Host] = until
		}
	}
	if len(holds) == 0 {
		return
	}
	now := p.clock.Now()
	hosts := make([]string, 0, len(holds))
	p.mu.Lock()
	for h, until := range holds {
		if until.After(now) && !p.isQuarantined(h, now) && p.hold(h, until, now) {
			hosts = append(hosts, h)
		}
	}
	p.mu.Unlock()
	slices.Sort(hosts)
	for _, h := range hosts {
		until := holds[h]
		n, err := p.jobs.DeferHost(ctx, h, until)
		if err != nil {
			// The lease still sends this process's late comers back; other
			// processes may attempt the host's jobs before the hold ends.
			p.log.Warn("host's jobs not held in the store", "host", h, "until", until, "err", err)
		} else if p.debug {
			p.log.Debug("host held after a failure", "host", h, "until", until, "jobs_held", n)
		}
		// The batch's own releases of the host wait too.
		deferReleases(batch, h, until, func(r result) bool { return r.outcome == nil })
	}
}

// deferReleases moves the batch's jobs of host that go back to the queue
// before until, and that which says, to until.
func deferReleases(batch []result, host string, until time.Time, which func(result) bool) {
	for i := range batch {
		st := &batch[i].st
		if batch[i].job.Host == host && st.State == domain.JobQueued && st.RunAt.Before(until) && which(batch[i]) {
			st.RunAt = until
		}
	}
}

// hold keeps host's jobs until until (a later hold already there stays).
// It reports whether the hold is new or longer. Called with mu held.
func (p *hostPolicy) hold(host string, until, now time.Time) bool {
	trim(p.held, func(_ string, t time.Time) bool { return !now.Before(t) })
	if t, ok := p.held[host]; ok && !t.Before(until) {
		return false
	}
	p.held[host] = until
	return true
}

// heldUntil reports whether host is held at now, and until when; an
// expired hold is forgotten. Called with mu held.
func (p *hostPolicy) heldUntil(host string, now time.Time) (time.Time, bool) {
	t, ok := p.held[host]
	if ok && !now.Before(t) {
		delete(p.held, host)
		return time.Time{}, false
	}
	return t, ok
}

// heldHosts lists the hosts held at now, or nil when there are more than
// limit (the lease then finds their jobs and sends them back). Called with
// mu held.
func (p *hostPolicy) heldHosts(now time.Time, limit int) []string {
	var out []string
	for h, t := range p.held {
		if !now.Before(t) {
			delete(p.held, h)
			continue
		}
		out = append(out, h)
	}
	if len(out) > limit {
		return nil
	}
	return out
}

// trim bounds one of the host policy's maps: once it holds
// maxCachedBreakers hosts, the entries stale says are no longer worth
// keeping go.
func trim[V any](m map[string]V, stale func(host string, v V) bool) {
	if len(m) < maxCachedBreakers {
		return
	}
	for h, v := range m {
		if stale(h, v) {
			delete(m, h)
		}
	}
}
