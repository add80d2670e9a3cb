package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// # Ready hosts
//
// A capped lease (PerHost below ports.NoHostCap) does not read the queue by
// runAt: when most queued jobs belong to hosts at their cap (slow or dead
// servers holding their slots), such a read walks past their whole backlog
// on every lease (issue 36). It reads the ready_hosts collection instead: one document per
// host, {_id: host, readyAt, seq}, ordered by readyAt on
// ready_hosts_ready_at. The lease passes over one entry per capped host and
// reads, per host it visits, only the few oldest queued jobs it can take
// (jobs_queued_host, which holds queued jobs only), so its cost does not
// grow with the backlog.
//
// The one rule that keeps every queued job leasable, without a transaction:
//
//	readyAt <= the runAt of every queued job of the host.
//
// An entry may be early (the host has later jobs, or none: a stale entry
// costs a lease one visit, after which the lease corrects it), never late.
//
//   - Every write that makes a job queued or earlier (an enqueue, a retry or
//     release, the reaper, a lease given back, a lifted quarantine, a dead
//     job retried) marks the job's host after its own write: readyAt =
//     min(readyAt, runAt) and seq + 1, in one upsert. A mark only ever
//     lowers readyAt, so marks need no order among themselves.
//   - Only a lease moves readyAt forward, to the oldest queued job it saw of
//     the host (or neverReady when it saw the host's whole queue and left
//     nothing in it), and only if seq is still what it read before it read
//     the jobs. A job written queued after that read of the jobs marks after
//     its write: either before the move (seq changed: the move fails) or
//     after it (the mark lowers readyAt again).
//   - Entries are never deleted (a delete racing a mark is the one case the
//     seq cannot fence: the mark's upsert would have to come after it). A
//     host with nothing queued keeps one small document at neverReady.
//   - A mark lost to a crash between a job's write and its mark would leave
//     the job unleasable; every reaper pass repairs that (repairReady), so
//     such a job waits at most one reaper period.
const (
	collReadyHosts       = "ready_hosts"
	idxReadyHostsReadyAt = "ready_hosts_ready_at"
)

// neverReady is the readyAt of a host with nothing queued.
var neverReady = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// readyRounds bounds the rounds of one capped lease; each visits
// readyVisit(n) more hosts. A second round is needed only when a visited
// host was stale or a planned job is younger than the next unvisited
// host's readyAt (that host might hold an older one).
const readyRounds = 6

// readyVisit is how many hosts a round visits for n wanted jobs: each host
// that is truly ready gives at least one.
func readyVisit(n int) int { return n + 4 }

// readyEntry is one document of ready_hosts.
type readyEntry struct {
	Host    string    `bson:"_id"`
	ReadyAt time.Time `bson:"readyAt"`
	Seq     int64     `bson:"seq"`
}

// markReady lowers the ready entry of each host of earliest to at most its
// time, creating it where there is none. The hosts of one time (a fan-out's
// jobs share theirs) take one updateMany; only hosts it did not find are
// upserted one by one, in one unordered bulkWrite. Two first marks of one
// host may race on the upsert's insert; the loser's duplicate key is sent
// again, and then finds the document. A mark undone by a conflict is sent
// again whole: $min and $inc need no exactly-once (any change of seq
// fences a lease, see Ready hosts).
func (s *JobStore) markReady(ctx context.Context, earliest map[string]time.Time) error {
	byTime := make(map[time.Time][]string)
	for h, at := range earliest {
		at = at.UTC()
		byTime[at] = append(byTime[at], h)
	}
	times := slices.SortedFunc(maps.Keys(byTime), time.Time.Compare)
	for _, at := range times {
		hosts := byTime[at]
		slices.Sort(hosts) // a stable write order: two marking writers wait, not deadlock
		if err := s.markAt(ctx, at, hosts); err != nil {
			return fmt.Errorf("mark ready hosts: %w", interpretError(err, nil))
		}
	}
	return nil
}

// markAt is markReady for hosts of one time.
func (s *JobStore) markAt(ctx context.Context, at time.Time, hosts []string) error {
	update := bson.D{
		{Key: "$min", Value: bson.D{{Key: "readyAt", Value: at}}},
		{Key: "$inc", Value: bson.D{{Key: "seq", Value: int64(1)}}},
	}
	missing := hosts
	if len(hosts) > 1 {
		res, err := updateMany(ctx, s.ready, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: hosts}}}}, update)
		if err != nil {
			return err
		}
		if res.MatchedCount == int64(len(hosts)) {
			return nil
		}
		have, err := findAll(ctx, s.ready, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: hosts}}}}, "mark ready hosts",
			func(e readyEntry) string { return e.Host }, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			return err
		}
		found := make(map[string]bool, len(have))
		for _, h := range have {
			found[h] = true
		}
		missing = slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return found[h] })
	}
	models := make([]mongodrv.WriteModel, len(missing))
	for i, h := range missing {
		models[i] = mongodrv.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: h}}).SetUpdate(update).SetUpsert(true)
	}
	for try := 0; len(models) > 0; try++ {
		_, err := s.ready.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err == nil {
			return nil
		}
		wes, ok := writeErrors(err)
		if !ok || try == conflictRetries {
			return err
		}
		again := make([]mongodrv.WriteModel, 0, len(wes))
		for _, we := range wes {
			if !duplicateKey(we) && !concurrentConflict(we.Code) {
				return err
			}
			again = append(again, models[we.Index])
		}
		models = again
	}
	return nil
}

// earliestOf is the oldest runAt of jobs per host.
func earliestOf(jobs []domain.Job) map[string]time.Time {
	out := make(map[string]time.Time)
	for _, j := range jobs {
		if t, ok := out[j.Host]; !ok || j.RunAt.Before(t) {
			out[j.Host] = j.RunAt
		}
	}
	return out
}

// leaseReady is LeaseBatch with a per-host cap, from the ready hosts:
//
//  1. read the oldest due entries of ready_hosts that are not skipped,
//     visited, or at their cap when the previous lease of this store looked
//     (cappedHosts), one more than the round visits;
//  2. by single-batch finds side by side (queuedOfHosts), per visited
//     host its oldest queued jobs (jobs_queued_host: one more than the
//     cap, due or not), and, in the first round, every leased job's host
//     and slot (jobs_lease; as many
//     as there are slots taken, whatever the backlog): which hosts are at
//     their cap now and which slots each holds;
//  3. plan the oldest of all jobs read within each host's free slots; when
//     a planned job is younger than the next unvisited entry, or stale
//     entries or a host freed since the hint left the plan short, visit
//     more hosts (at most readyRounds);
//  4. stamp and read back as the runAt lease does (stampLeases);
//  5. move each visited entry forward to the oldest job the lease read and
//     did not take, fenced by the seq read in step 1 (see Ready hosts).
//
// A planned job another leaser took first (its job or its slot) is passed
// over; steps 1–5 then run again for what is missing, at most leaseRounds
// times, as the runAt lease does: a lease that lost every job it planned
// to a racing one must not come back empty while others are leasable.
func (s *JobStore) leaseReady(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if !s.repaired.Load() {
		// Once per process: the jobs queued before this version kept no
		// entries (migration 018 adds the collection empty).
		if err := s.repairReady(ctx); err != nil {
			return nil, fmt.Errorf("lease: %w", err)
		}
		s.repaired.Store(true)
	}
	var out []domain.Job
	for round := 0; round < leaseRounds && len(out) < req.Limit; round++ {
		rest := req
		rest.Limit = req.Limit - len(out)
		got, planned, err := s.leaseReadyOnce(ctx, rest)
		out = append(out, got...)
		if err != nil || len(got) == planned {
			return out, err
		}
	}
	return out, nil
}

// leaseReadyOnce is steps 1–5 of leaseReady; the int is how many jobs it
// tried to stamp.
func (s *JobStore) leaseReadyOnce(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, int, error) {
	limit := req.Limit
	now := req.Now.UTC()
	hint := s.capped.get()
	exclude := append(slices.Clone(req.SkipHosts), hint...)
	var (
		held    map[string]*hostSlots // nil until step 2 read it
		freed   bool                  // a hinted host is below its cap now
		visited []readyEntry
		seen    = map[string][]candidate{} // per visited host, the jobs step 2 read
		cands   []candidate
		plan    []planned
	)
	for round := 0; round < readyRounds; round++ {
		visit := readyVisit(limit - len(plan))
		entries, err := s.readyEntries(ctx, now, exclude, visit+1)
		if err != nil {
			return nil, 0, err
		}
		next := neverReady // readyAt of the first entry not visited
		if len(entries) > visit {
			next = entries[visit].ReadyAt
			entries = entries[:visit]
		}
		if len(entries) == 0 && held != nil {
			break
		}
		read, leased, err := s.queuedOfHosts(ctx, entries, req.PerHost, held == nil)
		if err != nil {
			return nil, 0, err
		}
		if held == nil {
			held = leased
			var capped []string
			for h, hs := range held {
				if hs.leased >= req.PerHost {
					capped = append(capped, h)
				}
			}
			s.capped.set(capped)
			exclude = append(slices.Clone(req.SkipHosts), capped...)
			for _, e := range visited {
				exclude = append(exclude, e.Host)
			}
			freed = slices.ContainsFunc(hint, func(h string) bool { return !slices.Contains(capped, h) })
		}
		for _, e := range entries {
			visited = append(visited, e)
			exclude = append(exclude, e.Host)
			seen[e.Host] = read[e.Host]
			for _, c := range read[e.Host] {
				if !c.RunAt.After(now) {
					cands = append(cands, c)
				}
			}
		}
		slices.SortFunc(cands, func(a, b candidate) int {
			return cmp.Or(a.RunAt.Compare(b.RunAt), strings.Compare(a.ID, b.ID))
		})
		plan, _ = planLease(cands, cloneHeld(held, cands), req.PerHost, limit)
		if len(plan) == limit && !plan[len(plan)-1].runAt.After(next) {
			break // no unvisited host could give an older job
		}
		if next.After(now) && !(freed && round == 0) {
			break // no unvisited host is due
		}
	}
	got, err := s.stampLeases(ctx, req, plan)
	if err == nil {
		// Best effort: an entry left early costs the next lease a visit.
		s.advanceReady(ctx, visited, seen, got)
	}
	return got, len(plan), err
}

// cappedHosts is the hosts at their cap as the last capped lease of a
// store found them: the next lease passes over their entries without
// reading them. A host freed since is visited in that lease's second
// round; one capped since is read and passed over.
type cappedHosts struct {
	mu    sync.Mutex
	hosts []string
}

func (c *cappedHosts) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.hosts)
}

func (c *cappedHosts) set(hosts []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hosts = hosts
}

// cloneHeld gives planLease a fresh count of the slots per host of cands
// (it takes slots as it plans), each host present.
func cloneHeld(held map[string]*hostSlots, cands []candidate) map[string]*hostSlots {
	out := make(map[string]*hostSlots, len(cands))
	for _, c := range cands {
		if out[c.Host] != nil {
			continue
		}
		hs := &hostSlots{used: map[int]bool{}}
		if h := held[c.Host]; h != nil {
			hs.leased = h.leased
			for k := range h.used {
				hs.used[k] = true
			}
		}
		out[c.Host] = hs
	}
	return out
}

// readyEntries is step 1 of leaseReady, in one batch (singleBatch: a
// negative limit; queuedOfHosts says why).
func (s *JobStore) readyEntries(ctx context.Context, now time.Time, exclude []string, n int) ([]readyEntry, error) {
	filter := bson.D{{Key: "readyAt", Value: bson.D{{Key: "$lte", Value: now}}}}
	if len(exclude) > 0 {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$nin", Value: exclude}}})
	}
	return findAll(ctx, s.ready, filter, "lease: ready hosts", func(e readyEntry) readyEntry { return e },
		options.Find().
			SetSort(bson.D{{Key: "readyAt", Value: 1}, {Key: "_id", Value: 1}}).
			SetLimit(-int64(n)).
			SetBatchSize(int32(n)).
			SetHint(idxReadyHostsReadyAt))
}

// queuedOfHosts is step 2 of leaseReady, one find per host and one for
// the leased jobs, side by side: each host's oldest queued jobs, perHost+1
// of them in runAt order (jobs_queued_host; among one host's jobs due at
// the same instant, the index's order); and, with leased, every leased
// job's host and slot (jobs_lease).
//
// Every find asks for one batch (singleBatch). DocumentDB (FerretDB v2)
// runs a query whose cursor might outlive its first batch — a sort, a
// limit, a $unionWith — as a persistent cursor holding its PostgreSQL
// connection, which FerretDB then takes out of its pool: such a query
// costs a new connection, 45–50 ms on this machine, where a single batch
// takes under a millisecond.
func (s *JobStore) queuedOfHosts(ctx context.Context, entries []readyEntry, perHost int, leased bool) (map[string][]candidate, map[string]*hostSlots, error) {
	parts := make([][]branchDoc, len(entries)+1)
	err := sideBySide(len(entries)+1, func(i int) (err error) {
		switch {
		case i > 0:
			parts[i], err = s.queuedOfHost(ctx, entries[i-1].Host, perHost+1)
		case leased:
			parts[0], err = s.leasedSlots(ctx)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	held := make(map[string]*hostSlots)
	out := make(map[string][]candidate, len(entries))
	for _, d := range slices.Concat(parts...) {
		if d.State != string(domain.JobLeased) {
			out[d.Host] = append(out[d.Host], candidate{ID: d.ID, Host: d.Host, RunAt: d.RunAt})
			continue
		}
		h := held[d.Host]
		if h == nil {
			h = &hostSlots{used: map[int]bool{}}
			held[d.Host] = h
		}
		h.leased++
		if k, ok := slotIndex(d.Host, d.Slot); ok {
			h.used[k] = true
		}
	}
	return out, held, nil
}

// queuedOfHost is one host's n oldest queued jobs, read from the index
// whose range holds that host's queued jobs only. The find names it (a
// hint): left to choose, DocumentDB (FerretDB v2) reads jobs_lease for the
// host and state, every queued job's entry (21 ms at 100,000 queued, where
// the hinted find takes 2). Where jobs_queued_host is missing (a server
// without partial indexes has its stand-in, jobs_host_state), the server
// answers that the hint names no index, and this store names the stand-in
// from then on.
func (s *JobStore) queuedOfHost(ctx context.Context, host string, n int) ([]branchDoc, error) {
	for {
		standIn := s.hostStandIn.Load()
		hint := idxJobsQueuedHost
		if standIn {
			hint = idxJobsHostState
		}
		docs, err := findAll(ctx, s.jobs,
			bson.D{{Key: "host", Value: host}, {Key: "state", Value: string(domain.JobQueued)}},
			"lease: a ready host's jobs", func(d branchDoc) branchDoc { return d },
			options.Find().SetHint(hint).SetSort(bson.D{{Key: "runAt", Value: 1}}).SetLimit(-int64(n)).
				SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "host", Value: 1}, {Key: "runAt", Value: 1}, {Key: "state", Value: 1}}))
		if err == nil || standIn || !hintMissing(err) {
			return docs, err
		}
		s.hostStandIn.Store(true)
	}
}

// hintMissing reports whether err is a server refusing a find whose hint
// names no index of the collection (BadValue, as MongoDB and FerretDB v2
// answer).
func hintMissing(err error) bool {
	var se mongodrv.ServerError
	return errors.As(err, &se) && se.HasErrorCodeWithMessage(codeBadValue, "hint")
}

// leasedBatch is how many leased jobs leasedSlots reads in its one batch;
// more are read again through a cursor. Leased jobs number the slots
// taken across every process, far fewer.
const leasedBatch = 10_000

// leasedSlots is every leased job's host and slot, in one batch where
// they fit (queuedOfHosts says why). The hint keeps a server from reading
// every job for {state: leased}.
func (s *JobStore) leasedSlots(ctx context.Context) ([]branchDoc, error) {
	filter := bson.D{{Key: "state", Value: string(domain.JobLeased)}}
	proj := bson.D{{Key: "_id", Value: 1}, {Key: "host", Value: 1}, {Key: "slot", Value: 1}, {Key: "state", Value: 1}}
	id := func(d branchDoc) branchDoc { return d }
	docs, err := findAll(ctx, s.jobs, filter, "lease: leased jobs", id,
		options.Find().SetHint(idxJobsLease).SetProjection(proj).SetLimit(-leasedBatch).SetBatchSize(leasedBatch))
	if err != nil || len(docs) < leasedBatch {
		return docs, err
	}
	return findAll(ctx, s.jobs, filter, "lease: leased jobs", id, options.Find().SetHint(idxJobsLease).SetProjection(proj))
}

// branchDoc is a job as queuedOfHosts' finds project it, and the repair's.
type branchDoc struct {
	ID    string    `bson:"_id"`
	Host  string    `bson:"host"`
	RunAt time.Time `bson:"runAt"`
	Slot  string    `bson:"slot"`
	State string    `bson:"state"`
}

// Codes of a server refusing a pipeline stage or operator it does not
// have, beside NotImplemented (238, as FerretDB v1 answers $group's
// accumulators): MongoDB's own for an unknown stage or operator.
const (
	codeUnrecognizedStage      = 40324
	codeInvalidPipelineOperand = 168
)

// stageRefused reports whether err is the server refusing a stage or
// operator of a pipeline, a refusal that read nothing.
func stageRefused(err error) bool {
	var se mongodrv.ServerError
	if !errors.As(err, &se) {
		return false
	}
	return se.HasErrorCode(codeNotImplemented) || se.HasErrorCode(codeUnrecognizedStage) || se.HasErrorCode(codeInvalidPipelineOperand)
}

// aggregateAll runs pipe on coll and decodes every document.
func aggregateAll[D any](ctx context.Context, coll *mongodrv.Collection, pipe mongodrv.Pipeline, what string, opts ...*options.AggregateOptions) ([]D, error) {
	cur, err := coll.Aggregate(ctx, pipe, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err, nil))
	}
	var docs []D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err, nil))
	}
	return docs, nil
}

// advanceReady is step 5 of leaseReady: each visited entry moves forward to
// the oldest job the lease read of its host and did not win, or to
// neverReady when the lease read all the host's queued jobs and won them,
// if its seq is unchanged. Failures are left: an entry that stays early is
// corrected by the next lease that visits it.
func (s *JobStore) advanceReady(ctx context.Context, visited []readyEntry, seen map[string][]candidate, won []domain.Job) {
	took := make(map[string]bool, len(won))
	for _, j := range won {
		took[j.ID] = true
	}
	var models []mongodrv.WriteModel
	for _, e := range visited {
		to := neverReady
		for _, c := range seen[e.Host] {
			if !took[c.ID] && c.RunAt.Before(to) {
				to = c.RunAt.UTC()
			}
		}
		if !to.After(e.ReadyAt) {
			continue
		}
		models = append(models, mongodrv.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: e.Host}, {Key: "seq", Value: e.Seq}}).
			SetUpdate(bson.D{{Key: "$max", Value: bson.D{{Key: "readyAt", Value: to}}}}))
	}
	if len(models) > 0 {
		_, _ = s.ready.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	}
}

// repairReady marks every host with queued jobs at its oldest queued runAt
// where its entry is later or missing: what a crash between a job's write
// and its mark left behind (see Ready hosts). It reads every queued job's
// host and runAt, so it runs beside the reaper, not in the lease.
func (s *JobStore) repairReady(ctx context.Context) error {
	type minDoc struct {
		Host    string    `bson:"_id"`
		ReadyAt time.Time `bson:"readyAt"`
	}
	var oldest []minDoc
	var err error
	if !s.noGroup.Load() {
		oldest, err = aggregateAll[minDoc](ctx, s.jobs, mongodrv.Pipeline{
			{{Key: "$match", Value: bson.D{{Key: "state", Value: string(domain.JobQueued)}}}},
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$host"}, {Key: "readyAt", Value: bson.D{{Key: "$min", Value: "$runAt"}}}}}},
		}, "repair ready hosts")
		if stageRefused(err) {
			s.noGroup.Store(true)
		} else if err != nil {
			return err
		}
	}
	if s.noGroup.Load() {
		// The server has no $group accumulators: every queued job's host
		// and runAt, and the oldest per host here.
		queued, err := findAll(ctx, s.jobs, bson.D{{Key: "state", Value: string(domain.JobQueued)}}, "repair ready hosts",
			func(d branchDoc) domain.Job { return domain.Job{Host: d.Host, RunAt: d.RunAt} },
			options.Find().SetProjection(bson.D{{Key: "host", Value: 1}, {Key: "runAt", Value: 1}}))
		if err != nil {
			return err
		}
		oldest = oldest[:0]
		for h, at := range earliestOf(queued) {
			oldest = append(oldest, minDoc{Host: h, ReadyAt: at})
		}
	}
	if len(oldest) == 0 {
		return nil
	}
	entries, err := findAll(ctx, s.ready, bson.D{}, "repair ready hosts", func(e readyEntry) readyEntry { return e })
	if err != nil {
		return err
	}
	have := make(map[string]time.Time, len(entries))
	for _, e := range entries {
		have[e.Host] = e.ReadyAt
	}
	late := make(map[string]time.Time)
	for _, o := range oldest {
		if at, ok := have[o.Host]; !ok || at.After(o.ReadyAt) {
			late[o.Host] = o.ReadyAt
		}
	}
	return s.markReady(ctx, late)
}
