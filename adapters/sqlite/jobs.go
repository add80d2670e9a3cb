package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
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
// oldest due jobs, cannot hand one job to two workers, in this process or
// any other, nor a host more than its cap; and every settlement is
// conditional on the lease token in the same statement that changes the
// job. The per-host counts the cap reads (host_slots) are kept by triggers
// (migration 004) in the statement that moves a job into or out of leased,
// whichever statement that is.
type JobStore struct{ db *DB }

// NewJobStore returns the queue on db.
func NewJobStore(db *DB) *JobStore { return &JobStore{db: db} }

// jobColumns has body_id where the job's payload was: each body is kept
// once in bodies (migration 007) and filled in by fillBodies.
const jobColumns = `id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, attempts,
	run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at`

func scanJob(row scanner) (domain.Job, error) {
	var j domain.Job
	var state string
	var runAt, leaseUntil, createdAt, finishedAt sql.NullInt64
	err := row.Scan(&j.ID, &j.DedupeKey, &j.ActivityID, &j.Inbox, &j.Host, &j.SenderID, &j.KeyID, &j.BodyID,
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
INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, attempts,
	run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (dedupe_key) DO NOTHING`

// bodySQL stores one activity body unless it is stored already. In the
// enqueue's write transaction, under SQLite's one write lock: no purge
// comes between it and the jobs that refer to the body.
const bodySQL = `INSERT INTO bodies (id, body) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`

// Enqueue implements ports.JobStore: the whole batch in one write
// transaction, one prepared INSERT per job (in process, with no round trip
// to pay, a statement per row is as fast as multi-row VALUES and keeps the
// batch's order in seq, the lease's tie-break). An id clash rolls the whole
// batch back. A job enqueued already leased (a restore, a test) takes its
// host slot as a lease would (the insert trigger of migration 004).
func (s *JobStore) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	jobs, bodies := ports.SplitBodies(jobs)
	inserted := 0
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		for _, b := range bodies {
			if _, err := tx.ExecContext(ctx, bodySQL, b.ID, b.Data); err != nil {
				return fmt.Errorf("body %s: %w", b.ID, err)
			}
		}
		stmt, err := tx.PrepareContext(ctx, enqueueSQL)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, j := range jobs {
			res, err := stmt.ExecContext(ctx, j.ID, j.DedupeKey, j.ActivityID, j.Inbox, j.Host, j.SenderID, j.KeyID, j.BodyID,
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

// leaseSQL leases a batch in one statement, the per-host cap included. The
// statement runs under SQLite's one write lock, which it takes before it
// reads: no other write, of this process (one writer connection) or of
// another (an operator's command on the file), comes between what it reads
// and what it writes. So the counts it reads in host_slots are the newest,
// and the cap is exact without the care PostgreSQL needs (there a
// statement's snapshot can be older than a lease committed a moment
// before).
//
// It reads the hosts that are ready, not the queue (issue 36): host_slots
// keeps each host's ready_at, the run_at of its oldest queued job
// (migration 017's triggers), so
//
//   - ready reads host_slots_ready_idx from the oldest ready_at on, passing
//     over skipped hosts (one JSON array, so the statement text is the same
//     whatever their number) and hosts already at their cap, and stops after
//     ?8 hosts (as many as jobs wanted: each has a due job);
//   - for each of them, the oldest ?9 (its cap, at most the batch) of its
//     due jobs, from jobs_host_state_run_at_idx; ranked numbers them within
//     the host's free slots, and the batch is the oldest ?7 of those;
//   - the UPDATE leases them by rowid. The IN list is computed once, before
//     the first row changes, of rows this statement read as queued (so the
//     UPDATE needs no state check of its own: one would make SQLite drive it
//     from the queued range of the state index instead of the rowids), and
//     the triggers of migrations 004 and 017 take each leased job's slot in
//     host_slots, and move its host's ready_at on, as its row changes, in
//     this same statement.
//
// A lease so reads a few host rows and the jobs it may return: the jobs of
// hosts at their cap, or skipped, are never read, and their host rows are
// passed over in the ready index (one per host, at most the hosts in flight
// divided by the cap). EXPLAIN QUERY PLAN shows the ready index searched in
// order, each host's jobs searched in its index, and no scan of jobs
// (TestLeasePlanReadsReadyHosts). RETURNING has no order: LeaseBatch sorts
// by (run_at, seq).
const leaseSQL = `
UPDATE jobs SET state = 'leased', lease_owner = ?1, lease_token = ?2, lease_until = ?3
WHERE seq IN (
	SELECT seq FROM (
		SELECT j.seq, j.run_at,
			row_number() OVER (PARTITION BY j.host ORDER BY j.run_at, j.seq) AS rn,
			ready.free
		FROM (
			SELECT host, ?6 - in_flight AS free FROM host_slots
			WHERE ready_at <= ?4 AND in_flight < ?6 AND host NOT IN (SELECT value FROM json_each(?5))
			ORDER BY ready_at
			LIMIT ?8
		) ready
		JOIN jobs j ON j.seq IN (
			SELECT seq FROM jobs WHERE host = ready.host AND state = 'queued' AND run_at <= ?4
			ORDER BY run_at, seq
			LIMIT ?9
		)
	) ranked
	WHERE rn <= free
	ORDER BY run_at, seq
	LIMIT ?7
)
RETURNING seq, ` + jobColumns

// LeaseBatch implements ports.JobStore in one statement (leaseSQL).
func (s *JobStore) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req, err := ports.NormalizeLease(req)
	if err != nil {
		return nil, err
	}
	hosts, err := json.Marshal(req.SkipHosts)
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	type leased struct {
		job domain.Job
		seq int64
	}
	got, err := func() ([]leased, error) {
		stmt, err := s.db.prepared(ctx, leaseSQL)
		if err != nil {
			return nil, err
		}
		rows, err := stmt.QueryContext(ctx, req.Owner, req.Token, nanos(req.Until), stamp(req.Now), string(hosts),
			req.PerHost, req.Limit, req.Limit, min(req.PerHost, req.Limit))
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []leased
		for rows.Next() {
			var l leased
			var err error
			if l.job, err = scanJob(seqThen{rows, &l.seq}); err != nil {
				return nil, err
			}
			out = append(out, l)
		}
		return out, rows.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("lease: %w", interpretError(err))
	}
	slices.SortFunc(got, func(a, b leased) int {
		return cmp.Or(a.job.RunAt.Compare(b.job.RunAt), cmp.Compare(a.seq, b.seq))
	})
	out := make([]domain.Job, len(got))
	for i, l := range got {
		out[i] = l.job
	}
	if err := s.fillBodies(ctx, out); err != nil {
		return nil, fmt.Errorf("lease: %w", interpretError(err))
	}
	return out, nil
}

// fillBodies reads the jobs' bodies, once each, and sets their payloads.
// A job leased, or listed, keeps its body from being purged, so reading it
// after the job is safe; a body that is missing leaves the payload empty.
func (s *JobStore) fillBodies(ctx context.Context, jobs []domain.Job) error {
	ids := ports.BodyIDs(jobs)
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	bodies := make(map[string][]byte, len(ids))
	rows, err := s.db.r.QueryContext(ctx, `SELECT id, body FROM bodies WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		bodies[id] = b
	}
	if err := rows.Err(); err != nil {
		return err
	}
	ports.FillBodies(jobs, bodies)
	return nil
}

// seqThen scans a row of seq followed by jobColumns.
type seqThen struct {
	row scanner
	seq *int64
}

func (r seqThen) Scan(dest ...any) error { return r.row.Scan(append([]any{r.seq}, dest...)...) }

// settleSQL applies one settlement, fenced by its token: the job changes
// only while that token holds its lease. The triggers of migration 004 give
// the job's host slot back in the same statement.
const settleSQL = `
UPDATE jobs SET state = ?1, attempts = ?2,
	run_at = CASE WHEN ?1 = 'queued' THEN ?3 ELSE run_at END,
	last_error = ?4,
	finished_at = CASE WHEN ?1 = 'queued' THEN NULL ELSE ?5 END,
	lease_owner = '', lease_token = '', lease_until = NULL
WHERE id = ?6 AND lease_token = ?7 AND state = 'leased'`

// Settle implements ports.JobStore: the whole batch in one write
// transaction (BEGIN IMMEDIATE, one fsync at commit), one prepared UPDATE
// per settlement (in process there is no round trip to save). A settlement
// that changes no row lost its lease; a job named twice is settled by the
// first, which ends the lease, and the second finds it no longer leased. A
// failure rolls the whole batch back, so sending it again is safe.
func (s *JobStore) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	applied := make([]bool, len(batch))
	prep, err := s.db.prepared(ctx, settleSQL)
	if err != nil {
		return nil, fmt.Errorf("settle %d jobs: %w", len(batch), interpretError(err))
	}
	err = s.db.inTx(ctx, func(tx *sql.Tx) error {
		stmt := tx.StmtContext(ctx, prep)
		defer stmt.Close()
		for i, st := range batch {
			if st.Token == "" {
				continue
			}
			res, err := stmt.ExecContext(ctx, string(st.State), st.Attempts, stamp(st.RunAt), st.LastError, nanos(st.FinishedAt),
				st.ID, st.Token)
			if err != nil {
				return fmt.Errorf("job %s: %w", st.ID, err)
			}
			applied[i] = affected(res) == 1
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("settle %d jobs: %w", len(batch), interpretError(err))
	}
	lost := make([]error, len(batch))
	for i, st := range batch {
		if !applied[i] {
			lost[i] = fmt.Errorf("settle job %s: %w", st.ID, domain.ErrLeaseLost)
		}
	}
	return lost, nil
}

// Reap implements ports.JobStore: one UPDATE over the expired leases (the
// state = 'leased' range of jobs_state_run_at_idx: at most the jobs in
// flight), their host slots given back by the triggers in the same
// statement. A settlement of the same job runs before or after it, never
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
// own short transaction, so leases are not held up behind one long delete.
// Each chunk deletes, in its transaction, the bodies its jobs were the last
// to refer to (jobs_body_id_idx answers "any job left?").
func (s *JobStore) Purge(ctx context.Context, finishedBefore time.Time) (int, error) {
	const q = `
DELETE FROM jobs WHERE seq IN (
	SELECT seq FROM jobs
	WHERE finished_at < ?1 AND state IN ('succeeded', 'dead')
	LIMIT ?2
)
RETURNING body_id`
	const orphans = `
DELETE FROM bodies WHERE id IN (SELECT value FROM json_each(?1))
	AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.body_id = bodies.id)`
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n := 0
		err := s.db.inTx(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, q, stamp(finishedBefore), purgeChunk)
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			var ids []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					_ = rows.Close()
					return err
				}
				n++
				if id != "" && !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			if err := rows.Close(); err != nil {
				return err
			}
			if len(ids) == 0 {
				return nil
			}
			list, err := json.Marshal(ids)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, orphans, string(list))
			return err
		})
		if err != nil {
			return total, fmt.Errorf("purge: %w", interpretError(err))
		}
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

// countsSQL and countsByHostSQL read job_counts (migration 019): the
// states' totals, and a state's hosts, largest first (?1 the state, ?2 the
// limit).
const (
	countsSQL       = `SELECT state, sum(n) FROM job_counts GROUP BY state`
	countsByHostSQL = `SELECT host, n FROM job_counts WHERE state = ?1 AND n > 0 ORDER BY n DESC, host LIMIT ?2`
)

// Counts implements ports.JobAdmin from job_counts (migration 019), kept
// by triggers in the statements that change jobs: it reads a row per state
// and host, not the jobs, whose finished ones stay for the retention
// period (issue 36: counted from jobs, the operator's queue view took
// seconds at a busy instance's load).
func (s *JobStore) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	return s.countStates(ctx, "count jobs", countsSQL)
}

// CountsOfBody implements ports.JobAdmin, through jobs_body_id_idx.
func (s *JobStore) CountsOfBody(ctx context.Context, bodyID string) (map[domain.JobState]int, error) {
	return s.countStates(ctx, "count jobs of body", `SELECT state, count(*) FROM jobs WHERE body_id = ? AND body_id <> '' GROUP BY state`, bodyID)
}

// countStates runs a query of (state, count) rows into a count of every
// state.
func (s *JobStore) countStates(ctx context.Context, what, q string, args ...any) (map[domain.JobState]int, error) {
	type count struct {
		state string
		n     int
	}
	rows, err := query(ctx, s.db, func(r scanner) (count, error) {
		var c count
		return c, r.Scan(&c.state, &c.n)
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err))
	}
	out := ports.StateCounts()
	for _, c := range rows {
		out[domain.JobState(c.state)] = c.n
	}
	return out, nil
}

// CountsByHost implements ports.JobAdmin from job_counts: the state's
// range of its primary key, a row per host.
func (s *JobStore) CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]ports.HostCount, error) {
	out, err := query(ctx, s.db, func(r scanner) (ports.HostCount, error) {
		hc := ports.HostCount{State: state}
		return hc, r.Scan(&hc.Host, &hc.Count)
	}, countsByHostSQL,
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
	one := []domain.Job{j}
	if err := s.fillBodies(ctx, one); err != nil {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, interpretError(err))
	}
	return one[0], nil
}

// List implements ports.JobAdmin.
func (s *JobStore) List(ctx context.Context, f ports.JobFilter) ([]domain.Job, error) {
	out, err := query(ctx, s.db, scanJob, `
SELECT `+jobColumns+` FROM jobs
WHERE (?1 = '' OR state = ?1) AND (?2 = '' OR host = ?2) AND id > ?3
ORDER BY id LIMIT ?4`, string(f.State), f.Host, f.AfterID, limitArg(f.Limit))
	if err == nil {
		err = s.fillBodies(ctx, out)
	}
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", interpretError(err))
	}
	return out, nil
}

// endDomainJobsSQL ends the queued jobs of the hosts domain ?1 covers.
const endDomainJobsSQL = `
UPDATE jobs SET state = 'dead', last_error = ?2, finished_at = ?3
WHERE state = 'queued' AND herald_domain_covers(?1, host)`

// EndDomainJobs implements ports.JobAdmin in one UPDATE over the queued
// range of jobs_state_run_at_idx, each host tested by herald_domain_covers,
// domain.DomainCovers itself (registerFunctions). The jobs it ends were
// queued, not leased, so host_slots' triggers (migration 004) have
// nothing to give back, and a lease that took one of them first is left
// alone: the UPDATE runs under the one write lock, after or before the
// lease, never between its read and its write.
func (s *JobStore) EndDomainJobs(ctx context.Context, d, reason string, now time.Time) (int, error) {
	res, err := s.db.w.ExecContext(ctx, endDomainJobsSQL, d, reason, stamp(now))
	if err != nil {
		return 0, fmt.Errorf("end the jobs of %s: %w", d, interpretError(err))
	}
	return affected(res), nil
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
