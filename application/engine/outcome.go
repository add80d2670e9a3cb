package engine

import (
	"log/slog"
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
	// silent says the attempt parked on a host not heard from lately
	// (hostPolicy.silent counts it): the host policy takes it back when
	// the attempt's answer is heard, or, without one, once the completer
	// has recorded it, and so held the host.
	silent bool
}

// answered says the attempt got an answer from its host.
func (r result) answered() bool { return r.outcome != nil && r.outcome.Answered() }

// decided is the result of an attempt, by domain.Decide.
func decided(job domain.Job, o domain.Outcome, d domain.Decision, now time.Time, took time.Duration) result {
	st := ports.Settlement{ID: job.ID, Token: job.LeaseToken, State: d.State, Attempts: d.Attempts, Host: job.Host}
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
func dead(job domain.Job, reason string, now time.Time) result {
	return result{job: job, report: true, to: string(domain.JobDead), at: now,
		st: ports.Settlement{ID: job.ID, Token: job.LeaseToken, State: domain.JobDead, Attempts: job.Attempts, LastError: reason, FinishedAt: now, Host: job.Host}}
}

// release puts a job back at runAt as it was: no attempt spent, its last
// error kept.
func release(job domain.Job, runAt time.Time, why string) result {
	to := "released"
	if why == "host quarantined" {
		to = "deferred"
	}
	return result{job: job, to: to, why: why,
		st: ports.Settlement{ID: job.ID, Token: job.LeaseToken, State: domain.JobQueued, Attempts: job.Attempts, RunAt: runAt, LastError: job.LastError, Host: job.Host}}
}

// jobLog is the logger of one job, with the stable keys of STYLE.md.
func jobLog(log *slog.Logger, job domain.Job) *slog.Logger {
	return log.With("job_id", job.ID, "host", job.Host, "attempt", job.Attempts+1)
}

// logger is the result's logger, with what it decided.
func (r result) logger(log *slog.Logger) *slog.Logger {
	l := jobLog(log, r.job).With("to", r.to)
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
