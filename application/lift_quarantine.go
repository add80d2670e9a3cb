package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// LiftQuarantineHandler ends a host's quarantine by an operator's hand: the
// breaker closes and the host's jobs that were waiting for the quarantine
// to end are due at once.
type LiftQuarantineHandler struct {
	Instances ports.InstanceStore
	Jobs      ports.JobStore
	Clock     ports.Clock
	Waker     Waker
}

// LiftResult says what the lift changed.
type LiftResult struct {
	Instance domain.RemoteInstance
	Resumed  int // jobs made due now
}

// Handle lifts the quarantine of host; domain.ErrNotFound if the host was
// never seen, and no change if it was not quarantined.
func (h LiftQuarantineHandler) Handle(ctx context.Context, host string) (LiftResult, error) {
	host = strings.ToLower(strings.TrimSpace(host))
	cur, err := h.Instances.Get(ctx, host)
	if err != nil {
		return LiftResult{}, err
	}
	now := h.Clock.Now()
	if !cur.Quarantined(now) {
		return LiftResult{Instance: cur}, nil
	}
	until := cur.QuarantinedUntil
	r, err := h.Instances.Update(ctx, host, func(r *domain.RemoteInstance) { r.Lift() })
	if err != nil {
		return LiftResult{}, fmt.Errorf("lift %s: %w", host, err)
	}
	n, err := h.Jobs.ResumeHost(ctx, host, until, now)
	if err != nil {
		return LiftResult{Instance: r}, fmt.Errorf("resume jobs of %s: %w", host, err)
	}
	if n > 0 && h.Waker != nil {
		h.Waker.Wake()
	}
	return LiftResult{Instance: r, Resumed: n}, nil
}
