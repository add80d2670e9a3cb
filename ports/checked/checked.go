// Package checked puts in front of a store the validation every store of a
// port owes its callers before the store itself is asked (the ports' Check
// functions): one place, so no adapter repeats it and none can leave part
// of it out. bootstrap wraps every store it opens, and the contract suite
// every store it tests (its invalid-input cases then check this package
// once per store). A store behind it may rely on what it checked: job ids
// that are UUIDs, dedupe keys as domain.DedupeKey makes them, settlements
// to succeeded, dead or queued, normalized domains, complete reports,
// domain blocks, actor blocks, notifications, conversations, OAuth grants
// and tokens that pass their Check, known account statuses, lists within
// ports.MaxAuthors and ports.MaxReactedTo, URIs present where a row is
// keyed by them (stores.go).
//
// What a store does with a valid request stays the store's: the defaults
// of a lease request (ports.NormalizeLease) and counts with every state
// present (ports.StateCounts) are part of each store's answer, which
// tests and benchmarks read from stores they open directly.
package checked

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Jobs is a job store: the queue and its admin view.
type Jobs interface {
	ports.JobStore
	ports.JobAdmin
}

// NewJobs returns s behind the checks (s itself if it is behind them
// already).
func NewJobs(s Jobs) Jobs {
	if c, ok := s.(jobs); ok {
		return c
	}
	return jobs{s}
}

// Unwrap returns the store behind the checks (s itself if it has none).
func Unwrap(s Jobs) Jobs {
	if c, ok := s.(jobs); ok {
		return c.Jobs
	}
	return s
}

type jobs struct{ Jobs }

func (c jobs) Enqueue(ctx context.Context, batch []domain.Job) (int, error) {
	if err := ports.CheckJobs(batch); err != nil {
		return 0, err
	}
	return c.Jobs.Enqueue(ctx, batch)
}

func (c jobs) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	if err := ports.CheckSettlements(batch); err != nil {
		return nil, err
	}
	return c.Jobs.Settle(ctx, batch)
}

func (c jobs) EndDomainJobs(ctx context.Context, d, reason string, now time.Time) (int, error) {
	if err := ports.CheckDomain(d); err != nil {
		return 0, err
	}
	return c.Jobs.EndDomainJobs(ctx, d, reason, now)
}

func (c jobs) List(ctx context.Context, f ports.JobFilter) ([]domain.Job, error) {
	if err := ports.CheckJobFilter(f); err != nil {
		return nil, err
	}
	return c.Jobs.List(ctx, f)
}
