package ports

import (
	"time"

	"github.com/heraldfed/herald/domain"
)

// EngineObserver hears what the delivery engine does, for metrics. Calls
// are synchronous and on hot paths: implementations only count.
type EngineObserver interface {
	// Leased reports one lease attempt, how long it took, and whether it
	// found a job.
	Leased(took time.Duration, found bool)
	// Delivered reports one finished delivery attempt.
	Delivered(host string, o domain.Outcome, took time.Duration)
	// Settled reports where a job went after an attempt: succeeded,
	// queued (a retry) or dead.
	Settled(state domain.JobState)
	// Reaped reports one reaper pass that found expired leases.
	Reaped(r ReapResult)
	// Quarantined reports that a host's breaker opened.
	Quarantined(host string, until time.Time)
	// InFlight reports the number of deliveries running now.
	InFlight(n int)
}

// NopObserver ignores everything.
type NopObserver struct{}

func (NopObserver) Leased(time.Duration, bool)                      {}
func (NopObserver) Delivered(string, domain.Outcome, time.Duration) {}
func (NopObserver) Settled(domain.JobState)                         {}
func (NopObserver) Reaped(ReapResult)                               {}
func (NopObserver) Quarantined(string, time.Time)                   {}
func (NopObserver) InFlight(int)                                    {}
