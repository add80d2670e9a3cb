package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgerrcode"
	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// copyMin is the smallest batch Enqueue first tries by COPY. A fan-out's
// page (a thousand jobs, none stored yet) is the batch it is for: COPY
// skips the INSERT's executor, its arrays and its NOT EXISTS probe of
// every key, and a page of 1,000 new jobs cost the machine 9 µs of CPU a
// job instead of 15 (measured on this machine, 99 pages, three runs each).
// It costs two or three round trips more than enqueueSQL's one, which a
// small batch (an accepted Follow, a reply to a few inboxes) would not win
// back.
const copyMin = 64

// copyColumns are the jobs columns enqueueByCopy writes, in its rows'
// order. freshColumns are the first of them, all a batch of fresh jobs
// (never attempted, leased or finished, each with the dedupe key of its
// activity and inbox, as a fan-out makes them) needs: the others take
// their defaults (0 attempts, NULL), and COPY encodes 8 values a row
// instead of 15 (the publisher's encoding was a third of its CPU).
var (
	copyColumns = []string{"id", "dedupe_key", "activity", "inbox_ref", "host", "state", "run_at", "created_at",
		"dedupe_full", "attempts", "lease_owner", "lease_token", "lease_until", "last_error", "finished_at"}
	freshColumns = copyColumns[:8]
)

// The statements enqueueByCopy sends before its COPY, in one pipelined
// round trip. Each stores what is missing (bodies, then activities, each
// in key order) and then takes a FOR KEY SHARE lock on every row the jobs
// will refer to, in a statement of its own whose snapshot sees the rows
// committed meanwhile. The lock holds until the jobs are committed, so a
// Purge, which locks the rows FOR UPDATE before it asks whether any job is
// left, waits for them; and, being shared, it lets two pages of one
// fan-out be copied at once (the exclusive lock of enqueueSQL's upsert
// made the second wait for the first's commit). A row a Purge deleted
// between the insert and the lock is missing from the lock's result:
// enqueueByCopy then leaves the batch to enqueueSQL, which inserts it
// afresh.
const (
	copyBodiesSQL = `
INSERT INTO bodies (id, body)
SELECT id, body FROM unnest($1::text[], $2::bytea[]) AS t(id, body) ORDER BY id
ON CONFLICT (id) DO NOTHING`
	copyBodiesLockSQL = `
SELECT count(*) FROM (SELECT 1 FROM bodies WHERE id = ANY($1::text[]) ORDER BY id FOR KEY SHARE) b`
	copyActivitiesSQL = `
INSERT INTO job_activities (key, activity_id, sender_id, key_id, body_id)
SELECT key, activity_id, sender_id, key_id, body_id
FROM unnest($1::bytea[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(key, activity_id, sender_id, key_id, body_id)
ORDER BY key
ON CONFLICT (key) DO NOTHING`
	copyActivitiesLockSQL = `
SELECT id, key FROM job_activities WHERE key = ANY($1::bytea[]) ORDER BY key FOR KEY SHARE`
)

// notifySQL is enqueueSQL's NOTIFY, for a transaction that inserts jobs
// by COPY (delivered at its commit, never if it rolls back).
const notifySQL = `SELECT pg_notify('` + NotifyChannel + `', COALESCE(current_schema(), ''))`

// enqueueByCopy inserts jobs (in dedupe-key order, one per key, none
// leased: a leased job takes a host slot, which only enqueueSQL does) in
// one transaction: bodies and activities stored and locked in one
// pipelined round trip (copyBodiesSQL and the rest), then the jobs by
// COPY, then their hosts' ready_at lowered (enqueueReadySQL, a round trip
// of its own: COPY cannot be pipelined with it). COPY has no ON CONFLICT: a job whose dedupe key or id is stored
// already fails it, the transaction rolls back and nothing is kept, and
// copied is false; Enqueue then sends the batch as enqueueSQL, which skips
// stored keys (a fan-out page enqueued again after a crash) and reports
// another job's id. A deadlock or serialization failure (batches sharing
// keys), or a body or activity purged meanwhile, is reported the same
// way: enqueueSQL's retries and upserts handle them.
func (s *JobStore) enqueueByCopy(ctx context.Context, jobs []domain.Job, bodies []ports.Body, hosts []string, runAts []time.Time) (n int, copied bool, err error) {
	acts, actOf := activitiesOf(jobs)
	ids, shorts, fulls := make([][16]byte, len(jobs)), make([][dedupeLen]byte, len(jobs)), make([][]byte, len(jobs))
	fresh := true
	for i, j := range jobs {
		ids[i], _ = jobID(j.ID) // checked by ports.CheckJobs
		shorts[i], fulls[i] = dedupeColumns(j)
		fresh = fresh && fulls[i] == nil && j.Attempts == 0 && j.LeaseOwner == "" && j.LeaseToken == "" && j.LeaseUntil.IsZero() &&
			j.LastError == "" && j.FinishedAt.IsZero()
	}
	keys, activityIDs, senders, keyIDs, bodyIDs := activityArrays(acts)
	batch := &pgx.Batch{}
	if len(bodies) > 0 {
		ids, data := bodyArrays(bodies)
		batch.Queue(copyBodiesSQL, ids, data)
		batch.Queue(copyBodiesLockSQL, ids)
	}
	batch.Queue(copyActivitiesSQL, keys, activityIDs, senders, keyIDs, bodyIDs)
	batch.Queue(copyActivitiesLockSQL, keys)
	batch.Queue(notifySQL)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		results := tx.SendBatch(ctx, batch)
		if len(bodies) > 0 {
			var locked int
			if _, err := results.Exec(); err != nil {
				_ = results.Close()
				return err
			}
			if err := results.QueryRow().Scan(&locked); err != nil {
				_ = results.Close()
				return err
			}
			if locked != len(bodies) {
				_ = results.Close()
				return errPurgedMeanwhile
			}
		}
		if _, err := results.Exec(); err != nil {
			_ = results.Close()
			return err
		}
		rows, err := results.Query()
		if err != nil {
			_ = results.Close()
			return err
		}
		idOf := make(map[string]int64, len(acts))
		for rows.Next() {
			var id int64
			var key []byte
			if err := rows.Scan(&id, &key); err != nil {
				rows.Close()
				_ = results.Close()
				return err
			}
			idOf[string(key)] = id
		}
		if err := rows.Err(); err != nil {
			_ = results.Close()
			return err
		}
		if _, err := results.Exec(); err != nil {
			_ = results.Close()
			return err
		}
		if err := results.Close(); err != nil {
			return err
		}
		actIDs := make([]int64, len(acts))
		for i := range acts {
			id, ok := idOf[string(keys[i])]
			if !ok {
				return errPurgedMeanwhile
			}
			actIDs[i] = id
		}
		columns := copyColumns
		if fresh {
			columns = freshColumns
		}
		row := make([]any, len(columns))
		src := pgx.CopyFromSlice(len(jobs), func(i int) ([]any, error) {
			j := jobs[i]
			row[0], row[1], row[2], row[3] = ids[i], shorts[i], actIDs[actOf[i]], inboxRef(j.Inbox, j.Host)
			row[4], row[5], row[6], row[7] = j.Host, string(j.State), j.RunAt, j.CreatedAt
			if !fresh {
				row[8], row[9], row[10], row[11] = fulls[i], int32(j.Attempts), nullText(j.LeaseOwner), nullText(j.LeaseToken)
				row[12], row[13], row[14] = optTime(j.LeaseUntil), nullText(j.LastError), optTime(j.FinishedAt)
			}
			return row, nil
		})
		copiedRows, err := tx.CopyFrom(ctx, pgx.Identifier{"jobs"}, columns, src)
		n = int(copiedRows)
		if err != nil || len(hosts) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, enqueueReadySQL, hosts, runAts)
		return err
	})
	if err == nil {
		return n, true, nil
	}
	var pgErr *pgconn.PgError
	if errors.Is(err, errPurgedMeanwhile) || errors.As(err, &pgErr) && (pgErr.Code == pgerrcode.UniqueViolation && (pgErr.ConstraintName == "jobs_dedupe_key_key" || pgErr.ConstraintName == "jobs_pkey") ||
		pgerrcode.IsTransactionRollback(pgErr.Code)) {
		return 0, false, nil
	}
	return 0, false, err
}

// errPurgedMeanwhile is enqueueByCopy's word for a body or activity row
// a Purge deleted between its insert and its lock.
var errPurgedMeanwhile = errors.New("a body or activity was purged while the batch was enqueued")

// copyable reports whether Enqueue may try jobs by COPY: a batch of at
// least copyMin jobs, none of them leased.
func (s *JobStore) copyable(jobs []domain.Job) bool {
	if len(jobs) < s.copyMin {
		return false
	}
	for _, j := range jobs {
		if j.State == domain.JobLeased {
			return false
		}
	}
	return true
}

// nullText is s, NULL where it is empty (jobs keeps no ”: migration 019).
func nullText(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }
