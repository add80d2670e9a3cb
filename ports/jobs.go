package ports

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
)

// LeaseRequest asks for the runnable job (queued, RunAt <= Now) with the
// oldest RunAt whose host is not in SkipHosts. Among jobs with the same
// RunAt the order is the store's (enqueue order, or time-ordered ids).
type LeaseRequest struct {
	Owner     string    // who holds the lease (process id), for operators
	Token     string    // the fencing token every later update must present
	Now       time.Time //
	Until     time.Time // lease expiry; the reaper requeues the job after it
	SkipHosts []string  // hosts already at this process's per-host cap
}

// RetryUpdate records a failed attempt that will be tried again.
type RetryUpdate struct {
	Attempts  int
	RunAt     time.Time
	LastError string
}

// ReapResult counts what one reaper pass did.
type ReapResult struct {
	Requeued int // back to queued, one attempt spent
	Dead     int // the reap spent their last attempt
}

// JobStore is the durable queue the delivery engine leases from.
//
// Every update of a leased job is conditional on its lease token and fails
// with domain.ErrLeaseLost, changing nothing, when the token no longer holds
// (the job was reaped, or is held by someone else now). A holder whose lease
// has expired but was not yet reaped still holds it.
type JobStore interface {
	// Enqueue inserts the jobs whose DedupeKey is not yet present and
	// ignores the others; it returns how many were inserted. Large batches
	// are inserted in a few round trips, not one per job. On an id
	// already used by another job nothing of the batch is inserted; if the
	// store fails part way, enqueueing the same batch again completes it
	// without duplicates (the dedupe keys see to that).
	Enqueue(ctx context.Context, jobs []domain.Job) (inserted int, err error)
	// Lease atomically takes the job described by req, or returns
	// domain.ErrNoJob.
	Lease(ctx context.Context, req LeaseRequest) (domain.Job, error)
	// Complete marks a delivered job succeeded, counting the attempt, with
	// FinishedAt = at.
	Complete(ctx context.Context, id, token string, at time.Time) error
	// Retry puts a failed job back in the queue for a later attempt.
	Retry(ctx context.Context, id, token string, u RetryUpdate) error
	// Fail marks a job dead with its reason and FinishedAt = at.
	Fail(ctx context.Context, id, token string, attempts int, reason string, at time.Time) error
	// Release puts a leased job back in the queue at runAt without spending
	// an attempt (its host is quarantined, or the process is shutting down).
	Release(ctx context.Context, id, token string, runAt time.Time) error
	// Reap requeues every job whose lease expired before now, counting the
	// reap as an attempt; a job reaching maxAttempts that way is dead.
	Reap(ctx context.Context, now time.Time, maxAttempts int) (ReapResult, error)
	// Purge deletes succeeded and dead jobs finished before the cutoff.
	Purge(ctx context.Context, finishedBefore time.Time) (int, error)
	// DeferHost moves the host's queued jobs due before until to until,
	// without spending attempts (the host was quarantined).
	DeferHost(ctx context.Context, host string, until time.Time) (int, error)
	// ResumeHost makes the host's queued jobs due in (now, until] due at
	// now (an operator lifted the quarantine that ends at until).
	ResumeHost(ctx context.Context, host string, until, now time.Time) (int, error)
}

// JobFilter selects jobs for operators. Zero fields match everything.
type JobFilter struct {
	State domain.JobState
	Host  string
	// AfterID pages: only jobs with an ID greater than it, in ID order.
	AfterID string
	Limit   int
}

// HostCount is the number of jobs of one host in one state.
type HostCount struct {
	Host  string
	State domain.JobState
	Count int
}

// JobAdmin is what the operator API reads and changes in the queue.
type JobAdmin interface {
	// Counts returns the number of jobs in each state (every state present).
	Counts(ctx context.Context) (map[domain.JobState]int, error)
	// CountsByHost returns per-host counts of the given state, largest
	// first, at most limit rows.
	CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]HostCount, error)
	// Get returns one job or domain.ErrNotFound.
	Get(ctx context.Context, id string) (domain.Job, error)
	// List returns jobs matching f in ID order.
	List(ctx context.Context, f JobFilter) ([]domain.Job, error)
	// RetryDead puts dead jobs (one by id, or all of a host when id is
	// empty) back in the queue at now with their attempts reset. It returns
	// how many moved; a job that is not dead is left alone.
	RetryDead(ctx context.Context, id, host string, now time.Time) (int, error)
}
