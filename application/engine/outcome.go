package engine

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// result is one leased job's next state, waiting in the completer to be
// written: the settlement (fenced by the job's token), and, when the job was
// attempted, the outcome its host's breaker must hear.
type result struct {
	job     domain.Job // as leased: its token and the end of its lease
	st      ports.Settlement
	outcome *domain.Outcome // nil: no attempt was made
	at      time.Time       // when the attempt ended
	// report says the observer hears where the job went (Settled): after
	// an attempt, or when it died; not for a release.
	report bool
	to     string // for logs: succeeded, queued, dead, deferred, released
	why    string // a release's reason, for logs
	took   time.Duration
}

// decided is the result of an attempt, by domain.Decide.
func (e *Engine) decided(job domain.Job, o domain.Outcome, d domain.Decision, now time.Time, took time.Duration) result {
	st := ports.Settlement{ID: job.ID, Token: job.LeaseToken, State: d.State, Attempts: d.Attempts}
	switch d.State {
	case domain.JobSucceeded:
		st.FinishedAt = now // LastError "": the job's last attempt succeeded
	case domain.JobQueued:
		st.RunAt, st.LastError = d.RunAt, d.Reason
	default:
		st.LastError, st.FinishedAt = d.Reason, now
	}
	return result{job: job, st: st, outcome: &o, at: now, report: true, to: string(d.State), took: took}
}

// dead is a job that died without an attempt (its sender is gone).
func (e *Engine) dead(job domain.Job, reason string, now time.Time) result {
	return result{job: job, report: true, to: string(domain.JobDead), at: now,
		st: ports.Settlement{ID: job.ID, Token: job.LeaseToken, State: domain.JobDead, Attempts: job.Attempts, LastError: reason, FinishedAt: now}}
}

// release puts a job back at runAt as it was: no attempt spent, its last
// error kept.
func (e *Engine) release(job domain.Job, runAt time.Time, why string) result {
	to := "released"
	if why == "host quarantined" {
		to = "deferred"
	}
	return result{job: job, to: to, why: why,
		st: ports.Settlement{ID: job.ID, Token: job.LeaseToken, State: domain.JobQueued, Attempts: job.Attempts, RunAt: runAt, LastError: job.LastError}}
}

// jobLog is the logger of one job, with the stable keys of STYLE.md.
func (e *Engine) jobLog(job domain.Job) *slog.Logger {
	return e.log.With("job_id", job.ID, "host", job.Host, "attempt", job.Attempts+1)
}

// log is the result's logger, with what it decided.
func (r result) log(e *Engine) *slog.Logger {
	l := e.jobLog(r.job).With("to", r.to)
	if r.outcome != nil {
		l = l.With("outcome", r.outcome.Kind.String(), "status", r.outcome.Status, "took", r.took)
	}
	switch {
	case r.why != "":
		l = l.With("reason", r.why)
	case r.st.State == domain.JobQueued:
		l = l.With("retry_at", r.st.RunAt, "reason", r.st.LastError)
	case r.st.LastError != "":
		l = l.With("reason", r.st.LastError)
	}
	return l
}

// holdFailedHosts holds the hosts of the batch's attempts that failed (a
// host failure: no answer, a timeout, a 5xx) or were asked to wait (a
// Retry-After): the host's other jobs are not attempted now but at the end
// of the hold, the first step of the retry curve or the Retry-After if
// longer, unattempted (their attempts untouched; DeferHost moves the queued
// ones in the store, for every process, and the lease sends back any that
// come due meanwhile). A dead server in a fan-out then costs one attempt
// per job slot it holds, not one per job; the jobs that failed retry on
// their own curve. A host the breaker has quarantined is left to the
// quarantine. It runs before the batch is settled, so that the host's slots
// come back only once its queued jobs have moved.
func (e *Engine) holdFailedHosts(ctx context.Context, batch []result) {
	if e.cfg.Hold < 0 {
		return
	}
	holds := map[string]time.Time{}
	for _, r := range batch {
		o := r.outcome
		if o == nil || !o.HostFailure && o.RetryAfter <= 0 {
			continue
		}
		hold := e.cfg.Hold
		if hold == 0 {
			hold = domain.RetryDelay(1, e.rnd.Float64())
		}
		until := r.at.Add(max(hold, min(o.RetryAfter, domain.MaxRetryAfter)))
		if until.After(holds[r.job.Host]) {
			holds[r.job.Host] = until
		}
	}
	if len(holds) == 0 {
		return
	}
	now := e.clock.Now()
	hosts := make([]string, 0, len(holds))
	e.mu.Lock()
	for h, until := range holds {
		if until.After(now) && !e.breakers.isQuarantined(h, now) && e.breakers.hold(h, until, now) {
			hosts = append(hosts, h)
		}
	}
	e.mu.Unlock()
	slices.Sort(hosts)
	for _, h := range hosts {
		until := holds[h]
		n, err := e.jobs.DeferHost(ctx, h, until)
		if err != nil {
			// The lease still sends this process's late comers back; other
			// processes may attempt the host's jobs before the hold ends.
			e.log.Warn("host's jobs not held in the store", "host", h, "until", until, "err", err)
		} else if e.debug {
			e.log.Debug("host held after a failure", "host", h, "until", until, "jobs_held", n)
		}
		for i := range batch {
			// The batch's own releases of the host wait too.
			if st := &batch[i].st; batch[i].job.Host == h && batch[i].outcome == nil && st.State == domain.JobQueued && st.RunAt.Before(until) {
				st.RunAt = until
			}
		}
	}
}
