package domain

import (
	"strconv"
	"time"
)

// Retry policy (SPEC §2).
const (
	// MaxAttempts: a job is dead after its 16th failed attempt.
	MaxAttempts = 16
	// MaxRetryAfter bounds how long a server's Retry-After can hold a job, so
	// a misconfigured "Retry-After: 31536000" does not park it for a year.
	MaxRetryAfter = 24 * time.Hour
)

// RetryDelay is the wait after the n-th failed attempt (n >= 1): n^4 + 15
// seconds plus a jitter uniform in [0, 0.5·n^4) seconds. jitter is a sample
// uniform in [0, 1), injected so tests are exact; values outside are clamped.
func RetryDelay(n int, jitter float64) time.Duration {
	if n < 1 {
		n = 1
	}
	n4 := time.Duration(n) * time.Duration(n) * time.Duration(n) * time.Duration(n) * time.Second
	half := n4 / 2
	j := time.Duration(min(max(jitter, 0), 1) * float64(half))
	if j >= half { // the interval is open at the top
		j = half - 1
	}
	return n4 + 15*time.Second + j
}

// Decision is what happens to a job after an attempt ended.
type Decision struct {
	State    JobState // JobSucceeded, JobQueued (retry) or JobDead
	Attempts int      // attempts including the one that just ended
	RunAt    time.Time
	Reason   string // last error; empty on success
}

// Decide applies the retry rules to the outcome of the attempt that just
// ended. prior is the job's Attempts before it; jitter as for RetryDelay.
func Decide(prior int, o Outcome, now time.Time, jitter float64) Decision {
	n := prior + 1
	switch o.Kind {
	case OutcomeDelivered:
		return Decision{State: JobSucceeded, Attempts: n, RunAt: now}
	case OutcomeFinal:
		return Decision{State: JobDead, Attempts: n, RunAt: now, Reason: o.Reason}
	}
	if n >= MaxAttempts {
		return Decision{State: JobDead, Attempts: n, RunAt: now,
			Reason: "gave up after " + strconv.Itoa(n) + " attempts: " + o.Reason}
	}
	delay := RetryDelay(n, jitter)
	if o.RetryAfter > 0 {
		delay = max(delay, min(o.RetryAfter, MaxRetryAfter))
	}
	return Decision{State: JobQueued, Attempts: n, RunAt: now.Add(delay), Reason: o.Reason}
}
