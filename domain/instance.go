package domain

import (
	"strings"
	"time"
)

// Circuit breaker policy (SPEC §2).
const (
	// BreakerThreshold consecutive host failures quarantine the host.
	BreakerThreshold = 10
	// FirstQuarantine is the length of the first quarantine; each further
	// one doubles, up to MaxQuarantine.
	FirstQuarantine = time.Hour
	MaxQuarantine   = 7 * 24 * time.Hour
)

// RemoteInstance is the per-host circuit breaker state.
type RemoteInstance struct {
	Host                string
	ConsecutiveFailures int
	// QuarantineLevel counts quarantines since the last success; the n-th
	// lasts FirstQuarantine·2^(n-1), capped at MaxQuarantine.
	QuarantineLevel  int
	QuarantinedUntil time.Time
	LastSuccessAt    time.Time
	LastFailureAt    time.Time
	LastError        string
}

// NewRemoteInstance returns the healthy state of a host never seen before.
func NewRemoteInstance(host string) RemoteInstance {
	return RemoteInstance{Host: strings.ToLower(host)}
}

// Quarantined reports whether the host's jobs must wait at now.
func (r RemoteInstance) Quarantined(now time.Time) bool {
	return now.Before(r.QuarantinedUntil)
}

// QuarantineLength is the length of the level-th quarantine (level >= 1).
func QuarantineLength(level int) time.Duration {
	d := FirstQuarantine
	for i := 1; i < level && d < MaxQuarantine; i++ {
		d *= 2
	}
	return min(d, MaxQuarantine)
}

// RecordFailure counts a host failure and reports whether it started a
// quarantine. A failure while already quarantined (an attempt that was in
// flight when the quarantine began) is counted but does not extend it. The
// count is not reset by a quarantine: once it has reached the threshold, the
// first failure after a quarantine ends starts the next, longer one, so a
// dead host is probed once per quarantine rather than ten times.
func (r *RemoteInstance) RecordFailure(now time.Time, reason string) (quarantined bool) {
	r.ConsecutiveFailures++
	r.LastFailureAt = now.UTC()
	r.LastError = reason
	if r.Quarantined(now) || r.ConsecutiveFailures < BreakerThreshold {
		return false
	}
	r.QuarantineLevel++
	r.QuarantinedUntil = now.UTC().Add(QuarantineLength(r.QuarantineLevel))
	return true
}

// RecordSuccess resets the breaker: the count, the level and any quarantine
// (an in-flight attempt that succeeds proves the host is back).
func (r *RemoteInstance) RecordSuccess(now time.Time) {
	r.ConsecutiveFailures = 0
	r.QuarantineLevel = 0
	r.QuarantinedUntil = time.Time{}
	r.LastSuccessAt = now.UTC()
}

// Lift ends a quarantine by an operator's hand. The failure count restarts
// but the level is kept, so a host that fails again right away is
// quarantined for longer, as it would have been without the lift.
func (r *RemoteInstance) Lift() {
	r.ConsecutiveFailures = 0
	r.QuarantinedUntil = time.Time{}
}

// Healthy reports whether the state is the one of a host never seen failing,
// so callers can skip a write that would change nothing.
func (r RemoteInstance) Healthy() bool {
	return r.ConsecutiveFailures == 0 && r.QuarantineLevel == 0 && r.QuarantinedUntil.IsZero()
}
