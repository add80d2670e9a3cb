package ports

import (
	"time"

	"github.com/heraldfed/herald/domain"
)

// EngineObserver hears what the delivery engine does, for metrics. Calls
// are synchronous and on hot paths: implementations only count.
type EngineObserver interface {
	// Leased reports one lease round trip, how long it took, and how many
	// jobs it leased (0: nothing runnable).
	Leased(took time.Duration, jobs int)
	// Delivered reports one finished delivery attempt.
	Delivered(host string, o domain.Outcome, took time.Duration)
	// Settled reports where a job went after an attempt: succeeded,
	// queued (a retry) or dead.
	Settled(state domain.JobState)
	// Flushed reports one batch of results written to the store, how long
	// it took and how many results it carried.
	Flushed(took time.Duration, results int)
	// Reaped reports one reaper pass that found expired leases.
	Reaped(r ReapResult)
	// Quarantined reports that a host's breaker opened.
	Quarantined(host string, until time.Time)
	// InFlight reports the number of deliveries running now.
	InFlight(n int)
}

// NopObserver ignores everything.
type NopObserver struct{}

func (NopObserver) Leased(time.Duration, int)                       {}
func (NopObserver) Flushed(time.Duration, int)                      {}
func (NopObserver) Delivered(string, domain.Outcome, time.Duration) {}
func (NopObserver) Settled(domain.JobState)                         {}
func (NopObserver) Reaped(ReapResult)                               {}
func (NopObserver) Quarantined(string, time.Time)                   {}
func (NopObserver) InFlight(int)                                    {}

// PolicyObserver hears what the federation policy refused (SPEC §11), for
// metrics. kind says where: "inbox" (a request from the domain), "fetch"
// (a document of it), "delivery" (a job to it), "follow" (following one of
// its actors).
type PolicyObserver interface {
	Refused(kind string)
}
