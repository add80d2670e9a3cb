package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.JobStore = (*JobStore)(nil)
	_ ports.JobAdmin = (*JobStore)(nil)
)

// purgeChunk bounds one DELETE of Purge, so a week of finished jobs is
// removed in short write transactions that leases can come between.
const purgeChunk = 5000

// reapReason is the LastError of a job whose lease expired, as on the other
// stores.
const reapReason = "lease expired (worker died or stalled)"

// JobStore is the delivery queue in the jobs table.
//
// Every write is one statement (or one transaction) on the DB's single
// writer connection, and SQLite runs a statement atomically under its
// database-wide write lock. So the lease, one UPDATE ... RETURNING over the
// oldest due job, cannot hand one job to two workers, in this process or
// any other, and every fenced update is conditional on the lease token in
// the same statement that changes the job.
type JobStore struct{ db *DB }

// NewJobStore returns the queue on db.
func NewJobStore(db *DB) *JobStore { return &JobStore{db: db} }

const jobColumns = `id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, attempts,
	run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at`

func scanJob(row scanner) (domain.Job, error) {
	var j domain.Job
	var state string
	var runAt, leaseUntil, createdAt, finishedAt sql.NullInt64
	err := row.Scan(&j.ID, &j.DedupeKey, &j.ActivityID, &j.Inbox, &j.Host, &j.SenderID, &j.KeyID, &j.Payload,
		&state, &j.Attempts, &runAt, &j.LeaseOwner, &j.LeaseToken, &leaseUntil, &j.LastError, &createdAt, &finishedAt)
	if err != nil {
		return domain.Job{}, err
	}
	j.State = domain.JobState(state)
	j.RunAt, j.LeaseUntil, j.CreatedAt, j.FinishedAt = fromNanos(runAt), fromNanos(leaseUntil), fromNanos(createdAt), fromNanos(finishedAt)
	return j, nil
}

// enqueueSQL inserts one job unless its dedupe key is present. SQLite
// checks the ON CONFLICT target before the other keys, so the same job
// enqueued twice is a no-op, while a new dedupe key with another job's id
// fails on jobs_id_key (domain.ErrAlreadyExists).
const enqueueSQL = `
INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, attempts,
	run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (dedupe_key) DO NOTHING`

// Enqueue implements ports.JobStore: the whole batch in one write
// transaction, one prepared INSERT per job (in process, with no round trip
// to pay, a statement per row is as fast as multi-row VALUES and keeps the
// batch's order in seq, the lease's tie-break). An id clash rolls the whole
// batch back.
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
	inserted := 0
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, enqueueSQL)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, j := range jobs {
			payload := j.Payload
			if payload == nil {
				payload = []byte{} // NULL would break NOT NULL; empty is what was given
			}
			res, err := stmt.ExecContext(ctx, j.ID, j.DedupeKey, j.ActivityID, j.Inbox, j.Host, j.SenderID, j.KeyID, payload,
				string(j.State), j.Attempts, stamp(j.RunAt), j.LeaseOwner, j.LeaseToken, nanos(j.LeaseUntil), j.LastError,
				nanos(j.CreatedAt), nanos(j.FinishedAt))
			if err != nil {
				return fmt.Errorf("job %s: %w", j.ID, err)
			}
			inserted += affected(res)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("enqueue %d jobs: %w", len(jobs), interpretError(err))
	}
	return inserted, nil
}

// leaseSQL takes the oldest runnable job in one statement. The sub-select
// reads jobs_state_run_at_idx from (queued, -inf) in (run_at, seq) order
// (the rowid ends every SQLite index), stops at the first due job whose host
// is not skipped, and the UPDATE leases that row by its rowid; EXPLAIN QUERY
// PLAN shows no sort and no scan of the table (TestLeasePlanUsesQueueIndex).
// The skipped hosts come as one JSON array, so the statement text is the
// same whatever their number. The outer state = 'queued' is a guard.
const leaseSQL = `
UPDATE jobs SET state = 'leased', lease_owner = ?, lease_token = ?, lease_until = ?
WHERE state = 'queued' AND seq = (
	SELECT seq FROM jobs
	WHERE state = 'queued' AND run_at <= ? AND host NOT IN (SELECT value FROM json_each(?))
	ORDER BY run_at, seq
	LIMIT 1
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
		skip = []string{}
	}
	hosts, err := json.Marshal(skip)
	if err != nil {
		return domain.Job{}, fmt.Errorf("lease: %w", err)
	}
	j, err := scanJob(s.db.w.QueryRowContext(ctx, leaseSQL, req.Owner, req.Token, nanos(req.Until), stamp(req.Now), string(hosts)))
	if errors.Is(err, sql.ErrNoRows) {
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
	q := `UPDATE jobs SET ` + set + `, lease_owner = '', lease_token = '', lease_until = NULL
		WHERE id = ? AND lease_token = ? AND state = 'leased'`
	res, err := s.db.w.ExecContext(ctx, q, append(args, id, token)...)
	if err != nil {
		return fmt.Errorf("%s job %s: %w", what, id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("%s job %s: %w", what, id, domain.ErrLeaseLost)
	}
	return nil
}

// Complete implements ports.JobStore.
func (s *JobStore) Complete(ctx context.Context, id, token string, at time.Time) error {
	return s.held(ctx, "complete", id, token,
		`state = 'succeeded', attempts = attempts + 1, last_error = '', finished_at = ?`, nanos(at))
}

// Retry implements ports.JobStore.
func (s *JobStore) Retry(ctx context.Context, id, token string, u ports.RetryUpdate) error {
	return s.held(ctx, "retry", id, token,
		`state = 'queued', attempts = ?, run_at = ?, last_error = ?`, u.Attempts, stamp(u.RunAt), u.LastError)
}

// Fail implements ports.JobStore.
func (s *JobStore) Fail(ctx context.Context, id, token string, attempts int, reason string, at time.Time) error {
	return s.held(ctx, "fail", id, token,
		`state = 'dead', attempts = ?, last_error = ?, finished_at = ?`, attempts, reason, nanos(at))
}

// Release implements ports.JobStore.
func (s *JobStore) Release(ctx context.Context, id, token string, runAt time.Time) error {
	return s.held(ctx, "release", id, token, `state = 'queued', run_at = ?`, stamp(runAt))
}

// Reap implements ports.JobStore: one UPDATE over the expired leases (the
// state = 'leased' range of jobs_state_run_at_idx: at most the jobs in
// flight). A fenced update of the same job runs before or after it, never
// between: it finds its token gone, or the reaper finds the job no longer
// leased.
func (s *JobStore) Reap(ctx context.Context, now time.Time, maxAttempts int) (ports.ReapResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.ReapResult{}, err
	}
	const q = `
UPDATE jobs SET
	attempts = attempts + 1,
	last_error = ?3,
	state = CASE WHEN attempts + 1 >= ?2 THEN 'dead' ELSE 'queued' END,
	run_at = CASE WHEN attempts + 1 >= ?2 THEN run_at ELSE ?1 END,
	finished_at = CASE WHEN attempts + 1 >= ?2 THEN ?1 END,
	lease_owner = '', lease_token = '', lease_until = NULL
WHERE state = 'leased' AND lease_until < ?1
RETURNING state`
	states, err := func() ([]string, error) {
		rows, err := s.db.w.QueryContext(ctx, q, stamp(now), maxAttempts, reapReason)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var st string
			if err := rows.Scan(&st); err != nil {
				return nil, err
			}
			out = append(out, st)
		}
		return out, rows.Err()
	}()
	if err != nil {
		return ports.ReapResult{}, fmt.Errorf("reap: %w", interpretError(err))
	}
	var r ports.ReapResult
	for _, st := range states {
		if st == string(domain.JobDead) {
			r.Dead++
		} else {
			r.Requeued++
		}
	}
	return r, nil
}

// Purge implements ports.JobStore, in chunks of purgeChunk rows, each its
// own statement, so leases are not held up behind one long delete.
func (s *JobStore) Purge(ctx context.Context, finishedBefore time.Time) (int, error) {
	const q = `
DELETE FROM jobs WHERE seq IN (
	SELECT seq FROM jobs
	WHERE finished_at < ?1 AND state IN ('succeeded', 'dead')
	LIMIT ?2
)`
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		res, err := s.db.w.ExecContext(ctx, q, stamp(finishedBefore), purgeChunk)
		if err != nil {
			return total, fmt.Errorf("purge: %w", interpretError(err))
		}
		n := affected(res)
		total += n
		if n < purgeChunk {
			return total, nil
		}
	}
}

// DeferHost implements ports.JobStore.
func (s *JobStore) DeferHost(ctx context.Context, host string, until time.Time) (int, error) {
	res, err := s.db.w.ExecContext(ctx,
		`UPDATE jobs SET run_at = ?2 WHERE host = ?1 AND state = 'queued' AND run_at < ?2`, host, stamp(until))
	if err != nil {
		return 0, fmt.Errorf("defer host %s: %w", host, interpretError(err))
	}
	return affected(res), nil
}

// ResumeHost implements ports.JobStore.
func (s *JobStore) ResumeHost(ctx context.Context, host string, until, now time.Time) (int, error) {
	res, err := s.db.w.ExecContext(ctx,
		`UPDATE jobs SET run_at = ?3 WHERE host = ?1 AND state = 'queued' AND run_at > ?3 AND run_at <= ?2`,
		host, stamp(until), stamp(now))
	if err != nil {
		return 0, fmt.Errorf("resume host %s: %w", host, interpretError(err))
	}
	return affected(res), nil
}

// Counts implements ports.JobAdmin.
func (s *JobStore) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	type count struct {
		state string
		n     int
	}
	rows, err := query(ctx, s.db, func(r scanner) (count, error) {
		var c count
		return c, r.Scan(&c.state, &c.n)
	}, `SELECT state, count(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", interpretError(err))
	}
	out := make(map[domain.JobState]int, len(domain.JobStates()))
	for _, st := range domain.JobStates() {
		out[st] = 0
	}
	for _, c := range rows {
		out[domain.JobState(c.state)] = c.n
	}
	return out, nil
}

// CountsByHost implements ports.JobAdmin.
func (s *JobStore) CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]ports.HostCount, error) {
	out, err := query(ctx, s.db, func(r scanner) (ports.HostCount, error) {
		hc := ports.HostCount{State: state}
		return hc, r.Scan(&hc.Host, &hc.Count)
	}, `SELECT host, count(*) AS n FROM jobs WHERE state = ? GROUP BY host ORDER BY n DESC, host LIMIT ?`,
		string(state), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("count jobs by host: %w", interpretError(err))
	}
	return out, nil
}

// Get implements ports.JobAdmin.
func (s *JobStore) Get(ctx context.Context, id string) (domain.Job, error) {
	j, err := scanJob(s.db.r.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	if err != nil {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, interpretError(err))
	}
	return j, nil
}

// List implements ports.JobAdmin.
func (s *JobStore) List(ctx context.Context, f ports.JobFilter) ([]domain.Job, error) {
	out, err := query(ctx, s.db, scanJob, `
SELECT `+jobColumns+` FROM jobs
WHERE (?1 = '' OR state = ?1) AND (?2 = '' OR host = ?2) AND id > ?3
ORDER BY id LIMIT ?4`, string(f.State), f.Host, f.AfterID, limitArg(f.Limit))
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", interpretError(err))
	}
	return out, nil
}

// RetryDead implements ports.JobAdmin. As on the other stores, the last
// error is kept so the operator still sees why the job had died.
func (s *JobStore) RetryDead(ctx context.Context, id, host string, now time.Time) (int, error) {
	const set = `UPDATE jobs SET state = 'queued', attempts = 0, finished_at = NULL, run_at = ?1 `
	var res sql.Result
	var err error
	if id != "" {
		res, err = s.db.w.ExecContext(ctx, set+`WHERE id = ?2 AND state = 'dead' AND (?3 = '' OR host = ?3)`, stamp(now), id, host)
	} else {
		res, err = s.db.w.ExecContext(ctx, set+`WHERE host = ?2 AND state = 'dead'`, stamp(now), host)
	}
	if err != nil {
		return 0, fmt.Errorf("retry dead jobs: %w", interpretError(err))
	}
	return affected(res), nil
}
