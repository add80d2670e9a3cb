package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.JobStore = (*JobStore)(nil)
	_ ports.JobAdmin = (*JobStore)(nil)
)

// enqueueChunk is how many jobs one InsertMany carries: a fan-out to tens
// of thousands of inboxes is a few round trips (SPEC §9), each well under
// the 48 MB message limit for activity-sized payloads.
const enqueueChunk = 1000

// reapReason is the LastError of a job the reaper took back.
const reapReason = "lease expired (worker died or stalled)"

// JobStore is the delivery queue in the jobs collection.
type JobStore struct {
	jobs *mongodrv.Collection
	// ready holds one entry per host with queued jobs (ready.go);
	// repaired is set once this process repaired it.
	ready    *mongodrv.Collection
	repaired atomic.Bool
	capped   cappedHosts
	// noGroup is set once the server refused $group's accumulators
	// (FerretDB v1): the ready hosts' repair reads with a find instead.
	noGroup atomic.Bool
	// hostStandIn is set once the server answered that jobs_queued_host
	// does not exist (no partial indexes): a host's queued jobs are read
	// from jobs_host_state (queuedOfHost).
	hostStandIn atomic.Bool
	// afterSettleWrite, when set (by tests, export_test.go), runs in Settle
	// between its bulkWrite and the read-back of its markers.
	afterSettleWrite func()
}

// NewJobStore returns the queue of db. EnsureIndexes must have run: the
// lease query hints the jobs_lease index by name and fails loudly without it.
func NewJobStore(db *mongodrv.Database) *JobStore {
	return &JobStore{jobs: collection(db, collJobs), ready: collection(db, collReadyHosts)}
}

type jobDoc struct {
	ID         string `bson:"_id"`
	DedupeKey  string `bson:"dedupeKey"`
	ActivityID string `bson:"activityId"`
	Inbox      string `bson:"inbox"`
	Host       string `bson:"host"`
	SenderID   string `bson:"senderId"`
	KeyID      string `bson:"keyId"`
	// Payload is set only on jobs stored before migration 005; since, the
	// body is kept once in bodies and named by BodyID.
	Payload    []byte    `bson:"payload,omitempty"`
	BodyID     string    `bson:"bodyId,omitempty"`
	State      string    `bson:"state"`
	Attempts   int       `bson:"attempts"`
	RunAt      time.Time `bson:"runAt"`
	LeaseOwner string    `bson:"leaseOwner,omitempty"`
	LeaseToken string    `bson:"leaseToken,omitempty"`
	LeaseUntil time.Time `bson:"leaseUntil,omitempty"`
	// Slot is the host slot a leased job holds ("host#k", jobs_slot): set
	// by LeaseBatch, unset by every write that ends the lease.
	Slot       string    `bson:"slot,omitempty"`
	LastError  string    `bson:"lastError,omitempty"`
	CreatedAt  time.Time `bson:"createdAt"`
	FinishedAt time.Time `bson:"finishedAt,omitempty"`
	// LegacyDeliveryID is set on jobs migration 004 made from a legacy
	// delivery, so its down step can give them back.
	LegacyDeliveryID any `bson:"legacyDeliveryId,omitempty"`
}

func toJobDoc(j domain.Job) jobDoc {
	return jobDoc{
		ID: j.ID, DedupeKey: j.DedupeKey, ActivityID: j.ActivityID, Inbox: j.Inbox, Host: j.Host,
		SenderID: j.SenderID, KeyID: j.KeyID, Payload: j.Payload, BodyID: j.BodyID, State: string(j.State),
		Attempts: j.Attempts, RunAt: utc(j.RunAt), LeaseOwner: j.LeaseOwner, LeaseToken: j.LeaseToken,
		LeaseUntil: utc(j.LeaseUntil), LastError: j.LastError, CreatedAt: utc(j.CreatedAt), FinishedAt: utc(j.FinishedAt),
	}
}

func (d jobDoc) job() domain.Job {
	return domain.Job{
		ID: d.ID, DedupeKey: d.DedupeKey, ActivityID: d.ActivityID, Inbox: d.Inbox, Host: d.Host,
		SenderID: d.SenderID, KeyID: d.KeyID, Payload: d.Payload, BodyID: d.BodyID, State: domain.JobState(d.State),
		Attempts: d.Attempts, RunAt: d.RunAt, LeaseOwner: d.LeaseOwner, LeaseToken: d.LeaseToken,
		LeaseUntil: d.LeaseUntil, LastError: d.LastError, CreatedAt: d.CreatedAt, FinishedAt: d.FinishedAt,
	}
}

// utc keeps a zero time zero (so omitempty drops it) and puts others in UTC.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// unsetLease is the $unset that ends a lease: the token, the holder, the
// expiry and the host slot (jobs_batch.go) go in the same document update.
var unsetLease = bson.D{{Key: "leaseToken", Value: ""}, {Key: "leaseOwner", Value: ""}, {Key: "leaseUntil", Value: ""}, {Key: "slot", Value: ""}}

// Enqueue implements ports.JobStore, all or nothing, as the memory adapter:
//
//  1. Look up, enqueueChunk values per indexed $in query, which of the
//     batch's dedupe keys are stored already, then which ids of the other
//     jobs are. A job whose key is stored is the dedupe no-op; a job whose id is
//     stored, or repeated in the batch, under a key that is not, is
//     domain.ErrAlreadyExists and nothing is inserted.
//  2. Insert the rest with unordered InsertMany, enqueueChunk at a time.
//     The unique jobs_dedupe_key index still arbitrates what step 1 could
//     not see: a key repeated in the batch, or inserted meanwhile by another
//     process, fails its insert with a duplicate key, which is the no-op.
//     MongoDB names the index in the error; where the server does not
//     (FerretDB), the keys are looked up.
//
// If step 2 still fails — an id inserted meanwhile by another process
// (UUIDv7 ids make that a bug, not a race), or the store failing half way —
// the jobs this call inserted are deleted again while still queued, so
// nothing of the batch stays. A job a worker leased in that instant stays
// and is sent once: re-enqueueing the batch is the dedupe no-op for it.
// Only if that clean-up fails too (the store is down) can part of the batch
// remain; the count returned says how much, and re-enqueueing the same batch
// completes it without sending anything twice.
func (s *JobStore) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	jobs, bodies := ports.SplitBodies(jobs)
	fresh, err := s.freshJobs(ctx, jobs)
	if err != nil {
		return 0, err
	}
	needed, touched := bodiesOf(fresh, bodies)
	if err := s.putBodies(ctx, needed, touched); err != nil {
		return 0, err
	}
	var inserted []string
	for start := 0; start < len(fresh); start += enqueueChunk {
		chunk := fresh[start:min(start+enqueueChunk, len(fresh))]
		ids, err := s.insertChunk(ctx, chunk)
		inserted = append(inserted, ids...)
		if err != nil {
			return s.undo(ctx, inserted, err)
		}
	}
	// Every host of the batch, the jobs a dedupe passed over too: an
	// Enqueue sent again after a failed mark makes it then.
	if err := s.markReady(ctx, earliestOf(jobs)); err != nil {
		return len(inserted), fmt.Errorf("enqueue: %w", err)
	}
	if len(inserted) > 0 {
		s.signal(ctx) // other processes' Wakers (waker.go)
	}
	return len(inserted), nil
}

// freshJobs is step 1 of Enqueue: the jobs to insert, or ErrAlreadyExists.
// Ids are looked up only for jobs whose key is not stored, so re-enqueueing
// a batch costs one lookup per chunk.
func (s *JobStore) freshJobs(ctx context.Context, jobs []domain.Job) ([]domain.Job, error) {
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.DedupeKey
	}
	storedKey, err := s.stored(ctx, "dedupeKey", keys)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, j := range jobs {
		if !storedKey[j.DedupeKey] {
			ids = append(ids, j.ID)
		}
	}
	storedID, err := s.stored(ctx, "_id", ids)
	if err != nil {
		return nil, err
	}
	fresh := make([]domain.Job, 0, len(ids))
	seenID := make(map[string]bool, len(ids))
	for _, j := range jobs {
		if storedKey[j.DedupeKey] {
			continue
		}
		if storedID[j.ID] || seenID[j.ID] {
			return nil, fmt.Errorf("%w: job id %q", domain.ErrAlreadyExists, j.ID)
		}
		seenID[j.ID] = true
		fresh = append(fresh, j)
	}
	return fresh, nil
}

// stored reports which of values some job has in field (dedupeKey or _id,
// both uniquely indexed), enqueueChunk values per query.
func (s *JobStore) stored(ctx context.Context, field string, values []string) (map[string]bool, error) {
	out := make(map[string]bool)
	for start := 0; start < len(values); start += enqueueChunk {
		chunk := values[start:min(start+enqueueChunk, len(values))]
		cur, err := s.jobs.Find(ctx, bson.D{{Key: field, Value: bson.D{{Key: "$in", Value: chunk}}}},
			options.Find().SetProjection(bson.D{{Key: field, Value: 1}}))
		if err != nil {
			return nil, fmt.Errorf("enqueue: look up %s: %w", field, interpretError(err, nil))
		}
		var found []bson.Raw
		if err := cur.All(ctx, &found); err != nil {
			return nil, fmt.Errorf("enqueue: look up %s: %w", field, interpretError(err, nil))
		}
		for _, f := range found {
			if v, ok := f.Lookup(field).StringValueOK(); ok {
				out[v] = true
			}
		}
	}
	return out, nil
}

// insertChunk is step 2 of Enqueue for one chunk: the ids it inserted, and
// an error if anything but the dedupe no-op went wrong.
func (s *JobStore) insertChunk(ctx context.Context, chunk []domain.Job) ([]string, error) {
	docs := make([]any, len(chunk))
	for i, j := range chunk {
		docs[i] = toJobDoc(j)
	}
	_, err := s.jobs.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	all := func(skip map[int]bool) []string {
		ids := make([]string, 0, len(chunk))
		for i, j := range chunk {
			if !skip[i] {
				ids = append(ids, j.ID)
			}
		}
		return ids
	}
	if err == nil {
		return all(nil), nil
	}
	var bwe mongodrv.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
		// Not known which documents went in: all of them may have.
		return all(nil), fmt.Errorf("enqueue: %w", interpretError(err, nil))
	}
	failed := make(map[int]bool, len(bwe.WriteErrors))
	var unsure []int // duplicates the server did not pin on jobs_dedupe_key
	var unsureKeys []string
	var firstErr error
	for _, we := range bwe.WriteErrors {
		failed[we.Index] = true
		if we.Code != 11000 && we.Code != 11001 {
			if firstErr == nil {
				firstErr = fmt.Errorf("enqueue job %s: %w", chunk[we.Index].ID, interpretError(err, nil))
			}
			continue
		}
		if idx, ok := messageIndex(we.Message); ok && idx == idxJobsDedupeKey {
			continue // the key is stored: the no-op
		}
		unsure = append(unsure, we.Index)
		unsureKeys = append(unsureKeys, chunk[we.Index].DedupeKey)
	}
	if firstErr != nil || len(unsure) == 0 {
		return all(failed), firstErr
	}
	stored, err := s.stored(ctx, "dedupeKey", unsureKeys)
	if err != nil {
		return all(failed), err
	}
	for _, i := range unsure {
		if !stored[chunk[i].DedupeKey] {
			return all(failed), fmt.Errorf("%w: job id %q", domain.ErrAlreadyExists, chunk[i].ID)
		}
	}
	return all(failed), nil
}

// undo deletes the jobs a failed Enqueue inserted, while they are queued.
func (s *JobStore) undo(ctx context.Context, ids []string, cause error) (int, error) {
	if len(ids) == 0 {
		return 0, cause
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	res, err := s.jobs.DeleteMany(ctx, bson.D{
		{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "state", Value: string(domain.JobQueued)},
	})
	if err != nil {
		return len(ids), fmt.Errorf("%w (and %d jobs of the batch could not be taken out again: %v)", cause, len(ids), interpretError(err, nil))
	}
	return len(ids) - int(res.DeletedCount), cause
}

// Reap implements ports.JobStore with two UpdateManys rather than one
// pipeline update, because FerretDB has no pipeline updates and the two
// are as safe:
//
//  1. expired leases whose reap is their last attempt (attempts+1 >=
//     maxAttempts) become dead, attempts+1, FinishedAt = now;
//  2. expired leases with attempts+1 < maxAttempts go back to queued,
//     attempts+1, due now.
//
// Each document is updated atomically and only if it still matches (a
// server re-checks the filter of a multi-update per document), so a job
// completed, retried or re-leased meanwhile is never touched: every
// holder's write needs state leased with its token, and a reap ends the
// lease. Between the two passes a job can only leave the "expired lease"
// set, never move from one pass's set to the other's (only a holder changes
// attempts, and a holder's write ends the lease), so no job is reaped
// twice or counted in both results. Pass 2 also filters on attempts, so it
// never revives a job that should die.
func (s *JobStore) Reap(ctx context.Context, now time.Time, maxAttempts int) (ports.ReapResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.ReapResult{}, err
	}
	now = now.UTC()
	expired := func(attempts bson.D) bson.D {
		return bson.D{
			{Key: "state", Value: string(domain.JobLeased)},
			{Key: "leaseUntil", Value: bson.D{{Key: "$lt", Value: now}}},
			{Key: "attempts", Value: attempts},
		}
	}
	var r ports.ReapResult
	dead, err := s.jobs.UpdateMany(ctx, expired(bson.D{{Key: "$gte", Value: maxAttempts - 1}}), bson.D{
		{Key: "$set", Value: bson.D{
			{Key: "state", Value: string(domain.JobDead)},
			{Key: "lastError", Value: reapReason},
			{Key: "finishedAt", Value: now},
		}},
		{Key: "$inc", Value: bson.D{{Key: "attempts", Value: 1}}},
		{Key: "$unset", Value: unsetLease},
	})
	if err != nil {
		return r, fmt.Errorf("reap: %w", interpretError(err, nil))
	}
	r.Dead = int(dead.ModifiedCount)
	// The hosts of the leases to requeue, read first: marked at now once
	// their jobs are queued again (a job a holder settles in between is
	// marked for nothing: an early entry is never wrong).
	hosts, err := s.hostsOf(ctx, expired(bson.D{{Key: "$lt", Value: maxAttempts - 1}}))
	if err != nil {
		return r, fmt.Errorf("reap: %w", err)
	}
	requeued, err := s.jobs.UpdateMany(ctx, expired(bson.D{{Key: "$lt", Value: maxAttempts - 1}}), bson.D{
		{Key: "$set", Value: bson.D{
			{Key: "state", Value: string(domain.JobQueued)},
			{Key: "lastError", Value: reapReason},
			{Key: "runAt", Value: now},
		}},
		{Key: "$inc", Value: bson.D{{Key: "attempts", Value: 1}}},
		{Key: "$unset", Value: unsetLease},
	})
	if err != nil {
		return r, fmt.Errorf("reap: %w", interpretError(err, nil))
	}
	r.Requeued = int(requeued.ModifiedCount)
	if err := s.markHosts(ctx, hosts, now); err != nil {
		return r, fmt.Errorf("reap: %w", err)
	}
	if err := s.repairReady(ctx); err != nil {
		return r, fmt.Errorf("reap: %w", err)
	}
	return r, nil
}

// hostsOf is the distinct hosts of the jobs filter matches.
func (s *JobStore) hostsOf(ctx context.Context, filter bson.D) ([]string, error) {
	type hostDoc struct {
		Host string `bson:"host"`
	}
	docs, err := findAll(ctx, s.jobs, filter, "hosts", func(d hostDoc) string { return d.Host },
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: 1}}))
	slices.Sort(docs)
	return slices.Compact(docs), err
}

// markHosts marks each of hosts ready at t.
func (s *JobStore) markHosts(ctx context.Context, hosts []string, t time.Time) error {
	earliest := make(map[string]time.Time, len(hosts))
	for _, h := range hosts {
		earliest[h] = t
	}
	return s.markReady(ctx, earliest)
}

// Purge implements ports.JobStore; with a TTL index it finds few jobs to
// delete, and then sweeps the bodies no job refers to any more.
func (s *JobStore) Purge(ctx context.Context, finishedBefore time.Time) (int, error) {
	res, err := s.jobs.DeleteMany(ctx, bson.D{
		{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{string(domain.JobSucceeded), string(domain.JobDead)}}}},
		{Key: "finishedAt", Value: bson.D{{Key: "$lt", Value: finishedBefore.UTC()}}},
	})
	if err != nil {
		return 0, fmt.Errorf("purge: %w", interpretError(err, nil))
	}
	return int(res.DeletedCount), s.sweepBodies(ctx, finishedBefore)
}

// DeferHost implements ports.JobStore.
func (s *JobStore) DeferHost(ctx context.Context, host string, until time.Time) (int, error) {
	return s.moveHost(ctx, host, bson.D{{Key: "$lt", Value: until.UTC()}}, until)
}

// ResumeHost implements ports.JobStore.
func (s *JobStore) ResumeHost(ctx context.Context, host string, until, now time.Time) (int, error) {
	n, err := s.moveHost(ctx, host, bson.D{{Key: "$gt", Value: now.UTC()}, {Key: "$lte", Value: until.UTC()}}, now)
	if n > 0 && err == nil {
		err = s.markHosts(ctx, []string{host}, now)
	}
	if n > 0 {
		s.signal(ctx) // an operator's command in another process: wake the servers
	}
	return n, err
}

func (s *JobStore) moveHost(ctx context.Context, host string, runAt bson.D, to time.Time) (int, error) {
	res, err := s.jobs.UpdateMany(ctx,
		bson.D{{Key: "host", Value: host}, {Key: "state", Value: string(domain.JobQueued)}, {Key: "runAt", Value: runAt}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "runAt", Value: to.UTC()}}}})
	if err != nil {
		return 0, fmt.Errorf("move jobs of %s: %w", host, interpretError(err, nil))
	}
	return int(res.ModifiedCount), nil
}

// Counts implements ports.JobAdmin with one count per state, each a count
// over the state prefix of jobs_lease, run side by side: where a count
// reads the state's documents (DocumentDB has no index-only count), the
// reading takes as long as the largest state's, not the sum.
func (s *JobStore) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	states := domain.JobStates()
	ns := make([]int64, len(states))
	err := sideBySide(len(states), func(i int) (err error) {
		if ns[i], err = s.jobs.CountDocuments(ctx, bson.D{{Key: "state", Value: string(states[i])}}); err != nil {
			return fmt.Errorf("count %s jobs: %w", states[i], interpretError(err, nil))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[domain.JobState]int, len(states))
	for i, st := range states {
		out[st] = int(ns[i])
	}
	return out, nil
}

// CountsOfBody implements ports.JobAdmin: one count per state on
// jobs_body_id.
func (s *JobStore) CountsOfBody(ctx context.Context, bodyID string) (map[domain.JobState]int, error) {
	out := make(map[domain.JobState]int, len(domain.JobStates()))
	for _, st := range domain.JobStates() {
		out[st] = 0
		if bodyID == "" {
			continue
		}
		n, err := s.jobs.CountDocuments(ctx, bson.D{{Key: "bodyId", Value: bodyID}, {Key: "state", Value: string(st)}})
		if err != nil {
			return nil, fmt.Errorf("count %s jobs of body: %w", st, interpretError(err, nil))
		}
		out[st] = int(n)
	}
	return out, nil
}

// CountsByHost implements ports.JobAdmin.
func (s *JobStore) CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]ports.HostCount, error) {
	pipeline := mongodrv.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "state", Value: string(state)}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$host"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "n", Value: -1}, {Key: "_id", Value: 1}}}},
	}
	if limit > 0 {
		pipeline = append(pipeline, bson.D{{Key: "$limit", Value: limit}})
	}
	cur, err := s.jobs.Aggregate(ctx, pipeline)
	if err != nil {
		return nil, fmt.Errorf("count jobs by host: %w", interpretError(err, nil))
	}
	var rows []struct {
		Host string `bson:"_id"`
		N    int    `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("count jobs by host: %w", interpretError(err, nil))
	}
	out := make([]ports.HostCount, len(rows))
	for i, r := range rows {
		out[i] = ports.HostCount{Host: r.Host, State: state, Count: r.N}
	}
	return out, nil
}

// Get implements ports.JobAdmin.
func (s *JobStore) Get(ctx context.Context, id string) (domain.Job, error) {
	var d jobDoc
	if err := s.jobs.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, interpretError(err, nil))
	}
	one := []domain.Job{d.job()}
	if err := s.fillBodies(ctx, one); err != nil {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	return one[0], nil
}

// List implements ports.JobAdmin.
func (s *JobStore) List(ctx context.Context, f ports.JobFilter) ([]domain.Job, error) {
	filter := bson.D{}
	if f.State != "" {
		filter = append(filter, bson.E{Key: "state", Value: string(f.State)})
	}
	if f.Host != "" {
		filter = append(filter, bson.E{Key: "host", Value: f.Host})
	}
	if f.AfterID != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: f.AfterID}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
	if f.Limit > 0 {
		opts.SetLimit(int64(f.Limit))
	}
	out, err := findAll(ctx, s.jobs, filter, "list jobs", jobDoc.job, opts)
	if err == nil {
		err = s.fillBodies(ctx, out)
	}
	return out, err
}

// EndDomainJobs implements ports.JobAdmin in one UpdateMany: the queued
// jobs whose host coversFilter covers end dead. The server checks the
// filter again on each document as it updates it, so a job a lease took
// meanwhile (its conditional update wrote state leased first) is passed
// over, and a lease after finds the job dead and leaves it. A queued job
// holds no host slot; unsetLease goes with the update all the same, so
// that no dead job could ever keep one.
func (s *JobStore) EndDomainJobs(ctx context.Context, d, reason string, now time.Time) (int, error) {
	set := bson.D{{Key: "state", Value: string(domain.JobDead)}, {Key: "finishedAt", Value: now.UTC()}}
	unset := unsetLease
	if reason != "" {
		set = append(set, bson.E{Key: "lastError", Value: reason})
	} else {
		unset = append(slices.Clone(unsetLease), bson.E{Key: "lastError", Value: ""})
	}
	filter := append(bson.D{{Key: "state", Value: string(domain.JobQueued)}}, coversFilter("host", d)...)
	res, err := s.jobs.UpdateMany(ctx, filter, bson.D{{Key: "$set", Value: set}, {Key: "$unset", Value: unset}})
	if err != nil {
		return 0, fmt.Errorf("end the jobs of %s: %w", d, interpretError(err, nil))
	}
	return int(res.ModifiedCount), nil
}

// RetryDead implements ports.JobAdmin.
func (s *JobStore) RetryDead(ctx context.Context, id, host string, now time.Time) (int, error) {
	filter := bson.D{{Key: "state", Value: string(domain.JobDead)}}
	if id != "" {
		filter = append(filter, bson.E{Key: "_id", Value: id})
	}
	if host != "" || id == "" {
		filter = append(filter, bson.E{Key: "host", Value: host})
	}
	hosts := []string{host}
	if host == "" && id != "" {
		var err error
		if hosts, err = s.hostsOf(ctx, filter); err != nil {
			return 0, fmt.Errorf("retry dead jobs: %w", err)
		}
	}
	res, err := s.jobs.UpdateMany(ctx, filter, bson.D{
		{Key: "$set", Value: bson.D{
			{Key: "state", Value: string(domain.JobQueued)},
			{Key: "attempts", Value: 0},
			{Key: "runAt", Value: now.UTC()},
		}},
		{Key: "$unset", Value: bson.D{{Key: "finishedAt", Value: ""}}},
	})
	if err != nil {
		return 0, fmt.Errorf("retry dead jobs: %w", interpretError(err, nil))
	}
	if res.ModifiedCount > 0 {
		if err := s.markHosts(ctx, hosts, now); err != nil {
			return int(res.ModifiedCount), fmt.Errorf("retry dead jobs: %w", err)
		}
		s.signal(ctx)
	}
	return int(res.ModifiedCount), nil
}
