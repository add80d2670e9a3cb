package mongo

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The batch methods of ports.JobStore on MongoDB: a lease of many jobs in a
// fixed number of round trips, whatever the batch's size, and a settlement
// of many in one.
//
// # Host slots
//
// The per-host cap holds across processes without a lock and without a
// transaction: a leased job carries its host slot in its own document,
// slot = "<host>#<k>", and the unique sparse index jobs_slot lets at most
// one job hold each slot. A lease stamps the slot in the same single-document
// update that leases the job, so two leasers that chose the same free slot
// cannot both win it: the second update fails with a duplicate key, changes
// nothing, and that job is passed over. Every write that ends a lease (a
// settlement, the reaper) unsets the slot in the same document update, so a
// job holds a slot exactly while it is leased; there is nothing to give back
// separately and nothing a crash can leave behind (a dead holder's job keeps
// its slot until the reaper ends its lease, as on PostgreSQL).
//
// A caller with cap c only takes slots 0..c-1, so with one cap for all (the
// deployment's HERALD_PER_HOST) no host ever has more than c leased jobs of
// capped callers, counted by the server's unique index. The cap is also
// checked against the count of the host's leased jobs read just before (it
// covers callers with other caps and jobs leased without a slot: Lease, or
// an older version during a rolling upgrade); that count is a read, not
// arbitration, so when callers with different caps lease one host at the
// same instant the bound is the largest of their caps. A caller without a
// cap takes the lowest free slots, any k, so its leases count against the
// caps of others and collide with them on the same slots.

// idxJobsSlot is the unique sparse index on jobs.slot (see Host slots).
const idxJobsSlot = "jobs_slot"

// leaseRounds bounds the find-and-stamp rounds of one LeaseBatch. A round
// reads leaseWindow(n) candidates; only when that window was full and hosts
// at their cap kept the batch short does another round look past them (the
// skipped hosts grow by the saturated ones), so one host's backlog cannot
// starve the rest of a batch.
const leaseRounds = 3

// leaseWindow is how many candidates a round reads for n wanted jobs: as on
// PostgreSQL, enough to pass over the backlog of a few hosts at their cap.
func leaseWindow(n int) int { return 4*n + 16 }

func slotOf(host string, k int) string { return host + "#" + strconv.Itoa(k) }

// slotIndex reads k back from a slot of host; false for anything else.
func slotIndex(host, slot string) (int, bool) {
	rest, ok := strings.CutPrefix(slot, host+"#")
	if !ok {
		return 0, false
	}
	k, err := strconv.Atoi(rest)
	return k, err == nil && k >= 0
}

// LeaseBatch implements ports.JobStore in at most leaseRounds rounds, each
// of four round trips (usually one round), plus one to read the jobs'
// bodies:
//
//  1. find the candidates: queued, due, not of a skipped host, oldest
//     (runAt, _id) first, leaseWindow of them, only _id, host and runAt;
//  2. find the leased jobs of the candidates' hosts (jobs_lease): how
//     many each host has and which slots they hold;
//  3. one unordered bulkWrite of conditional updates, one per chosen job
//     (the oldest candidates within each host's free slots, up to the
//     limit): {_id, state: queued, runAt <= now} → leased with the batch's
//     token, lease expiry and the chosen slot. A job another leaser took
//     meanwhile no longer matches; a slot another leaser took meanwhile is a
//     duplicate key on jobs_slot; either way that job is passed over;
//  4. read back by token the jobs this call won.
//
// No step needs a transaction, and nothing is locked: each job is won by
// one single-document update, which the server applies atomically.
//
// A lease with a per-host cap reads the ready hosts instead of steps 1 and
// 2 (leaseReady, ready.go), so that the backlog of hosts at their cap is
// never walked; an uncapped lease has no such hosts and reads by runAt.
func (s *JobStore) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req, err := ports.NormalizeLease(req)
	if err != nil {
		return nil, err
	}
	var out []domain.Job
	if req.PerHost < ports.NoHostCap {
		out, err = s.leaseReady(ctx, req)
	} else {
		out, err = s.leaseBatch(ctx, req)
	}
	if ferr := s.fillBodies(ctx, out); err == nil {
		err = ferr
	}
	slices.SortFunc(out, func(a, b domain.Job) int {
		return cmp.Or(a.RunAt.Compare(b.RunAt), strings.Compare(a.ID, b.ID))
	})
	return out, err
}

func (s *JobStore) leaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	limit := req.Limit
	skip := slices.Clone(req.SkipHosts)
	var out []domain.Job
	for round := 0; round < leaseRounds && len(out) < limit; round++ {
		want := limit - len(out)
		window := leaseWindow(want)
		cands, err := s.leaseCandidates(ctx, req.Now, skip, window)
		if err != nil {
			return out, err
		}
		if len(cands) == 0 {
			break
		}
		held, err := s.heldSlots(ctx, cands)
		if err != nil {
			return out, err
		}
		plan, saturated := planLease(cands, held, req.PerHost, want)
		got, err := s.stampLeases(ctx, req, plan)
		out = append(out, got...)
		if err != nil {
			return out, err
		}
		if len(cands) < window || len(saturated) == 0 && len(got) == len(plan) {
			// Every runnable job was in the window, or nothing held the
			// batch back but the window itself: another round finds no more.
			break
		}
		skip = append(skip, saturated...)
	}
	return out, nil
}

// candidate is a runnable job as step 1 reads it.
type candidate struct {
	ID    string    `bson:"_id"`
	Host  string    `bson:"host"`
	RunAt time.Time `bson:"runAt"`
}

// leaseCandidates is step 1, on jobs_lease (the hint is taken on find by
// every server seen).
func (s *JobStore) leaseCandidates(ctx context.Context, now time.Time, skip []string, n int) ([]candidate, error) {
	filter := bson.D{
		{Key: "state", Value: string(domain.JobQueued)},
		{Key: "runAt", Value: bson.D{{Key: "$lte", Value: now.UTC()}}},
	}
	if len(skip) > 0 {
		filter = append(filter, bson.E{Key: "host", Value: bson.D{{Key: "$nin", Value: skip}}})
	}
	out, err := findAll(ctx, s.jobs, filter, "lease: candidates", func(c candidate) candidate { return c },
		options.Find().
			SetSort(bson.D{{Key: "runAt", Value: 1}, {Key: "_id", Value: 1}}).
			SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "host", Value: 1}, {Key: "runAt", Value: 1}}).
			// The whole window in one reply and no cursor left open
			// (singleBatch: a negative limit; queuedOfHosts says why).
			SetLimit(-int64(n)).
			SetBatchSize(int32(n)).
			SetHint(idxJobsLease))
	return out, err
}

// hostSlots is what step 2 reads of one host: its leased jobs and the slots
// they hold.
type hostSlots struct {
	leased int
	used   map[int]bool
}

// heldSlots is step 2: for each host of cands, its leased jobs.
func (s *JobStore) heldSlots(ctx context.Context, cands []candidate) (map[string]*hostSlots, error) {
	held := make(map[string]*hostSlots)
	var hosts []string
	for _, c := range cands {
		if held[c.Host] == nil {
			held[c.Host] = &hostSlots{used: map[int]bool{}}
			hosts = append(hosts, c.Host)
		}
	}
	type leasedDoc struct {
		Host string `bson:"host"`
		Slot string `bson:"slot"`
	}
	docs, err := findAll(ctx, s.jobs, bson.D{
		{Key: "host", Value: bson.D{{Key: "$in", Value: hosts}}},
		{Key: "state", Value: string(domain.JobLeased)},
	}, "lease: held slots", func(d leasedDoc) leasedDoc { return d },
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "host", Value: 1}, {Key: "slot", Value: 1}}))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		h := held[d.Host]
		if h == nil {
			continue
		}
		h.leased++
		if k, ok := slotIndex(d.Host, d.Slot); ok {
			h.used[k] = true
		}
	}
	return held, nil
}

// planned is one job step 3 tries to lease, into slot.
type planned struct {
	id, host, slot string
	runAt          time.Time
}

// planLease chooses, oldest first, up to want candidates within each host's
// free slots (perHost as ports.NormalizeLease gives it: ports.NoHostCap
// when the lease has no cap). saturated lists the
// hosts that had a candidate left out for their cap.
func planLease(cands []candidate, held map[string]*hostSlots, perHost, want int) (plan []planned, saturated []string) {
	full := map[string]bool{}
	for _, c := range cands {
		if len(plan) == want {
			break
		}
		h := held[c.Host]
		if h.leased >= perHost {
			if !full[c.Host] {
				full[c.Host] = true
				saturated = append(saturated, c.Host)
			}
			continue
		}
		k := 0
		for h.used[k] {
			k++
		}
		if k >= perHost {
			// Cannot happen (perHost slots in use are perHost leases);
			// kept so that a cap is never passed whatever the count says.
			continue
		}
		h.used[k] = true
		h.leased++
		plan = append(plan, planned{id: c.ID, host: c.Host, slot: slotOf(c.Host, k), runAt: c.RunAt})
	}
	return plan, saturated
}

// stampLeases is steps 3 and 4: the conditional updates in one unordered
// bulkWrite, then the jobs that took this call's token, read back by it.
func (s *JobStore) stampLeases(ctx context.Context, req ports.LeaseRequest, plan []planned) ([]domain.Job, error) {
	if len(plan) == 0 {
		return nil, nil
	}
	now, until := req.Now.UTC(), req.Until.UTC()
	// In _id order, as Settle writes: on a server that locks rows for a
	// bulkWrite's updates (DocumentDB), two bulkWrites over shared jobs then
	// wait for each other rather than deadlock.
	plan = slices.Clone(plan)
	slices.SortFunc(plan, func(a, b planned) int { return strings.Compare(a.id, b.id) })
	models := make([]mongodrv.WriteModel, len(plan))
	ids := make([]string, len(plan))
	for i, p := range plan {
		ids[i] = p.id
		models[i] = mongodrv.NewUpdateOneModel().
			SetFilter(bson.D{
				{Key: "_id", Value: p.id},
				{Key: "state", Value: string(domain.JobQueued)},
				{Key: "runAt", Value: bson.D{{Key: "$lte", Value: now}}},
			}).
			SetUpdate(bson.D{{Key: "$set", Value: bson.D{
				{Key: "state", Value: string(domain.JobLeased)},
				{Key: "leaseToken", Value: req.Token},
				{Key: "leaseOwner", Value: req.Owner},
				{Key: "leaseUntil", Value: until},
				{Key: "slot", Value: p.slot},
			}}})
	}
	res, err := s.jobs.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil && !onlyConcurrencyLosses(err) {
		// Not known which jobs were leased: give back any that were, so
		// they do not wait for the reaper (best effort; the reaper
		// recovers them otherwise).
		s.unstamp(ctx, req.Token, plan)
		return nil, fmt.Errorf("lease: %w", interpretError(err, nil))
	}
	if res != nil && res.MatchedCount == 0 {
		return nil, nil
	}
	docs, err := findAll(ctx, s.jobs, bson.D{
		{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "leaseToken", Value: req.Token},
	}, "lease: read back", jobDoc.job)
	if err != nil {
		s.unstamp(ctx, req.Token, plan)
		return nil, err
	}
	return docs, nil
}

// onlyConcurrencyLosses reports whether err is a bulkWrite whose only
// failures are updates that lost to another writer and changed nothing:
// duplicate keys, which a lease update can only meet on jobs_slot (it
// changes no other uniquely indexed field: slots other leasers took), and
// the transient conflicts of concurrentConflict. The lease reads back by
// token what it won, so those jobs are simply not in its batch.
func onlyConcurrencyLosses(err error) bool {
	wes, ok := writeErrors(err)
	if !ok {
		return false
	}
	for _, we := range wes {
		if !duplicateKey(we) && !concurrentConflict(we.Code) {
			return false
		}
	}
	return true
}

// duplicateKey reports whether we is a unique index refusing the write:
// E11000, or FerretDB v1's InternalError for an update (see
// ferretUniqueViolation).
func duplicateKey(we mongodrv.BulkWriteError) bool {
	return we.Code == 11000 || we.Code == 11001 || we.Code == codeInternalError && strings.Contains(we.Message, ferretUniqueMessage)
}

// Write error codes of an update that met another writer and was undone,
// to be tried again: MongoDB's WriteConflict (which it retries itself for
// a single-document write outside a transaction, so rarely seen), and
// PostgreSQL's deadlock_detected (40P01) and serialization_failure (40001)
// as DocumentDB reports them: the SQLSTATE packed into an int
// (MAKE_SQLSTATE), each write of a bulkWrite rolled back on its own.
// Measured on FerretDB v2: the contract's chaos case met "deadlock
// detected" on a lease's bulkWrite.
const (
	codeWriteConflict       = 112
	codeDeadlockDetected    = 4 | 32<<12 | 1<<24 // 40P01
	codeSerializationFailed = 4 | 1<<24          // 40001
)

func concurrentConflict(code int) bool {
	return code == codeWriteConflict || code == codeDeadlockDetected || code == codeSerializationFailed
}

// conflicted returns the indexes of err's writes that concurrentConflict
// undid, and whether those were its only failures.
func conflicted(err error) ([]int, bool) {
	wes, ok := writeErrors(err)
	if !ok {
		return nil, false
	}
	out := make([]int, 0, len(wes))
	for _, we := range wes {
		if !concurrentConflict(we.Code) {
			return nil, false
		}
		out = append(out, we.Index)
	}
	return out, true
}

// writeErrors returns the per-write failures of a bulkWrite that failed
// only in some of its writes (no write concern error); false for any other
// error.
func writeErrors(err error) ([]mongodrv.BulkWriteError, bool) {
	var bwe mongodrv.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return nil, false
	}
	return bwe.WriteErrors, true
}

// conflictRetries bounds how often Settle sends again the updates a
// conflict undid.
const conflictRetries = 5

// unstamp puts back in the queue, without spending an attempt, the jobs of
// plan that a failed lease may have stamped with token, and marks their
// hosts ready again.
func (s *JobStore) unstamp(ctx context.Context, token string, plan []planned) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ids := make([]string, len(plan))
	earliest := make(map[string]time.Time)
	for i, p := range plan {
		ids[i] = p.id
		if t, ok := earliest[p.host]; !ok || p.runAt.Before(t) {
			earliest[p.host] = p.runAt
		}
	}
	defer func() { _ = s.markReady(ctx, earliest) }()
	_, _ = s.jobs.UpdateMany(ctx, bson.D{
		{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "leaseToken", Value: token},
		{Key: "state", Value: string(domain.JobLeased)},
	}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "state", Value: string(domain.JobQueued)}}},
		{Key: "$unset", Value: unsetLease},
	})
}

// Settle implements ports.JobStore with one unordered bulkWrite of fenced
// updates ({_id, leaseToken, state: leased}), each ending the lease and
// freeing the job's slot in the same document update. A settlement that
// repeats an earlier one of the batch (same job, same token) is lost
// without being sent: the first ends the lease.
//
// The server reports how many updates matched, not which. When all did
// (the rule), that is the answer. Otherwise each update has also pushed a
// marker of its own (this call's nonce and its index) onto the job's
// settleMarks, which keeps the last settleMarksKept, and one find reads
// them back: the settlements whose marker is there were applied, the
// others lost. A job released or retried by this batch may be leased and
// settled again by another worker between the bulkWrite and the read (the
// contract's chaos case does it on FerretDB v2): its marker then follows
// ours, which stays. Ours would be pushed out only by settleMarksKept
// settlements of the job in that window, each needing a lease of its own;
// then it is reported lost (the engine only logs that the result was not
// recorded: the job is where the settlement put it).
func (s *JobStore) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lost := make([]error, len(batch))
	lose := func(i int) { lost[i] = fmt.Errorf("job %s: %w", batch[i].ID, domain.ErrLeaseLost) }
	nonce, err := newNonce()
	if err != nil {
		return nil, fmt.Errorf("settle: %w", err)
	}
	type pair struct{ id, token string }
	seen := make(map[pair]bool, len(batch))
	var sent []int
	for i, st := range batch {
		if st.Token == "" || seen[pair{st.ID, st.Token}] {
			lose(i)
			continue
		}
		seen[pair{st.ID, st.Token}] = true
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return lost, nil
	}
	// In _id order, as the lease stamps (see stampLeases).
	slices.SortStableFunc(sent, func(a, b int) int { return strings.Compare(batch[a].ID, batch[b].ID) })
	models := make([]mongodrv.WriteModel, len(sent))
	for k, i := range sent {
		st := batch[i]
		models[k] = mongodrv.NewUpdateOneModel().
			SetFilter(bson.D{
				{Key: "_id", Value: st.ID},
				{Key: "leaseToken", Value: st.Token},
				{Key: "state", Value: string(domain.JobLeased)},
			}).
			SetUpdate(settlementUpdate(st, settleMarker(nonce, i)))
	}
	matched, err := s.bulkUpdate(ctx, models)
	// Best effort, whatever the bulkWrite applied: a mark lost here is
	// made by the next reaper pass (repairReady).
	_ = s.markRequeued(ctx, batch, sent)
	if err != nil {
		return nil, fmt.Errorf("settle: %w", interpretError(err, nil))
	}
	if matched == len(sent) {
		return lost, nil
	}
	if s.afterSettleWrite != nil {
		s.afterSettleWrite()
	}
	ids := make([]string, len(sent))
	for k, i := range sent {
		ids[k] = batch[i].ID
	}
	type markDoc struct {
		ID    string   `bson:"_id"`
		Marks []string `bson:"settleMarks"`
	}
	marks, err := findAll(ctx, s.jobs, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, "settle: read back",
		func(d markDoc) markDoc { return d }, options.Find().SetProjection(bson.D{{Key: "settleMarks", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("settle: %w", err)
	}
	marksOf := make(map[string][]string, len(marks))
	for _, m := range marks {
		marksOf[m.ID] = m.Marks
	}
	for _, i := range sent {
		if !slices.Contains(marksOf[batch[i].ID], settleMarker(nonce, i)) {
			lose(i)
		}
	}
	return lost, nil
}

// markRequeued marks the hosts of the settlements of batch[sent] that put
// their job back in the queue; the hosts a settlement does not name are
// read first.
func (s *JobStore) markRequeued(ctx context.Context, batch []ports.Settlement, sent []int) error {
	earliest := make(map[string]time.Time)
	runAt := make(map[string]time.Time) // by job id, host unknown
	for _, i := range sent {
		st := batch[i]
		switch {
		case st.State != domain.JobQueued:
		case st.Host != "":
			if t, ok := earliest[st.Host]; !ok || st.RunAt.Before(t) {
				earliest[st.Host] = st.RunAt
			}
		default:
			if t, ok := runAt[st.ID]; !ok || st.RunAt.Before(t) {
				runAt[st.ID] = st.RunAt
			}
		}
	}
	if len(runAt) == 0 {
		return s.markReady(ctx, earliest)
	}
	type hostDoc struct {
		ID   string `bson:"_id"`
		Host string `bson:"host"`
	}
	docs, err := findAll(ctx, s.jobs, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: slices.Collect(maps.Keys(runAt))}}}},
		"settle: hosts", func(d hostDoc) hostDoc { return d }, options.Find().SetProjection(bson.D{{Key: "host", Value: 1}}))
	if err != nil {
		return err
	}
	for _, d := range docs {
		if t, ok := earliest[d.Host]; !ok || runAt[d.ID].Before(t) {
			earliest[d.Host] = runAt[d.ID]
		}
	}
	return s.markReady(ctx, earliest)
}

// settleMarksKept is how many settlement markers a job keeps (Settle).
const settleMarksKept = 8

// bulkUpdate sends models in one unordered bulkWrite and returns how many
// matched. The updates a concurrent writer's conflict undid (on DocumentDB,
// a deadlock between two bulkWrites) are sent again, up to
// conflictRetries times: each is fenced, so sending it again is safe.
func (s *JobStore) bulkUpdate(ctx context.Context, models []mongodrv.WriteModel) (int, error) {
	matched := 0
	for try := 0; ; try++ {
		res, err := s.jobs.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if res != nil {
			matched += int(res.MatchedCount)
		}
		if err == nil {
			return matched, nil
		}
		undone, ok := conflicted(err)
		if !ok || try == conflictRetries {
			return matched, err
		}
		again := make([]mongodrv.WriteModel, len(undone))
		for k, i := range undone {
			again[k] = models[i]
		}
		models = again
	}
}

// settlementUpdate writes st's fields, ends the lease and frees the slot.
func settlementUpdate(st ports.Settlement, marker string) bson.D {
	set := bson.D{
		{Key: "state", Value: string(st.State)},
		{Key: "attempts", Value: st.Attempts},
	}
	// settledBy held the last marker alone before settleMarks.
	unset := append(slices.Clone(unsetLease), bson.E{Key: "settledBy", Value: ""})
	if st.LastError != "" {
		set = append(set, bson.E{Key: "lastError", Value: st.LastError})
	} else {
		unset = append(unset, bson.E{Key: "lastError", Value: ""})
	}
	if st.State == domain.JobQueued {
		set = append(set, bson.E{Key: "runAt", Value: st.RunAt.UTC()})
		unset = append(unset, bson.E{Key: "finishedAt", Value: ""})
	} else {
		set = append(set, bson.E{Key: "finishedAt", Value: st.FinishedAt.UTC()})
	}
	push := bson.D{{Key: "settleMarks", Value: bson.D{
		{Key: "$each", Value: bson.A{marker}},
		{Key: "$slice", Value: -settleMarksKept},
	}}}
	return bson.D{{Key: "$set", Value: set}, {Key: "$unset", Value: unset}, {Key: "$push", Value: push}}
}

func settleMarker(nonce string, i int) string { return nonce + ":" + strconv.Itoa(i) }

// newNonce is 96 random bits: a Settle call's markers are its own.
func newNonce() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
