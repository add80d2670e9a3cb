package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.JobStore = (*JobStore)(nil)
	_ ports.JobAdmin = (*JobStore)(nil)
)

// NotifyChannel is the LISTEN/NOTIFY channel Enqueue signals and Waker
// listens on.
const NotifyChannel = "herald_jobs"

// enqueueChunk bounds one INSERT of a batch: big enough that a fan-out of
// 10,000 jobs is ten statements (sent in one pipelined round trip), small
// enough that one statement's arrays stay a few megabytes.
const enqueueChunk = 1000

// purgeChunk bounds one DELETE of Purge, so a week of finished jobs is
// removed in short transactions that hold few locks and little WAL each.
const purgeChunk = 5000

// reapReason is the LastError of a job whose lease expired, as the memory
// adapter has it.
const reapReason = "lease expired (worker died or stalled)"

// JobStore is the delivery queue in the jobs table.
type JobStore struct{ pool *pgxpool.Pool }

// NewJobStore returns the queue on pool.
func NewJobStore(pool *pgxpool.Pool) *JobStore { return &JobStore{pool: pool} }

const jobColumns = `id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, attempts,
	run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at`

func scanJob(row pgx.Row) (domain.Job, error) {
	var j domain.Job
	var state string
	var leaseUntil, finishedAt pgtype.Timestamptz
	err := row.Scan(&j.ID, &j.DedupeKey, &j.ActivityID, &j.Inbox, &j.Host, &j.SenderID, &j.KeyID, &j.Payload,
		&state, &j.Attempts, &j.RunAt, &j.LeaseOwner, &j.LeaseToken, &leaseUntil, &j.LastError, &j.CreatedAt, &finishedAt)
	if err != nil {
		return domain.Job{}, err
	}
	j.State = domain.JobState(state)
	j.RunAt = j.RunAt.UTC()
	j.CreatedAt = j.CreatedAt.UTC()
	j.LeaseUntil = fromOpt(leaseUntil)
	j.FinishedAt = fromOpt(finishedAt)
	return j, nil
}

// enqueueSQL inserts one chunk from parallel arrays. WITH ORDINALITY and
// the ORDER BY keep the batch's order in seq, the lease's tie-break. ON
// CONFLICT (dedupe_key) DO NOTHING also skips a repeat of a key inside the
// same chunk. The NOTIFY is evaluated only when a row went in, and is
// delivered at commit, once per transaction whatever the number of chunks
// (PostgreSQL folds equal notifications of one transaction). Its payload is
// the schema, so deployments sharing a database in different schemas do not
// wake each other (the channel is database-wide).
const enqueueSQL = `
WITH inserted AS (
	INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, attempts,
		run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at)
	SELECT id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, attempts,
		run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bytea[],
		$9::text[], $10::int[], $11::timestamptz[], $12::text[], $13::text[], $14::timestamptz[], $15::text[],
		$16::timestamptz[], $17::timestamptz[])
		WITH ORDINALITY AS t(id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, attempts,
			run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at, ord)
	ORDER BY ord
	ON CONFLICT (dedupe_key) DO NOTHING
	RETURNING 1
), counted AS (
	SELECT count(*) AS n FROM inserted
)
SELECT n, CASE WHEN n > 0 THEN (SELECT true FROM pg_notify('` + NotifyChannel + `', COALESCE(current_schema(), ''))) END FROM counted`

// Enqueue implements ports.JobStore. The batch goes in one transaction: its
// chunks are pipelined in one round trip between BEGIN and COMMIT, so a
// fan-out of 10,000 jobs costs three round trips. A job whose id (not dedupe
// key) exists already fails the whole batch with domain.ErrAlreadyExists and
// inserts nothing. A batch aborted as a deadlock is sent again.
func (s *JobStore) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, j := range jobs {
		if j.ID == "" || j.DedupeKey == "" || j.Host == "" || !j.State.Valid() {
			return 0, fmt.Errorf("%w: job %q is not valid; build it with domain.NewJob", domain.ErrInvalidInput, j.ID)
		}
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	// Insert in dedupe-key order: two batches sharing keys (one fan-out
	// enqueued twice at once) then take their key locks in the same order
	// and wait for each other instead of deadlocking. The retry below stays
	// as a net for what ordering cannot cover.
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, func(a, b domain.Job) int { return strings.Compare(a.DedupeKey, b.DedupeKey) })
	var chunks [][]any
	for start := 0; start < len(jobs); start += enqueueChunk {
		chunks = append(chunks, chunkArgs(jobs[start:min(start+enqueueChunk, len(jobs))]))
	}
	var err error
	for attempt := 1; ; attempt++ {
		var inserted int
		inserted, err = s.enqueueOnce(ctx, chunks)
		if err == nil {
			return inserted, nil
		}
		// Two batches holding the same keys in different orders (one
		// fan-out enqueued twice at once) wait on each other's inserts, and
		// PostgreSQL aborts one as a deadlock. Nothing of it was kept, and
		// on a retry the keys the other committed are skipped.
		//
		// The same jobs (same ids) enqueued twice at once race the other
		// way: the second insert passes the dedupe check before the first
		// commits, then meets the first's id in the primary key. On a retry
		// the committed dedupe key is skipped; a real id clash (another
		// job's id) fails again and is reported.
		var pgErr *pgconn.PgError
		if attempt == enqueueAttempts || !errors.As(err, &pgErr) {
			break
		}
		idRace := pgErr.Code == pgerrcode.UniqueViolation && pgErr.ConstraintName == "jobs_pkey"
		if !idRace && !pgerrcode.IsTransactionRollback(pgErr.Code) {
			break
		}
	}
	return 0, fmt.Errorf("enqueue %d jobs: %w", len(jobs), interpretError(err))
}

// enqueueAttempts bounds Enqueue's retries of a deadlocked batch.
const enqueueAttempts = 5

// enqueueOnce sends the chunks in one transaction. The pgx.Batch is built
// afresh each time: a batch that failed keeps statement descriptions the
// connection has since dropped.
func (s *JobStore) enqueueOnce(ctx context.Context, chunks [][]any) (int, error) {
	batch := &pgx.Batch{}
	for _, args := range chunks {
		batch.Queue(enqueueSQL, args...)
	}
	inserted := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		results := tx.SendBatch(ctx, batch)
		for range batch.Len() {
			var n int
			var notified *bool
			if err := results.QueryRow().Scan(&n, &notified); err != nil {
				_ = results.Close()
				return err
			}
			inserted += n
		}
		return results.Close()
	})
	return inserted, err
}

func chunkArgs(jobs []domain.Job) []any {
	n := len(jobs)
	var (
		ids, keys, activities, inboxes, hosts = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		senders, keyIDs, states, owners       = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		tokens, lastErrors                    = make([]string, n), make([]string, n)
		payloads                              = make([][]byte, n)
		attempts                              = make([]int32, n)
		runAts, createdAts                    = make([]time.Time, n), make([]time.Time, n)
		leaseUntils, finishedAts              = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
	)
	for i, j := range jobs {
		ids[i], keys[i], activities[i], inboxes[i], hosts[i] = j.ID, j.DedupeKey, j.ActivityID, j.Inbox, j.Host
		senders[i], keyIDs[i], states[i], owners[i] = j.SenderID, j.KeyID, string(j.State), j.LeaseOwner
		tokens[i], lastErrors[i] = j.LeaseToken, j.LastError
		payloads[i] = j.Payload
		if payloads[i] == nil {
			payloads[i] = []byte{} // NULL would break NOT NULL; empty is what was given
		}
		attempts[i] = int32(j.Attempts)
		runAts[i], createdAts[i] = j.RunAt, j.CreatedAt
		leaseUntils[i], finishedAts[i] = optTime(j.LeaseUntil), optTime(j.FinishedAt)
	}
	return []any{ids, keys, activities, inboxes, hosts, senders, keyIDs, payloads, states, attempts,
		runAts, owners, tokens, leaseUntils, lastErrors, createdAts, finishedAts}
}

// leaseSQL takes the oldest runnable job in one statement. The sub-select
// locks the first queued, due row of a host not skipped, passing over rows
// other leases hold (SKIP LOCKED), so concurrent workers of every process
// take different jobs without waiting on each other; the UPDATE then owns
// it. The outer WHERE repeats state = 'queued' as a guard.
//
// The plan, from EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL 15 with 1,000,000
// jobs (100,000 queued, about half of them due, in groups of 500 sharing one
// run_at as a fan-out makes them; 900,000 finished), ANALYZEd: an InitPlan
// with an Index Scan on jobs_state_run_at_idx (state, run_at, seq), Index
// Cond state = 'queued' AND run_at <= $4, the skipped hosts a Filter, under
// LockRows and Limit 1; then an Index Scan on jobs_pkey for the UPDATE. It
// read 4 index/heap pages and ran in well under a millisecond: the rows come
// in (run_at, seq) order, so LIMIT 1 stops at the first one not locked and
// not skipped, with no sort and no scan of the queue. seq in the index is
// what makes that so: with (state, run_at) alone the planner adds an
// Incremental Sort that read all 500 jobs of the head's run_at (246 pages).
// A partial index on (run_at, seq) WHERE state = 'queued' was preferred by
// the planner when present, at the same cost (3 pages); it is smaller, but
// it would be one more index to write on every state change, so the schema
// keeps the single queue index SPEC §4 names, which also serves Reap (state
// = 'leased') and the admin counts. TestLeasePlanUsesQueueIndex keeps this
// true. The skipped hosts being a filter, a lease passes over the due jobs of
// the hosts this process has at its per-host cap (at most workers/perHost
// hosts) that sit ahead of the first eligible job, never over the rest.
const leaseSQL = `
UPDATE jobs SET state = 'leased', lease_owner = $1, lease_token = $2, lease_until = $3
WHERE state = 'queued' AND id = (
	SELECT id FROM jobs
	WHERE state = 'queued' AND run_at <= $4 AND host <> ALL($5::text[])
	ORDER BY run_at, seq
	LIMIT 1
	FOR UPDATE SKIP LOCKED
)
RETURNING ` + jobColumns

// Lease implements ports.JobStore.
func (s *JobStore) Lease(ctx context.Context, req ports.LeaseRequest) (domain.Job, error) {
	if err := ctx.Err(); err != nil {
		return domain.Job{}, err
	}
	if req.Token == "" {
		return domain.Job{}, fmt.Errorf("%w: lease without a token", domain.ErrInvalidInput)
	}
	skip := req.SkipHosts
	if skip == nil {
		skip = []string{} // <> ALL(NULL) is NULL, which would match nothing
	}
	j, err := scanJob(s.pool.QueryRow(ctx, leaseSQL, req.Owner, req.Token, req.Until, req.Now, skip))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Job{}, domain.ErrNoJob
	}
	if err != nil {
		return domain.Job{}, fmt.Errorf("lease: %w", interpretError(err))
	}
	return j, nil
}

// held runs a fenced update: it changes the job only while token holds its
// lease, and reports domain.ErrLeaseLost, having changed nothing, otherwise.
func (s *JobStore) held(ctx context.Context, what, id, token, set string, args ...any) error {
	if token == "" {
		return fmt.Errorf("%s job %s: %w", what, id, domain.ErrLeaseLost)
	}
	sql := `UPDATE jobs SET ` + set + `, lease_owner = '', lease_token = '', lease_until = NULL
		WHERE id = $1 AND lease_token = $2 AND state = 'leased'`
	tag, err := s.pool.Exec(ctx, sql, append([]any{id, token}, args...)...)
	if err != nil {
		return fmt.Errorf("%s job %s: %w", what, id, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s job %s: %w", what, id, domain.ErrLeaseLost)
	}
	return nil
}

// Complete implements ports.JobStore.
func (s *JobStore) Complete(ctx context.Context, id, token string, at time.Time) error {
	return s.held(ctx, "complete", id, token,
		`state = 'succeeded', attempts = attempts + 1, last_error = '', finished_at = $3`, at)
}

// Retry implements ports.JobStore.
func (s *JobStore) Retry(ctx context.Context, id, token string, u ports.RetryUpdate) error {
	return s.held(ctx, "retry", id, token,
		`state = 'queued', attempts = $3, run_at = $4, last_error = $5`, u.Attempts, u.RunAt, u.LastError)
}

// Fail implements ports.JobStore.
func (s *JobStore) Fail(ctx context.Context, id, token string, attempts int, reason string, at time.Time) error {
	return s.held(ctx, "fail", id, token,
		`state = 'dead', attempts = $3, last_error = $4, finished_at = $5`, attempts, reason, at)
}

// Release implements ports.JobStore.
func (s *JobStore) Release(ctx context.Context, id, token string, runAt time.Time) error {
	return s.held(ctx, "release", id, token, `state = 'queued', run_at = $3`, runAt)
}

// Reap implements ports.JobStore: one UPDATE over the expired leases (the
// state = 'leased' range of jobs_state_run_at_idx: at most the jobs in
// flight). A concurrent fenced update of the same job waits for the row and
// then finds its token gone, or the reaper finds the job no longer leased.
func (s *JobStore) Reap(ctx context.Context, now time.Time, maxAttempts int) (ports.ReapResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.ReapResult{}, err
	}
	const sql = `
WITH reaped AS (
	UPDATE jobs SET
		attempts = attempts + 1,
		last_error = $3,
		state = CASE WHEN attempts + 1 >= $2 THEN 'dead' ELSE 'queued' END,
		run_at = CASE WHEN attempts + 1 >= $2 THEN run_at ELSE $1 END,
		finished_at = CASE WHEN attempts + 1 >= $2 THEN $1::timestamptz END,
		lease_owner = '', lease_token = '', lease_until = NULL
	WHERE state = 'leased' AND lease_until < $1
	RETURNING state
)
SELECT count(*) FILTER (WHERE state = 'queued'), count(*) FILTER (WHERE state = 'dead') FROM reaped`
	var r ports.ReapResult
	if err := s.pool.QueryRow(ctx, sql, now, maxAttempts, reapReason).Scan(&r.Requeued, &r.Dead); err != nil {
		return ports.ReapResult{}, fmt.Errorf("reap: %w", interpretError(err))
	}
	return r, nil
}

// Purge implements ports.JobStore, in chunks of purgeChunk rows, each its
// own short transaction. The outer DELETE repeats the conditions so a job an
// operator revived between the sub-select and the delete is kept.
func (s *JobStore) Purge(ctx context.Context, finishedBefore time.Time) (int, error) {
	const sql = `
DELETE FROM jobs
WHERE id IN (
	SELECT id FROM jobs
	WHERE finished_at < $1 AND state IN ('succeeded', 'dead')
	LIMIT $2
	FOR UPDATE SKIP LOCKED
) AND finished_at < $1 AND state IN ('succeeded', 'dead')`
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		tag, err := s.pool.Exec(ctx, sql, finishedBefore, purgeChunk)
		if err != nil {
			return total, fmt.Errorf("purge: %w", interpretError(err))
		}
		total += int(tag.RowsAffected())
		if tag.RowsAffected() < purgeChunk {
			return total, nil
		}
	}
}

// DeferHost implements ports.JobStore.
func (s *JobStore) DeferHost(ctx context.Context, host string, until time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx,
		`UPDATE jobs SET run_at = $2 WHERE host = $1 AND state = 'queued' AND run_at < $2`, host, until)
	if err != nil {
		return 0, fmt.Errorf("defer host %s: %w", host, interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}

// ResumeHost implements ports.JobStore.
func (s *JobStore) ResumeHost(ctx context.Context, host string, until, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx,
		`UPDATE jobs SET run_at = $3 WHERE host = $1 AND state = 'queued' AND run_at > $3 AND run_at <= $2`,
		host, until, now)
	if err != nil {
		return 0, fmt.Errorf("resume host %s: %w", host, interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}

// Counts implements ports.JobAdmin.
func (s *JobStore) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT state, count(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", interpretError(err))
	}
	out := make(map[domain.JobState]int, len(domain.JobStates()))
	for _, st := range domain.JobStates() {
		out[st] = 0
	}
	var state string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		out[domain.JobState(state)] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", interpretError(err))
	}
	return out, nil
}

// CountsByHost implements ports.JobAdmin.
func (s *JobStore) CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]ports.HostCount, error) {
	rows, err := s.pool.Query(ctx, `
SELECT host, count(*) AS n FROM jobs WHERE state = $1
GROUP BY host ORDER BY n DESC, host LIMIT $2`, string(state), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("count jobs by host: %w", interpretError(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.HostCount, error) {
		hc := ports.HostCount{State: state}
		return hc, row.Scan(&hc.Host, &hc.Count)
	})
	if err != nil {
		return nil, fmt.Errorf("count jobs by host: %w", interpretError(err))
	}
	return out, nil
}

// Get implements ports.JobAdmin.
func (s *JobStore) Get(ctx context.Context, id string) (domain.Job, error) {
	j, err := scanJob(s.pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id))
	if err != nil {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, interpretError(err))
	}
	return j, nil
}

// List implements ports.JobAdmin.
func (s *JobStore) List(ctx context.Context, f ports.JobFilter) ([]domain.Job, error) {
	rows, err := s.pool.Query(ctx, `
SELECT `+jobColumns+` FROM jobs
WHERE ($1 = '' OR state = $1) AND ($2 = '' OR host = $2) AND id > $3
ORDER BY id LIMIT $4`, string(f.State), f.Host, f.AfterID, limitArg(f.Limit))
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", interpretError(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Job, error) { return scanJob(row) })
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", interpretError(err))
	}
	return out, nil
}

// RetryDead implements ports.JobAdmin. As in the memory adapter, the last
// error is kept so the operator still sees why the job had died.
func (s *JobStore) RetryDead(ctx context.Context, id, host string, now time.Time) (int, error) {
	const set = `UPDATE jobs SET state = 'queued', attempts = 0, finished_at = NULL, run_at = $1 `
	var tag pgconn.CommandTag
	var err error
	if id != "" {
		tag, err = s.pool.Exec(ctx, set+`WHERE id = $2 AND state = 'dead' AND ($3 = '' OR host = $3)`, now, id, host)
	} else {
		tag, err = s.pool.Exec(ctx, set+`WHERE host = $2 AND state = 'dead'`, now, host)
	}
	if err != nil {
		return 0, fmt.Errorf("retry dead jobs: %w", interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}
