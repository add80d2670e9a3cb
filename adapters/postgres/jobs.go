package postgres

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
type JobStore struct {
	pool    *pgxpool.Pool
	bodies  *bodyCache // the bodies leases read lately
	copyMin int        // the smallest batch Enqueue tries by COPY (enqueueByCopy)
}

// NewJobStore returns the queue on pool.
func NewJobStore(pool *pgxpool.Pool) *JobStore {
	return &JobStore{pool: pool, bodies: newBodyCache(), copyMin: copyMin}
}

// jobColumns are a job's own columns. What all the jobs of a fan-out
// share (activity id, sender, key id, body id) is kept once in
// job_activities (migration 015), which jobs.activity names; each body is
// kept once in bodies (migration 009) and filled in by fillBodies.
const jobColumns = `id, dedupe_key, dedupe_full, inbox_ref, host, state, attempts, run_at, lease_owner, lease_token, lease_until,
	last_error, created_at, finished_at`

// activityColumns are the shared columns, read from job_activities as a,
// LEFT JOINed on a.id = j.activity: a job whose row is missing reads empty
// fields and so no body, which the engine settles as dead with that reason
// (a job is never dropped from a read).
const activityColumns = `COALESCE(a.activity_id, ''), COALESCE(a.sender_id, ''), COALESCE(a.key_id, ''), COALESCE(a.body_id, '')`

// jobSelect reads a whole job from jobsJoined: the columns scanJob scans.
var jobSelect = qualified("j", jobColumns) + ", " + activityColumns

// jobsJoined is jobs as j with its shared columns as a.
const jobsJoined = `jobs j LEFT JOIN job_activities a ON a.id = j.activity`

// qualified prefixes each of a comma-separated column list with alias.
func qualified(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// scanJob reads jobSelect's columns, then any extra columns into extra.
func scanJob(row pgx.Row, extra ...any) (domain.Job, error) {
	var j domain.Job
	var state string
	var key [dedupeLen]byte
	var full []byte
	var leaseUntil, finishedAt pgtype.Timestamptz
	var leaseOwner, leaseToken, lastError pgtype.Text // NULL for '' (migration 019)
	err := row.Scan(append([]any{&j.ID, &key, &full, &j.Inbox, &j.Host, &state, &j.Attempts, &j.RunAt, &leaseOwner, &leaseToken,
		&leaseUntil, &lastError, &j.CreatedAt, &finishedAt, &j.ActivityID, &j.SenderID, &j.KeyID, &j.BodyID}, extra...)...)
	if err != nil {
		return domain.Job{}, err
	}
	j.LeaseOwner, j.LeaseToken, j.LastError = leaseOwner.String, leaseToken.String, lastError.String
	j.Inbox = inboxOf(j.Inbox, j.Host)
	j.DedupeKey = dedupeKeyOf(key[:], full, j.ActivityID, j.Inbox)
	j.State = domain.JobState(state)
	j.RunAt = j.RunAt.UTC()
	j.CreatedAt = j.CreatedAt.UTC()
	j.LeaseUntil = fromOpt(leaseUntil)
	j.FinishedAt = fromOpt(finishedAt)
	return j, nil
}

// dedupeLen is how many bytes of a dedupe key jobs.dedupe_key keeps
// (migration 016), as a uuid since migration 018 (a bytea of 16 took 17
// bytes in the row and 32 in the unique index, a uuid 16 and 24): a prefix
// of a SHA-256 is as evenly spread as the whole, and 16 bytes make a
// collision among ten billion keys a 1e-19 chance.
const dedupeLen = 16

// dedupeColumns are what jobs keeps of a job's dedupe key: its first
// dedupeLen bytes, and the whole 32 only where the key is not
// DedupeKey(activity id, inbox), which a read derives again.
func dedupeColumns(j domain.Job) (short [dedupeLen]byte, full []byte) {
	given, _ := domain.DedupeKeyBytes(j.DedupeKey) // checked by ports.CheckJobs
	copy(short[:], given)
	if derived := domain.DedupeSum(j.ActivityID, j.Inbox); bytes.Equal(given, derived[:]) {
		return short, nil
	}
	return short, given
}

// jobID is a job id as jobs.id keeps it (a uuid, migration 018): its 16
// bytes, which pgx sends in binary, cheaper than the text. ok is false
// for a string that is not a job id, which no job has.
func jobID(id string) (b [16]byte, ok bool) {
	b, err := domain.JobIDBytes(id)
	return b, err == nil
}

// inboxRef is a job's inbox as jobs.inbox_ref keeps it (migration 017):
// its path alone where it is https://HOST/..., HOST the job's host, which
// the row holds already; the whole URL otherwise. A path starts with "/",
// a URL never does, so inboxOf tells them apart.
func inboxRef(inbox, host string) string {
	if rest, ok := strings.CutPrefix(inbox, "https://"); ok {
		if path, ok := strings.CutPrefix(rest, host); ok && strings.HasPrefix(path, "/") {
			return path
		}
	}
	return inbox
}

// inboxOf is the inbox inboxRef kept as ref, as herald_inbox computes it in
// SQL.
func inboxOf(ref, host string) string {
	if strings.HasPrefix(ref, "/") {
		return "https://" + host + ref
	}
	return ref
}

// dedupeKeyOf is the dedupe key of a job read back: the one kept whole, or
// the one derived from its activity id and inbox. Should neither be (the
// job's job_activities row is missing, which the engine settles as dead),
// the kept bytes are all that is known.
func dedupeKeyOf(short, full []byte, activityID, inbox string) string {
	if full != nil {
		return hex.EncodeToString(full)
	}
	if derived := domain.DedupeSum(activityID, inbox); bytes.Equal(short, derived[:len(short)]) {
		return hex.EncodeToString(derived[:])
	}
	return hex.EncodeToString(short)
}

// enqueueSQL inserts one chunk from parallel arrays: first the chunk's
// distinct activities ($1-$5, usually one: a fan-out's), then its jobs
// ($6-$20), each naming its activity by position ($8). An activity stored
// already is updated to itself, as bodySQL does a body and for the same
// reason: the row stays locked (in key order) until the jobs that refer to
// it are committed, so a Purge deciding whether any job is left waits for
// them; one a purge deleted meanwhile is inserted afresh under a new id.
// WITH ORDINALITY and the ORDER BY insert the batch in its order, which
// is the order its jobs of one run_at lease in (jobs_queue_idx lists them
// in the rows' physical order).
//
// A job whose dedupe key is stored already is skipped by a NOT EXISTS probe
// of jobs_dedupe_key_key, not by ON CONFLICT DO NOTHING: the speculative
// insertion ON CONFLICT needs cost a third more server time per row
// (measured on this machine: 100,000 rows in 1.74 s instead of 1.18 s),
// and a fan-out inserts a row per follower. The probe reads the
// statement's snapshot, so a key another transaction is inserting at the
// same moment (one fan-out enqueued twice at once) meets its entry and
// fails the batch with a unique violation; Enqueue then sends the batch
// again as enqueueConflictSQL, which waits for that transaction and skips
// the key. Enqueue keeps one job per key in a batch, so a batch never
// collides with itself.
//
// The NOTIFY is evaluated only when a row went in, and is
// delivered at commit, once per transaction whatever the number of chunks
// (PostgreSQL folds equal notifications of one transaction). A job enqueued
// already leased (a restore, a test) takes its host slot in the same
// statement, as a lease would. Its payload is
// the schema, so deployments sharing a database in different schemas do not
// wake each other (the channel is database-wide).
var enqueueSQL = enqueueInsert + `
	WHERE NOT EXISTS (SELECT 1 FROM jobs d WHERE d.dedupe_key = t.dedupe_key)
	ORDER BY t.ord` + enqueueTail

// enqueueConflictSQL is enqueueSQL with ON CONFLICT (dedupe_key) DO
// NOTHING: the retry of a batch that raced another's keys.
var enqueueConflictSQL = enqueueInsert + `
	ORDER BY t.ord
	ON CONFLICT (dedupe_key) DO NOTHING` + enqueueTail

// enqueueInsert is enqueueSQL up to the insert's row filter.
const enqueueInsert = `
WITH a AS (
	SELECT * FROM unnest($1::bytea[], $2::text[], $3::text[], $4::text[], $5::text[])
		WITH ORDINALITY AS t(key, activity_id, sender_id, key_id, body_id, n)
), acts AS (
	INSERT INTO job_activities AS x (key, activity_id, sender_id, key_id, body_id)
	SELECT key, activity_id, sender_id, key_id, body_id FROM a ORDER BY key
	ON CONFLICT (key) DO UPDATE SET key = x.key
	RETURNING x.id, x.key
), inserted AS (
	INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, attempts,
		run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at, dedupe_full)
	SELECT t.id, t.dedupe_key, acts.id, t.inbox, t.host, t.state, t.attempts,
		t.run_at, NULLIF(t.lease_owner, ''), NULLIF(t.lease_token, ''), t.lease_until, NULLIF(t.last_error, ''), t.created_at, t.finished_at,
		t.dedupe_full
	FROM unnest($6::uuid[], $7::uuid[], $8::bigint[], $9::text[], $10::text[], $11::text[], $12::int[],
		$13::timestamptz[], $14::text[], $15::text[], $16::timestamptz[], $17::text[], $18::timestamptz[], $19::timestamptz[],
		$20::bytea[])
		WITH ORDINALITY AS t(id, dedupe_key, n, inbox, host, state, attempts,
			run_at, lease_owner, lease_token, lease_until, last_error, created_at, finished_at, dedupe_full, ord)
	JOIN a ON a.n = t.n
	JOIN acts ON acts.key = a.key`

// enqueueTail is enqueueSQL from the insert's RETURNING on.
const enqueueTail = `
	RETURNING state, host
), slots AS (
	INSERT INTO host_slots AS h (host, in_flight)
	SELECT host, count(*) FROM inserted WHERE state = 'leased' GROUP BY host ORDER BY host
	ON CONFLICT (host) DO UPDATE SET in_flight = h.in_flight + EXCLUDED.in_flight
	RETURNING 1
), counted AS (
	SELECT count(*) AS n FROM inserted
)
SELECT n, CASE WHEN n > 0 THEN (SELECT true FROM pg_notify('` + NotifyChannel + `', COALESCE(current_schema(), ''))) END FROM counted`

// bodySQL stores the batch's bodies, once each, before its jobs, in the
// same transaction. A body stored already is locked, not written: ON
// CONFLICT DO UPDATE locks the row it meets even where its WHERE is false
// and so updates nothing (updating the body to itself left a dead copy of
// it per chunk: 1.5 MB of them after a fan-out to a million). The lock
// (taken in id order, so two fan-outs never deadlock on it) holds until
// the jobs that refer to the body are committed, and
// Purge, which locks a body before it asks whether any job is left, waits
// for them. A body a purge deleted while this waited is inserted afresh
// (ON CONFLICT sees the deletion once the purge commits).
const bodySQL = `
INSERT INTO bodies AS b (id, body)
SELECT id, body FROM unnest($1::text[], $2::bytea[]) AS t(id, body) ORDER BY id
ON CONFLICT (id) DO UPDATE SET body = b.body WHERE false`

// Enqueue implements ports.JobStore. The batch goes in one transaction: its
// chunks are pipelined in one round trip between BEGIN and COMMIT, so a
// fan-out of 10,000 jobs costs three round trips. A job whose id (not dedupe
// key) exists already fails the whole batch with domain.ErrAlreadyExists and
// inserts nothing. A batch aborted as a deadlock is sent again.
func (s *JobStore) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	// Insert in dedupe-key order: two batches sharing keys (one fan-out
	// enqueued twice at once) then take their key locks in the same order
	// and wait for each other instead of deadlocking. The retry below stays
	// as a net for what ordering cannot cover. Of jobs sharing a key, the
	// first given is kept, as every store keeps it (enqueueSQL's probe
	// cannot see a key of its own statement).
	jobs, bodies := ports.SplitBodies(jobs)
	jobs = byDedupeKey(jobs)
	hosts, runAts := readyOf(jobs)
	if s.copyable(jobs) {
		n, copied, err := s.enqueueByCopy(ctx, jobs, bodies, hosts, runAts)
		if err != nil {
			return 0, fmt.Errorf("enqueue %d jobs: %w", len(jobs), interpretError(err))
		}
		if copied {
			return n, nil
		}
		// A stored key or id, or a deadlock: nothing was kept, and the
		// INSERT below skips the stored keys and retries the deadlock.
	}
	var chunks [][]any
	for start := 0; start < len(jobs); start += enqueueChunk {
		chunks = append(chunks, chunkArgs(jobs[start:min(start+enqueueChunk, len(jobs))]))
	}
	var err error
	insert := enqueueSQL
	for attempt := 1; ; attempt++ {
		var inserted int
		inserted, err = s.enqueueOnce(ctx, insert, bodies, chunks, hosts, runAts)
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
		// A key another batch inserted after this one's snapshot (see
		// enqueueSQL): the retry waits for it and skips it.
		if pgErr.Code == pgerrcode.UniqueViolation && pgErr.ConstraintName == "jobs_dedupe_key_key" {
			insert = enqueueConflictSQL
			continue
		}
		idRace := pgErr.Code == pgerrcode.UniqueViolation && pgErr.ConstraintName == "jobs_pkey"
		if !idRace && !pgerrcode.IsTransactionRollback(pgErr.Code) {
			break
		}
	}
	return 0, fmt.Errorf("enqueue %d jobs: %w", len(jobs), interpretError(err))
}

// byDedupeKey returns jobs in dedupe-key order, the first given of each
// key only. It sorts their indexes, not the jobs: a stable sort of the
// jobs themselves moved their 240-byte structs some n·log²n times, 1.3 of
// the publisher's 11.7 s of CPU in a million-follower fan-out.
func byDedupeKey(jobs []domain.Job) []domain.Job {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(jobs[a].DedupeKey, jobs[b].DedupeKey), cmp.Compare(a, b))
	})
	out := make([]domain.Job, 0, len(jobs))
	for k, i := range order {
		if k > 0 && jobs[i].DedupeKey == jobs[order[k-1]].DedupeKey {
			continue
		}
		out = append(out, jobs[i])
	}
	return out
}

// enqueueAttempts bounds Enqueue's retries of a deadlocked batch.
const enqueueAttempts = 5

// enqueueOnce sends the chunks in one transaction, then lowers the
// ready_at of the batch's hosts (enqueueReadySQL). The pgx.Batch is built
// afresh each time: a batch that failed keeps statement descriptions the
// connection has since dropped.
func (s *JobStore) enqueueOnce(ctx context.Context, insert string, bodies []ports.Body, chunks [][]any, hosts []string, runAts []time.Time) (int, error) {
	batch := &pgx.Batch{}
	if len(bodies) > 0 {
		ids, data := bodyArrays(bodies)
		batch.Queue(bodySQL, ids, data)
	}
	for _, args := range chunks {
		batch.Queue(insert, args...)
	}
	if len(hosts) > 0 {
		batch.Queue(enqueueReadySQL, hosts, runAts)
	}
	inserted := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		results := tx.SendBatch(ctx, batch)
		if len(bodies) > 0 {
			if _, err := results.Exec(); err != nil {
				_ = results.Close()
				return err
			}
		}
		for range len(chunks) {
			var n int
			var notified *bool
			if err := results.QueryRow().Scan(&n, &notified); err != nil {
				_ = results.Close()
				return err
			}
			inserted += n
		}
		if len(hosts) > 0 {
			if _, err := results.Exec(); err != nil {
				_ = results.Close()
				return err
			}
		}
		return results.Close()
	})
	return inserted, err
}

// chunkArgs is enqueueSQL's arguments for one chunk: its distinct
// activities, then its jobs, each with its activity's position (from 1).
// The jobs' ids and dedupe keys were checked by ports.CheckJobs.
func chunkArgs(jobs []domain.Job) []any {
	n := len(jobs)
	var (
		inboxes, hosts, states, owners = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		tokens, lastErrors             = make([]string, n), make([]string, n)
		ids, dedupe                    = make([][16]byte, n), make([][dedupeLen]byte, n)
		dedupeFull                     = make([][]byte, n)
		acts                           = make([]int64, n)
		attempts                       = make([]int32, n)
		runAts, createdAts             = make([]time.Time, n), make([]time.Time, n)
		leaseUntils, finishedAts       = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
	)
	distinct, actOf := activitiesOf(jobs)
	actKeys, activities, senders, keyIDs, bodyIDs := activityArrays(distinct)
	for i, j := range jobs {
		pos := int64(actOf[i] + 1)
		dedupe[i], dedupeFull[i] = dedupeColumns(j)
		ids[i], _ = jobID(j.ID) // checked by ports.CheckJobs
		acts[i], inboxes[i], hosts[i] = pos, inboxRef(j.Inbox, j.Host), j.Host
		states[i], owners[i], tokens[i], lastErrors[i] = string(j.State), j.LeaseOwner, j.LeaseToken, j.LastError
		attempts[i] = int32(j.Attempts)
		runAts[i], createdAts[i] = j.RunAt, j.CreatedAt
		leaseUntils[i], finishedAts[i] = optTime(j.LeaseUntil), optTime(j.FinishedAt)
	}
	return []any{actKeys, activities, senders, keyIDs, bodyIDs,
		ids, dedupe, acts, inboxes, hosts, states, attempts, runAts, owners, tokens, leaseUntils, lastErrors, createdAts, finishedAts, dedupeFull}
}

// activity is what the jobs of one fan-out share: a job_activities row.
type activity struct {
	activityID, senderID, keyID, bodyID string
}

// activityArrays are acts as parallel arrays, the parameters of the
// statements that store them: their keys, activity ids, senders, key ids
// and body ids.
func activityArrays(acts []activity) (keys [][]byte, activityIDs, senders, keyIDs, bodyIDs []string) {
	n := len(acts)
	keys, activityIDs, senders, keyIDs, bodyIDs = make([][]byte, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, a := range acts {
		keys[i] = a.key()
		activityIDs[i], senders[i], keyIDs[i], bodyIDs[i] = a.activityID, a.senderID, a.keyID, a.bodyID
	}
	return keys, activityIDs, senders, keyIDs, bodyIDs
}

// bodyArrays are bodies as parallel arrays of ids and bytes.
func bodyArrays(bodies []ports.Body) (ids []string, data [][]byte) {
	ids, data = make([]string, len(bodies)), make([][]byte, len(bodies))
	for i, b := range bodies {
		ids[i], data[i] = b.ID, b.Data
	}
	return ids, data
}

// activitiesOf returns the distinct activities of jobs in first-seen
// order, and for each job the index of its own among them.
func activitiesOf(jobs []domain.Job) ([]activity, []int) {
	var distinct []activity
	actOf := make([]int, len(jobs))
	index := make(map[activity]int, 1)
	for i, j := range jobs {
		a := activity{j.ActivityID, j.SenderID, j.KeyID, j.BodyID}
		k, ok := index[a]
		if !ok {
			k = len(distinct)
			distinct = append(distinct, a)
			index[a] = k
		}
		actOf[i] = k
	}
	return distinct, actOf
}

// key is the row's unique key: the SHA-256 of the four fields, each after
// its length in bytes and a colon, as migration 015 computes it in SQL.
func (a activity) key() []byte {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s%d:%s%d:%s%d:%s",
		len(a.activityID), a.activityID, len(a.senderID), a.senderID, len(a.keyID), a.keyID, len(a.bodyID), a.bodyID))
	return sum[:]
}

// The lease reads the hosts that are ready, not the queue: host_slots
// (migration 005) keeps, beside each host's count of leased jobs, ready_at
// (migration 026), a lower bound of its queued jobs' run_at, NULL when it
// has none. A lease is two statements, in one transaction (leaseFunc):
//
//   - readySQL locks the ready hosts: ready_at due, below the cap, not
//     skipped, oldest ready_at first, $8 of them (the batch and a few more,
//     leaseHosts), passing over the rows other transactions hold (SKIP
//     LOCKED). Concurrent leases so take different hosts and never wait for
//     each other, nor for a settlement. Held, a host's in_flight is its
//     newest count (a locking read sees the newest version of a row), and
//     no other lease can take its jobs until this one commits: what the
//     lease grants is exact across every process.
//   - leaseSQL, planned and run after those locks (a statement of its own,
//     with a snapshot taken after them), leases from each host at most its
//     free slots of its oldest due jobs (jobs_queued_host_idx, host by
//     host), the oldest $7 of all of them, and in the same statement sets
//     each read host's in_flight and ready_at: its oldest queued job left
//     (an upsert of rows it holds, so that the write goes through the
//     primary key whatever the plan's estimates).
//
// So a lease reads the jobs it returns and a few host rows, whatever the
// backlog: the jobs of hosts at their cap, or skipped, are never read, and
// their host rows are passed over in the ready index (one per host, at most
// the hosts in flight divided by the cap). Every statement that makes a job
// queued or due earlier lowers its host's ready_at under the host's row lock
// in its own transaction (enqueueReadySQL, slotsBack, RetryDead,
// ResumeHost): before a lease takes the lock, so that the lease's snapshot
// sees the job, or after it commits, lowering what it wrote. A deferral or a
// suspension leaves ready_at early, which the next lease to read the host
// corrects. The slots taken are exactly the jobs leased, and every
// transition out of leased gives them back in its own statement (settleSQL,
// reapSQL, enqueueSQL for jobs enqueued leased).
//
// The plans TestLeasePlanReadsReadyHosts keeps: host_slots_ready_idx for
// the hosts, jobs_queued_host_idx for their jobs, no scan of the queue.
const (
	readyColumns = `SELECT array_agg(host), array_agg(free)`
	readyFrom    = `
FROM (
	SELECT host, $6 - in_flight AS free FROM host_slots
	WHERE ready_at <= $4 AND in_flight < $6 AND host <> ALL($5::text[])
	ORDER BY ready_at
	LIMIT $8
	FOR UPDATE SKIP LOCKED
) r`
)

// leaseSQL is the lease's second statement (see readyFrom): _hosts and
// _free are the hosts readySQL locked and their free slots.
var leaseSQL = `
WITH ready AS (
	SELECT host, free FROM unnest(_hosts::text[], _free::integer[]) AS r(host, free)
), cand AS MATERIALIZED (
	SELECT c.id, c.run_at, c.pos FROM ready CROSS JOIN LATERAL (
		SELECT id, run_at, ctid AS pos FROM jobs
		WHERE jobs.host = ready.host AND state = 'queued' AND run_at <= $4
		ORDER BY run_at
		LIMIT LEAST(ready.free, $7)
		FOR UPDATE SKIP LOCKED
	) c
), picked AS MATERIALIZED (
	SELECT id, row_number() OVER (ORDER BY run_at, pos) AS ord FROM cand
	ORDER BY run_at, pos
	LIMIT $7
), leased AS (
	UPDATE jobs j SET state = 'leased', lease_owner = NULLIF($1, ''), lease_token = $2, lease_until = $3
	FROM picked
	WHERE j.id = picked.id
	RETURNING ` + qualified("j", jobColumns) + `, j.activity, picked.ord
), next AS (
	SELECT ready.host,
		(SELECT count(*) FROM leased WHERE leased.host = ready.host)::integer AS n,
		(SELECT q.run_at FROM jobs q
			WHERE q.host = ready.host AND q.state = 'queued' AND NOT EXISTS (SELECT 1 FROM leased WHERE leased.id = q.id)
			ORDER BY q.run_at LIMIT 1) AS ready_at
	FROM ready
), slots AS (
	INSERT INTO host_slots AS h (host, in_flight, ready_at)
	SELECT host, n, ready_at FROM next ORDER BY host
	ON CONFLICT (host) DO UPDATE SET in_flight = h.in_flight + EXCLUDED.in_flight, ready_at = EXCLUDED.ready_at
	WHERE EXCLUDED.in_flight > 0 OR h.ready_at IS DISTINCT FROM EXCLUDED.ready_at
	RETURNING 1
)
SELECT ` + qualified("leased", jobColumns) + `, ` + activityColumns + `, leased.ord
FROM leased LEFT JOIN job_activities a ON a.id = leased.activity`

// leaseFunc runs the lease as a PL/pgSQL function: one round trip for its
// two statements, each with one generic plan per connection. Sent as
// prepared statements, they were planned afresh at every call: PostgreSQL's
// plan cache compares the generic plan's estimate with the custom plans'
// and, with the limits and run_at unknown, keeps choosing custom ones. That
// planning was a third of a lease's time; the function's SET clause makes
// the plans generic, planned once per connection. Each statement of a
// VOLATILE function takes its own snapshot (READ COMMITTED), which the
// lease needs (see readyFrom). EnsureIndexes creates it (the version in
// the name lets processes of two versions each call their own during a
// rolling upgrade); LeaseBatch runs the statements itself, in a
// transaction, where it is missing.
const leaseFunc = "herald_lease_v8"

// leaseFuncDDL creates leaseFunc in the current schema. Its parameters are
// the lease's ($1 owner, $2 token, $3 until, $4 now, $5 skipped hosts, $6
// cap, $7 limit, $8 hosts to read); its columns are leaseSQL's.
var leaseFuncDDL = `CREATE OR REPLACE FUNCTION ` + leaseFunc + `(text, text, timestamptz, timestamptz, text[], integer, integer, integer)
RETURNS TABLE (r_id uuid, r_dedupe_key uuid, r_dedupe_full bytea, r_inbox_ref text, r_host text, r_state text, r_attempts integer,
	r_run_at timestamptz, r_lease_owner text, r_lease_token text, r_lease_until timestamptz, r_last_error text,
	r_created_at timestamptz, r_finished_at timestamptz, r_activity_id text, r_sender_id text, r_key_id text,
	r_body_id text, r_ord bigint)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $lease$` + leaseFuncBody + `$lease$`

// leaseFuncBody is leaseFunc's source, as pg_proc.prosrc keeps it.
var leaseFuncBody = `
#variable_conflict use_column
DECLARE
	_hosts text[];
	_free integer[];
BEGIN
	` + readyColumns + ` INTO _hosts, _free` + readyFrom + `;
	IF _hosts IS NULL THEN
		RETURN;
	END IF;
	RETURN QUERY ` + leaseSQL + `;
END
`

// The lease's statements as LeaseBatch sends them where leaseFunc is
// missing: the function's parameters and variables numbered for each.
var (
	readyPlainSQL = strings.NewReplacer("$4", "$1", "$5", "$2", "$6", "$3", "$8", "$4").Replace(readyColumns + readyFrom)
	leasePlainSQL = strings.NewReplacer("$7", "$5", "_hosts", "$6", "_free", "$7").Replace(leaseSQL)
)

// slotsBack is the tail of every statement that moves jobs out of leased:
// CTEs that give their host slots back, and lower the host's ready_at to
// the jobs it put back in the queue, the rows locked in host order as
// everywhere. moved is the CTE whose rows (with host, state and run_at
// columns) left the leased state.
func slotsBack(moved string) string {
	return `freed AS (
	SELECT host, count(*)::int AS n, min(run_at) FILTER (WHERE state = 'queued') AS ready FROM ` + moved + ` GROUP BY host
), locked AS MATERIALIZED (
	SELECT h.host, freed.n, freed.ready FROM host_slots h JOIN freed ON freed.host = h.host
	ORDER BY h.host
	FOR UPDATE OF h
), given AS (
	UPDATE host_slots h SET in_flight = h.in_flight - locked.n, ready_at = LEAST(h.ready_at, locked.ready)
	FROM locked WHERE h.host = locked.host
	RETURNING 1
)`
}

// enqueueReadySQL lowers the ready_at of the hosts of an enqueued batch to
// their oldest queued job ($1 hosts, $2 run_ats), the last statement of the
// enqueue's transaction: the rows are locked in host order, held only
// until the commit, and a row that needs no change is locked all the same
// (ON CONFLICT DO UPDATE locks the row it meets even where its WHERE is
// false), so that a lease reading the host waits for the jobs or skips
// the host.
const enqueueReadySQL = `
INSERT INTO host_slots AS h (host, ready_at)
SELECT host, ready FROM unnest($1::text[], $2::timestamptz[]) AS t(host, ready) ORDER BY host
ON CONFLICT (host) DO UPDATE SET ready_at = EXCLUDED.ready_at
WHERE h.ready_at IS NULL OR h.ready_at > EXCLUDED.ready_at`

// readyOf is enqueueReadySQL's arguments for jobs: each host of a queued
// job once, with its oldest run_at. A job the enqueue skipped (its key
// stored) lowers its host's ready_at all the same: early is what a
// deferral leaves too, and the next lease corrects it.
func readyOf(jobs []domain.Job) (hosts []string, runAts []time.Time) {
	oldest := map[string]time.Time{}
	for _, j := range jobs {
		if j.State != domain.JobQueued {
			continue
		}
		if t, ok := oldest[j.Host]; !ok || j.RunAt.Before(t) {
			oldest[j.Host] = j.RunAt
		}
	}
	hosts = make([]string, 0, len(oldest))
	for h := range oldest {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	runAts = make([]time.Time, len(hosts))
	for i, h := range hosts {
		runAts[i] = oldest[h]
	}
	return hosts, runAts
}

// leaseHosts is how many ready hosts a lease of limit jobs reads and
// locks: one per job it may take, and a few more for hosts whose ready_at
// a deferral or a suspension left early (they give nothing, once).
func leaseHosts(limit int) int { return limit + 4 }

// LeaseBatch implements ports.JobStore in one round trip (leaseFunc).
func (s *JobStore) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req, err := ports.NormalizeLease(req)
	if err != nil {
		return nil, err
	}
	args := []any{req.Owner, req.Token, req.Until, req.Now, req.SkipHosts, req.PerHost, req.Limit, leaseHosts(req.Limit)}
	got, err := s.lease(ctx, s.pool, `SELECT * FROM `+leaseFunc+`($1, $2, $3, $4, $5, $6, $7, $8)`, args...)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedFunction {
		// A schema EnsureIndexes has not seen: the same statements, planned
		// at every call. Nothing was leased by the failed call.
		got, err = s.leasePlain(ctx, args)
	}
	if err != nil {
		return nil, fmt.Errorf("lease: %w", interpretError(err))
	}
	// RETURNING has no order: put the batch back in queue order.
	slices.SortFunc(got, func(a, b leasedRow) int { return cmp.Compare(a.ord, b.ord) })
	out := make([]domain.Job, len(got))
	for i, l := range got {
		out[i] = l.job
	}
	if err := s.leaseBodies(ctx, out); err != nil {
		return nil, fmt.Errorf("lease: %w", interpretError(err))
	}
	return out, nil
}

// leasePlain runs the lease's two statements in a transaction, as
// leaseFunc does; args are leaseFunc's.
func (s *JobStore) leasePlain(ctx context.Context, args []any) ([]leasedRow, error) {
	var got []leasedRow
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var hosts []string
		var free []int32
		if err := tx.QueryRow(ctx, readyPlainSQL, args[3], args[4], args[5], args[7]).Scan(&hosts, &free); err != nil {
			return err
		}
		if len(hosts) == 0 {
			return nil
		}
		var err error
		got, err = s.lease(ctx, tx, leasePlainSQL, args[0], args[1], args[2], args[3], args[6], hosts, free)
		return err
	})
	return got, err
}

// leaseBodies fills a leased batch's payloads, reading from the store only
// the bodies the cache does not hold: the batches of one fan-out share one
// body, which would otherwise cost a statement (and a commit) per lease.
func (s *JobStore) leaseBodies(ctx context.Context, jobs []domain.Job) error {
	missing := s.bodies.fill(jobs)
	if len(missing) == 0 {
		return nil
	}
	read := make([]domain.Job, len(missing))
	for i, j := range missing {
		read[i] = *j
	}
	if err := s.fillBodies(ctx, read); err != nil {
		return err
	}
	for i, j := range missing {
		j.Payload = read[i].Payload
		if len(j.Payload) > 0 {
			s.bodies.put(j.BodyID, j.Payload)
		}
	}
	return nil
}

// fillBodies reads the jobs' bodies, once each (a fan-out's batch has
// one), and sets their payloads. A job that is leased or listed keeps its
// body from being purged; a body that is missing leaves the payload empty.
func (s *JobStore) fillBodies(ctx context.Context, jobs []domain.Job) error {
	ids := ports.BodyIDs(jobs)
	if len(ids) == 0 {
		return nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, body FROM bodies WHERE id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	bodies := make(map[string][]byte, len(ids))
	var id string
	var body []byte
	if _, err := pgx.ForEachRow(rows, []any{&id, &body}, func() error {
		bodies[id] = slices.Clone(body)
		return nil
	}); err != nil {
		return err
	}
	ports.FillBodies(jobs, bodies)
	return nil
}

// leasedRow is one row of leaseSQL: the job and its place in the queue
// order.
type leasedRow struct {
	job domain.Job
	ord int64
}

// lease runs leaseFunc (or leaseSQL) on q and reads its rows.
func (s *JobStore) lease(ctx context.Context, q querier, sql string, args ...any) ([]leasedRow, error) {
	return query(ctx, q, func(row pgx.Row) (leasedRow, error) {
		var l leasedRow
		var err error
		l.job, err = scanJob(row, &l.ord)
		return l, err
	}, sql, args...)
}

// settleSQL applies a batch of settlements in one statement. matched locks
// the jobs still held by their settlement's token, in id order (so two
// batches, or a batch and the reaper, overlapping on jobs wait for each
// other instead of deadlocking), and re-checks the token on the newest
// version of each row after any wait: a job reaped meanwhile drops out.
// held keeps, of a job named twice with its token, the first settlement
// (the first ends the lease; the second is lost). done writes them; the host
// slots of the settled jobs are given back in host order, in this same
// statement, so host_slots never drifts from the leased rows.
var settleSQL = `
WITH s AS (
	SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::text[], $8::timestamptz[])
		AS t(ord, id, token, state, attempts, run_at, last_error, finished_at)
), matched AS MATERIALIZED (
	SELECT j.id, j.host, s.ord FROM jobs j JOIN s ON s.id = j.id
	WHERE j.state = 'leased' AND j.lease_token = s.token AND s.token <> ''
	ORDER BY j.id
	FOR UPDATE OF j
), held AS (
	SELECT DISTINCT ON (id) id, host, ord FROM matched ORDER BY id, ord
), done AS (
	UPDATE jobs j SET state = s.state, attempts = s.attempts,
		run_at = CASE WHEN s.state = 'queued' THEN s.run_at ELSE j.run_at END,
		last_error = NULLIF(s.last_error, ''),
		finished_at = CASE WHEN s.state = 'queued' THEN NULL ELSE s.finished_at END,
		lease_owner = NULL, lease_token = NULL, lease_until = NULL
	FROM held JOIN s ON s.ord = held.ord
	WHERE j.id = held.id AND j.state = 'leased' AND j.lease_token = s.token
	RETURNING held.ord, j.host, j.state, j.run_at
), ` + slotsBack("done") + `
SELECT ord FROM done`

// Settle implements ports.JobStore in one statement (settleSQL). A batch
// that met another's locks in a cycle all the same (PostgreSQL aborts one
// as a deadlock) changed nothing and is sent again.
func (s *JobStore) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := len(batch)
	var (
		ords, attempts             = make([]int32, n), make([]int32, n)
		ids                        = make([][16]byte, n)
		tokens, states, lastErrors = make([]string, n), make([]string, n), make([]string, n)
		runAts, finishedAts        = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
	)
	for i, st := range batch {
		ids[i], _ = jobID(st.ID) // checked by ports.CheckSettlements
		ords[i], tokens[i], states[i] = int32(i), st.Token, string(st.State)
		attempts[i], runAts[i], lastErrors[i], finishedAts[i] = int32(st.Attempts), optTime(st.RunAt), st.LastError, optTime(st.FinishedAt)
	}
	var applied []int32
	var err error
	for attempt := 1; attempt <= settleAttempts; attempt++ {
		var rows pgx.Rows
		rows, err = s.pool.Query(ctx, settleSQL, ords, ids, tokens, states, attempts, runAts, lastErrors, finishedAts)
		if err == nil {
			applied, err = pgx.CollectRows(rows, pgx.RowTo[int32])
		}
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || !pgerrcode.IsTransactionRollback(pgErr.Code) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("settle %d jobs: %w", n, interpretError(err))
	}
	lost := make([]error, n)
	ok := make([]bool, n)
	for _, i := range applied {
		ok[i] = true
	}
	for i, st := range batch {
		if !ok[i] {
			lost[i] = fmt.Errorf("settle job %s: %w", st.ID, domain.ErrLeaseLost)
		}
	}
	return lost, nil
}

// settleAttempts bounds Settle's retries of a batch aborted as a deadlock.
const settleAttempts = 3

// reapSQL requeues (or, at the last attempt, kills) every job whose lease
// expired, and gives their host slots back in the same statement. The
// expired rows are locked in id order and re-checked on their newest
// version, as settleSQL does: a settlement that got there first wins, and
// the reaper passes over the job. The same order means a reap and a
// settlement overlapping on jobs never deadlock, and the host slots are
// taken in host order as everywhere else.
var reapSQL = `
WITH expired AS MATERIALIZED (
	SELECT id FROM jobs WHERE state = 'leased' AND lease_until < $1
	ORDER BY id
	FOR UPDATE
), reaped AS (
	UPDATE jobs SET
		attempts = attempts + 1,
		last_error = NULLIF($3, ''),
		state = CASE WHEN attempts + 1 >= $2 THEN 'dead' ELSE 'queued' END,
		run_at = CASE WHEN attempts + 1 >= $2 THEN run_at ELSE $1 END,
		finished_at = CASE WHEN attempts + 1 >= $2 THEN $1::timestamptz END,
		lease_owner = NULL, lease_token = NULL, lease_until = NULL
	FROM expired
	WHERE jobs.id = expired.id AND jobs.state = 'leased' AND jobs.lease_until < $1
	RETURNING jobs.state, jobs.host, jobs.run_at
), ` + slotsBack("reaped") + `
SELECT count(*) FILTER (WHERE state = 'queued'), count(*) FILTER (WHERE state = 'dead') FROM reaped`

// Reap implements ports.JobStore in one statement (reapSQL) over the
// expired range of jobs_lease_until_idx: at most the jobs in flight. Each
// pass then folds job_counts (foldCountsSQL), so the counts' readings sum
// the deltas of about one reaper period.
func (s *JobStore) Reap(ctx context.Context, now time.Time, maxAttempts int) (ports.ReapResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.ReapResult{}, err
	}
	var r ports.ReapResult
	if err := s.pool.QueryRow(ctx, reapSQL, now, maxAttempts, reapReason).Scan(&r.Requeued, &r.Dead); err != nil {
		return ports.ReapResult{}, fmt.Errorf("reap: %w", interpretError(err))
	}
	if _, err := s.pool.Exec(ctx, foldCountsSQL); err != nil {
		return r, fmt.Errorf("fold the job counts: %w", interpretError(err))
	}
	return r, nil
}

// purgeSQL deletes one chunk of finished jobs, read from jobs_finished_idx.
const purgeSQL = `
DELETE FROM jobs
WHERE id IN (
	SELECT id FROM jobs
	WHERE finished_at < $1 AND state IN ('succeeded', 'dead')
	LIMIT $2
	FOR UPDATE SKIP LOCKED
) AND finished_at < $1 AND state IN ('succeeded', 'dead')`

// Purge implements ports.JobStore, in chunks of purgeChunk rows, each its
// own short transaction. The outer DELETE repeats the conditions so a job an
// operator revived between the sub-select and the delete is kept. Each
// chunk deletes, in its transaction, the job_activities rows its jobs were
// the last to refer to, and the bodies those rows were the last to refer
// to (purgeChunk).
func (s *JobStore) Purge(ctx context.Context, finishedBefore time.Time) (int, error) {
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var n int
		var err error
		for attempt := 1; attempt <= settleAttempts; attempt++ {
			n, err = s.purgeChunk(ctx, finishedBefore)
			var pgErr *pgconn.PgError
			if err == nil || !errors.As(err, &pgErr) || !pgerrcode.IsTransactionRollback(pgErr.Code) {
				break
			}
		}
		if err != nil {
			return total, fmt.Errorf("purge: %w", interpretError(err))
		}
		total += n
		if n < purgeChunk {
			return total, nil
		}
	}
}

// purgeChunk deletes up to purgeChunk finished jobs, then what they were
// the last to refer to, in one transaction. It locks the bodies of their
// activities, then the activities, in the order an enqueue takes them
// (bodySQL, then enqueueSQL), so it waits for an enqueue adding jobs to
// them instead of deadlocking with it; then deletes the activities no job
// refers to (jobs_activity_idx) and the bodies no activity refers to
// (job_activities_body_id_idx), each in a statement whose snapshot is taken
// after the locks, so it sees that enqueue's rows. Sent again when it
// deadlocks all the same (an enqueue re-using a dedupe key this chunk
// deletes): nothing of it was kept.
func (s *JobStore) purgeChunk(ctx context.Context, finishedBefore time.Time) (int, error) {
	const jobsSQL = `WITH gone AS (` + purgeSQL + `
	RETURNING activity
)
SELECT count(*), COALESCE(array_agg(DISTINCT activity), '{}') FROM gone`
	const lockSQL = `
WITH b AS (
	SELECT 1 FROM bodies WHERE id IN (SELECT body_id FROM job_activities WHERE id = ANY($1)) ORDER BY id FOR UPDATE
)
SELECT count(*) FROM b`
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var acts []int64
		if err := tx.QueryRow(ctx, jobsSQL, finishedBefore, purgeChunk).Scan(&n, &acts); err != nil {
			return err
		}
		if len(acts) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, lockSQL, acts); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM job_activities WHERE id = ANY($1) ORDER BY key FOR UPDATE`, acts); err != nil {
			return err
		}
		var bodies []string
		if err := tx.QueryRow(ctx, `
WITH gone AS (
	DELETE FROM job_activities a WHERE a.id = ANY($1) AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.activity = a.id)
	RETURNING body_id
)
SELECT COALESCE(array_agg(DISTINCT body_id) FILTER (WHERE body_id <> ''), '{}') FROM gone`, acts).Scan(&bodies); err != nil {
			return err
		}
		if len(bodies) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `
DELETE FROM bodies b WHERE b.id = ANY($1) AND NOT EXISTS (SELECT 1 FROM job_activities a WHERE a.body_id = b.id)`, bodies)
		return err
	})
	return n, err
}

// deferHostSQL and resumeHostSQL move a host's queued jobs, read from
// jobs_queued_host_idx. A deferral leaves the host's ready_at early, as a
// lower bound may be (the next lease to read the host corrects it); a
// resume makes jobs due earlier and so lowers it (lowerReady).
var (
	deferHostSQL  = `UPDATE jobs SET run_at = $2 WHERE host = $1 AND state = 'queued' AND run_at < $2`
	resumeHostSQL = `
WITH moved AS (
	UPDATE jobs SET run_at = $3 WHERE host = $1 AND state = 'queued' AND run_at > $3 AND run_at <= $2
	RETURNING host, run_at
), ` + lowerReady("moved") + `
SELECT count(*) FROM moved`
)

// lowerReady is the tail of a statement that makes jobs queued, or due
// earlier, other than an enqueue or a settlement: a CTE that lowers their
// hosts' ready_at to them, the rows locked in host order (see readyFrom).
// moved is the CTE of those jobs, with host and run_at columns.
func lowerReady(moved string) string {
	return `ready AS (
	INSERT INTO host_slots AS h (host, ready_at)
	SELECT host, min(run_at) FROM ` + moved + ` GROUP BY host ORDER BY host
	ON CONFLICT (host) DO UPDATE SET ready_at = EXCLUDED.ready_at
	WHERE h.ready_at IS NULL OR h.ready_at > EXCLUDED.ready_at
	RETURNING 1
)`
}

// DeferHost implements ports.JobStore.
func (s *JobStore) DeferHost(ctx context.Context, host string, until time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, deferHostSQL, host, until)
	if err != nil {
		return 0, fmt.Errorf("defer host %s: %w", host, interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}

// ResumeHost implements ports.JobStore.
func (s *JobStore) ResumeHost(ctx context.Context, host string, until, now time.Time) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, resumeHostSQL, host, until, now).Scan(&n); err != nil {
		return 0, fmt.Errorf("resume host %s: %w", host, interpretError(err))
	}
	return n, nil
}

// The readings of job_counts (migration 028): signed deltas by state and
// host that statement triggers add with every write to jobs, summed here
// in one snapshot, so they equal the jobs of that snapshot. They read rows
// per host and reaper period, never jobs.
const (
	countsSQL       = `SELECT state, sum(n)::bigint FROM job_counts GROUP BY state`
	countsByHostSQL = `
SELECT host, sum(n)::bigint AS c FROM job_counts WHERE state = $1
GROUP BY host HAVING sum(n) > 0 ORDER BY c DESC, host LIMIT $2`
)

// foldCountsSQL folds job_counts' deltas into one row per (state, host)
// with a count, dropping the zeros. Writers only insert, so it waits for
// none of them, and one they add meanwhile is outside its snapshot and
// stays. A fold running beside another (two processes' reapers) waits at
// the first row the other deleted, then skips the rows it deleted and
// whose sums it wrote: each delta is summed once.
const foldCountsSQL = `
WITH gone AS (DELETE FROM job_counts RETURNING state, host, n)
INSERT INTO job_counts (state, host, n)
SELECT state, host, sum(n) FROM gone GROUP BY state, host HAVING sum(n) <> 0`

// Counts implements ports.JobAdmin from job_counts (countsSQL).
func (s *JobStore) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	return s.countStates(ctx, "count jobs", countsSQL)
}

// CountsOfBody implements ports.JobAdmin, through job_activities_body_id_idx
// and jobs_activity_idx.
func (s *JobStore) CountsOfBody(ctx context.Context, bodyID string) (map[domain.JobState]int, error) {
	return s.countStates(ctx, "count jobs of body", `
SELECT j.state, count(*) FROM job_activities a JOIN jobs j ON j.activity = a.id
WHERE a.body_id = $1 AND $1 <> '' GROUP BY j.state`, bodyID)
}

// countStates runs a query of (state, count) rows into a count of every
// state.
func (s *JobStore) countStates(ctx context.Context, what, sql string, args ...any) (map[domain.JobState]int, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err))
	}
	out := ports.StateCounts()
	var state string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		out[domain.JobState(state)] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err))
	}
	return out, nil
}

// CountsByHost implements ports.JobAdmin from job_counts (countsByHostSQL).
func (s *JobStore) CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]ports.HostCount, error) {
	out, err := query(ctx, s.pool, func(row pgx.Row) (ports.HostCount, error) {
		hc := ports.HostCount{State: state}
		return hc, row.Scan(&hc.Host, &hc.Count)
	}, countsByHostSQL, string(state), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("count jobs by host: %w", interpretError(err))
	}
	return out, nil
}

// Get implements ports.JobAdmin.
func (s *JobStore) Get(ctx context.Context, id string) (domain.Job, error) {
	key, ok := jobID(id)
	if !ok {
		return domain.Job{}, fmt.Errorf("job %q: %w", id, domain.ErrNotFound)
	}
	j, err := scanJob(s.pool.QueryRow(ctx, `SELECT `+jobSelect+` FROM `+jobsJoined+` WHERE j.id = $1`, key))
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
	var after pgtype.UUID
	after.Bytes, after.Valid = jobID(f.AfterID)
	out, err := query(ctx, s.pool, func(row pgx.Row) (domain.Job, error) { return scanJob(row) }, `
SELECT `+jobSelect+` FROM `+jobsJoined+`
WHERE ($1 = '' OR j.state = $1) AND ($2 = '' OR j.host = $2) AND ($3::uuid IS NULL OR j.id > $3)
ORDER BY j.id LIMIT $4`, string(f.State), f.Host, after, limitArg(f.Limit))
	if err == nil {
		err = s.fillBodies(ctx, out)
	}
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", interpretError(err))
	}
	return out, nil
}

// endDomainJobsSQL ends the queued jobs of the hosts domain $1 covers
// (coversSQL). The jobs it ends were queued, so no host slot is theirs to
// give back, and an empty reason is NULL, as migration 019 keeps it. A job
// a lease took meanwhile is left to it: the UPDATE waits for the lease's
// row lock, then checks state = 'queued' again on the newest version of
// the row; and a lease passes over the rows this UPDATE holds (SKIP
// LOCKED), finding them dead when it looks again.
func endDomainJobsSQL(d string) (sql, v1, v2 string) {
	covers, v1, v2 := coversSQL(d, "host", "$1::text", "$2::text")
	return `
UPDATE jobs SET state = 'dead', last_error = NULLIF($3, ''), finished_at = $4
WHERE state = 'queued' AND ` + covers, v1, v2
}

// EndDomainJobs implements ports.JobAdmin in one statement
// (endDomainJobsSQL). It is sent again if it met another statement's row
// locks in a cycle (a DeferHost of one of the hosts, locking its rows in
// another order) and PostgreSQL aborted it: an aborted statement changed
// nothing.
func (s *JobStore) EndDomainJobs(ctx context.Context, d, reason string, now time.Time) (int, error) {
	q, v1, v2 := endDomainJobsSQL(d)
	var n int64
	var err error
	for attempt := 1; attempt <= settleAttempts; attempt++ {
		var tag pgconn.CommandTag
		tag, err = s.pool.Exec(ctx, q, v1, v2, reason, now)
		n = tag.RowsAffected()
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || !pgerrcode.IsTransactionRollback(pgErr.Code) {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("end the jobs of %s: %w", d, interpretError(err))
	}
	return int(n), nil
}

// RetryDead implements ports.JobAdmin. As in the memory adapter, the last
// error is kept so the operator still sees why the job had died.
func (s *JobStore) RetryDead(ctx context.Context, id, host string, now time.Time) (int, error) {
	retry := func(where string) string {
		return `
WITH moved AS (
	UPDATE jobs SET state = 'queued', attempts = 0, finished_at = NULL, run_at = $1 ` + where + `
	RETURNING host, run_at
), ` + lowerReady("moved") + `
SELECT count(*) FROM moved`
	}
	var n int
	var err error
	if id != "" {
		key, ok := jobID(id)
		if !ok {
			return 0, nil // not a job id: no such job
		}
		err = s.pool.QueryRow(ctx, retry(`WHERE id = $2 AND state = 'dead' AND ($3 = '' OR host = $3)`), now, key, host).Scan(&n)
	} else {
		err = s.pool.QueryRow(ctx, retry(`WHERE host = $2 AND state = 'dead'`), now, host).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("retry dead jobs: %w", interpretError(err))
	}
	return n, nil
}
