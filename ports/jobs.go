package ports

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// LeaseRequest asks for up to Limit runnable jobs (queued, RunAt <= Now),
// oldest RunAt first, none of a host in SkipHosts, and no more of one host
// than keeps that host's leased jobs at or below PerHost. Among jobs with the
// same RunAt the order is the store's (enqueue order, or time-ordered ids).
//
// PerHost is counted over every holder of the store, not per caller: two
// engines in two processes on one database, each asking with PerHost 2,
// never hold more than 2 jobs of one host between them. A job counts from
// its lease until it leaves the leased state (settled, reaped), not until
// its delivery ends, so a batching caller's unflushed results still hold
// their host's slots.
type LeaseRequest struct {
	Owner string    // who holds the lease (process id), for operators
	Token string    // the fencing token of every job of this batch; fresh per call
	Now   time.Time //
	Until time.Time // lease expiry; the reaper requeues the jobs after it
	// Limit is the most jobs one call returns; below 1 it is 1.
	Limit int
	// PerHost caps the leased jobs of one host across every holder; 0 (or
	// less) is no cap for this caller, whose leases still count against
	// the caps of others.
	PerHost int
	// SkipHosts are hosts the caller does not want now (its slots for
	// failing hosts are taken).
	SkipHosts []string
}

// Settlement is where one leased job goes next, fenced by its lease token.
// The store writes the fields as given and ends the lease; the caller
// computes them (the engine, application/engine: from the job as it
// leased it).
type Settlement struct {
	ID    string
	Token string
	// State is succeeded, dead, or queued (a retry, or a release that
	// spends no attempt); never leased.
	State     domain.JobState
	Attempts  int       // the job's attempts from now on
	RunAt     time.Time // when a queued job is due again; ignored otherwise
	LastError string    // kept as given: "" after a success
	// FinishedAt is set for succeeded and dead jobs (retention counts from
	// it) and ignored otherwise.
	FinishedAt time.Time
	// Host is the job's host when the caller has the job (the engine
	// always does); a store that keeps per-host state for queued jobs
	// then need not read it. Empty: the store reads it.
	Host string
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
	//
	// Each distinct activity body is stored once (domain.BodyOf addresses
	// it) and the jobs refer to it; LeaseBatch, Get and List hand jobs out
	// with Payload filled from it and BodyID set. A job enqueued with a
	// BodyID and no Payload refers to a body stored already; if that body
	// is missing, the job comes back with an empty Payload (the engine
	// then kills it, naming the body), never an error.
	Enqueue(ctx context.Context, jobs []domain.Job) (inserted int, err error)
	// LeaseBatch atomically leases the jobs described by req, in one round
	// trip where the store can, and returns them oldest RunAt first, each
	// leased with req.Token and LeaseUntil = req.Until. Jobs other callers
	// are leasing at the same instant are passed over, never waited for
	// nor leased twice. Nothing runnable is an empty result, not an error.
	// A store that leases in several steps and fails part way returns,
	// beside its error, the jobs it had leased by then (leased with
	// req.Token): the caller settles or releases them.
	LeaseBatch(ctx context.Context, req LeaseRequest) ([]domain.Job, error)
	// Settle applies many settlements in one call. lost[i] is
	// domain.ErrLeaseLost (wrapped) when batch[i]'s token no longer holds
	// its job (also for a job named twice: the first ends the lease), and
	// nil when it was applied; lost ones change nothing and fail no other.
	// A non-nil err is the store failing: then the whole batch may be
	// sent again, and a settlement that had been applied after all comes
	// back as lost (its lease ended). A settlement whose State is not
	// succeeded, dead or queued is domain.ErrInvalidInput and nothing of
	// the batch is applied.
	Settle(ctx context.Context, batch []Settlement) (lost []error, err error)
	// Reap requeues every job whose lease expired before now, counting the
	// reap as an attempt; a job reaching maxAttempts that way is dead.
	Reap(ctx context.Context, now time.Time, maxAttempts int) (ReapResult, error)
	// Purge deletes succeeded and dead jobs finished before the cutoff,
	// and each body whose last job it deleted.
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
	// first (ties by host), at most limit rows.
	CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]HostCount, error)
	// CountsOfBody returns the number of jobs in each state (every state
	// present) that send the body bodyID: a fan-out's progress.
	CountsOfBody(ctx context.Context, bodyID string) (map[domain.JobState]int, error)
	// Get returns one job or domain.ErrNotFound.
	Get(ctx context.Context, id string) (domain.Job, error)
	// List returns jobs matching f in ID order.
	List(ctx context.Context, f JobFilter) ([]domain.Job, error)
	// RetryDead puts dead jobs (one by id, or all of a host when id is
	// empty) back in the queue at now with their attempts reset. It returns
	// how many moved; a job that is not dead is left alone.
	RetryDead(ctx context.Context, id, host string, now time.Time) (int, error)
	// EndDomainJobs ends every queued job whose host the domain d covers
	// (domain.DomainCovers) as dead with the reason as its last error and
	// FinishedAt now, in one store operation (one statement, one
	// updateMany): a suspension of a host with 100,000 queued jobs is not
	// 100,000 round trips. Leased jobs are left to their holders (the
	// engine ends a refused host's job without sending it). It returns
	// how many ended.
	EndDomainJobs(ctx context.Context, d, reason string, now time.Time) (int, error)
}

// CheckJobs is the validation in front of every JobStore.Enqueue
// (ports/checked), before it stores anything: each job has an id that is
// a UUID (domain.JobIDBytes), a host, a known state and a dedupe key as
// domain.DedupeKey makes it (the SQL stores keep both as bytes).
func CheckJobs(jobs []domain.Job) error {
	for _, j := range jobs {
		if j.ID == "" || j.DedupeKey == "" || j.Host == "" || !j.State.Valid() {
			return fmt.Errorf("%w: job %q is not valid; build it with domain.NewJob", domain.ErrInvalidInput, j.ID)
		}
		if _, err := domain.JobIDBytes(j.ID); err != nil {
			return err
		}
		if _, err := domain.DedupeKeyBytes(j.DedupeKey); err != nil {
			return fmt.Errorf("job %q: %w", j.ID, err)
		}
	}
	return nil
}

// NoHostCap is the PerHost of a lease without a per-host cap, as
// NormalizeLease gives it: a count of leased jobs no host reaches.
const NoHostCap = 1 << 30

// NormalizeLease is what every JobStore.LeaseBatch does with req before it
// leases: a request without a token is domain.ErrInvalidInput; Limit below
// 1 becomes 1; PerHost 0 (or less), no cap, becomes NoHostCap; SkipHosts
// nil becomes empty.
func NormalizeLease(req LeaseRequest) (LeaseRequest, error) {
	if req.Token == "" {
		return req, fmt.Errorf("%w: lease without a token", domain.ErrInvalidInput)
	}
	req.Limit = max(req.Limit, 1)
	if req.PerHost <= 0 {
		req.PerHost = NoHostCap
	}
	if req.SkipHosts == nil {
		req.SkipHosts = []string{}
	}
	return req, nil
}

// StateCounts is a count of jobs by state with every state present, at
// zero: what JobAdmin.Counts and CountsOfBody fill in.
func StateCounts() map[domain.JobState]int {
	out := make(map[domain.JobState]int, len(domain.JobStates()))
	for _, st := range domain.JobStates() {
		out[st] = 0
	}
	return out
}

// CheckJobFilter is the validation in front of every JobAdmin.List
// (ports/checked): AfterID is empty or a job id (a UUID), so that every
// store pages the same way.
func CheckJobFilter(f JobFilter) error {
	if f.AfterID == "" {
		return nil
	}
	if _, err := domain.JobIDBytes(f.AfterID); err != nil {
		return fmt.Errorf("page after: %w", err)
	}
	return nil
}

// CheckSettlements is the validation in front of every JobStore.Settle
// (ports/checked), before it applies anything: each settlement names a
// job and goes to succeeded, dead or queued.
func CheckSettlements(batch []Settlement) error {
	for _, st := range batch {
		switch {
		case st.ID == "":
			return fmt.Errorf("%w: settlement without a job id", domain.ErrInvalidInput)
		case !domain.ValidJobID(st.ID):
			return fmt.Errorf("%w: settlement of %q, which is not a job id (a UUID)", domain.ErrInvalidInput, st.ID)
		case st.State != domain.JobSucceeded && st.State != domain.JobDead && st.State != domain.JobQueued:
			return fmt.Errorf("%w: job %s cannot be settled to %q", domain.ErrInvalidInput, st.ID, st.State)
		case st.Attempts < 0:
			return fmt.Errorf("%w: job %s settled with %d attempts", domain.ErrInvalidInput, st.ID, st.Attempts)
		}
	}
	return nil
}

// Body is one activity body as a store keeps it: once, under its content
// address.
type Body struct {
	ID   string
	Data []byte
}

// SplitBodies prepares a batch for a store that keeps each body once: it
// returns a copy of jobs with BodyID set from the payload and Payload nil,
// and the batch's distinct bodies in first-seen order. The hash is computed
// once per run of equal payloads (a fan-out's jobs share one slice, which
// bytes.Equal compares by pointer first), not once per job. A job without a
// payload keeps the BodyID it came with: a reference to a stored body.
func SplitBodies(jobs []domain.Job) ([]domain.Job, []Body) {
	out := make([]domain.Job, len(jobs))
	var bodies []Body
	seen := map[string]bool{}
	var last []byte
	lastID := ""
	for i, j := range jobs {
		if len(j.Payload) > 0 {
			if lastID == "" || !bytes.Equal(last, j.Payload) {
				last, lastID = j.Payload, domain.BodyOf(j.Payload)
			}
			j.BodyID = lastID
			if !seen[lastID] {
				seen[lastID] = true
				bodies = append(bodies, Body{ID: lastID, Data: j.Payload})
			}
		}
		j.Payload = nil
		out[i] = j
	}
	return out, bodies
}

// BodyIDs returns the distinct non-empty BodyIDs of jobs.
func BodyIDs(jobs []domain.Job) []string {
	seen := map[string]bool{}
	var ids []string
	for _, j := range jobs {
		if j.BodyID != "" && !seen[j.BodyID] {
			seen[j.BodyID] = true
			ids = append(ids, j.BodyID)
		}
	}
	return ids
}

// FillBodies sets each job's Payload from bodies (by BodyID); a job whose
// body is not there keeps an empty Payload.
func FillBodies(jobs []domain.Job, bodies map[string][]byte) {
	for i := range jobs {
		if b, ok := bodies[jobs[i].BodyID]; ok && jobs[i].BodyID != "" {
			jobs[i].Payload = b
		}
	}
}

// FanOutProgress is one step of a running fan-out: the page up to Cursor
// is enqueued, Queued more jobs were inserted for it.
type FanOutProgress struct {
	ID     string
	Owner  string // the claim this step is made under
	Cursor string
	Queued int       // added to the record's count
	Done   bool      // the last page: the lease ends
	Now    time.Time // UpdatedAt
	Until  time.Time // the lease's new expiry (ignored when Done)
}

// FanOutStore keeps the durable fan-out records (domain.FanOut) that make
// a fan-out to many followers resumable.
type FanOutStore interface {
	// Create stores a new fan-out; domain.ErrAlreadyExists if one with its
	// id exists (the record is left as it is).
	Create(ctx context.Context, f domain.FanOut) error
	// Advance records a step of the fan-out, conditional on p.Owner still
	// holding it: domain.ErrLeaseLost (wrapped) otherwise, and
	// domain.ErrNotFound for an unknown id. Cursor only moves forward (a
	// smaller one is ignored), Queued is added.
	Advance(ctx context.Context, p FanOutProgress) (domain.FanOut, error)
	// Claim atomically takes one unfinished fan-out whose lease expired at
	// or before now, oldest first, setting Owner and LeaseUntil = until;
	// domain.ErrNotFound when there is none. Of concurrent claims of one
	// record exactly one gets it.
	Claim(ctx context.Context, owner string, now, until time.Time) (domain.FanOut, error)
	// Get returns a fan-out or domain.ErrNotFound.
	Get(ctx context.Context, id string) (domain.FanOut, error)
	// List returns the most recent fan-outs, newest CreatedAt first, at
	// most limit, without their Payload.
	List(ctx context.Context, limit int) ([]domain.FanOut, error)
	// Purge deletes the finished fan-outs last updated before the cutoff
	// and returns how many; unfinished ones stay whatever their age.
	Purge(ctx context.Context, updatedBefore time.Time) (int, error)
}
