package mongo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
)

// # Ready hosts
//
// A lease reads the hosts that are ready, not the queue (issue 36):
// job_hosts holds one document per host, {_id: host, readyAt, v}, whose
// readyAt is a lower bound of the runAt of the host's queued jobs (absent
// when it has none), indexed by job_hosts_ready (migration 012). The lease
// reads the hosts whose readyAt is due, then only their jobs, so the jobs
// of hosts held at their cap are never read (jobs_batch.go).
//
// No transaction keeps readyAt, so the order of the writes does:
//
//   - every write that makes a job queued, or due earlier, first writes the
//     job and then lowers its host's readyAt to the job's runAt ($min) and
//     increments v (lowerReady): an enqueue, a settlement that requeues, the
//     reaper, RetryDead, ResumeHost;
//   - a lease raises readyAt only with the v it read before it read the
//     host's jobs, in a conditional update ({_id, v}).
//
// So a raise computed from reads that missed a job queued meanwhile meets a
// v that job's lowering changed, and changes nothing; or it lands before
// that lowering, which then lowers what it wrote. A deferral and a
// suspension leave readyAt early, which the next lease to read the host
// corrects. A process dying between a job's write and its host's lowering
// leaves that host's readyAt too high: enqueueing the same batch again
// lowers it (Enqueue lowers for every job of a batch, stored or not), and
// every start repairs it (repairReadyHosts, under the migration lock).

// collJobHosts is the ready hosts' collection, idxJobHostsReady its index
// on readyAt (sparse: a host without queued jobs has no readyAt).
const (
	collJobHosts     = "job_hosts"
	idxJobHostsReady = "job_hosts_ready"
)

// readyHostsVersion is the schema version from which job_hosts is kept.
const readyHostsVersion = 12

// hostDoc is one host of job_hosts.
type hostDoc struct {
	Host    string    `bson:"_id"`
	ReadyAt time.Time `bson:"readyAt,omitempty"`
	V       int64     `bson:"v"`
}

// oldestQueued is, for each host of the queued jobs among jobs, the
// earliest runAt.
func oldestQueued(jobs []domain.Job) map[string]time.Time {
	out := map[string]time.Time{}
	for _, j := range jobs {
		if j.State != domain.JobQueued {
			continue
		}
		if t, ok := out[j.Host]; !ok || j.RunAt.Before(t) {
			out[j.Host] = j.RunAt
		}
	}
	return out
}

// lowerReady lowers each host's readyAt to its time in oldest, creating
// the host's document where it has none, in unordered bulkWrites of
// enqueueChunk hosts, in host order. Two upserts of one new host at the
// same instant can meet on _id (a server that does not retry such an
// upsert itself): the one that lost is sent again, and finds the document.
func lowerReady(ctx context.Context, hosts *mongodrv.Collection, oldest map[string]time.Time) error {
	names := make([]string, 0, len(oldest))
	for h := range oldest {
		names = append(names, h)
	}
	slices.Sort(names)
	for start := 0; start < len(names); start += enqueueChunk {
		chunk := names[start:min(start+enqueueChunk, len(names))]
		models := make([]mongodrv.WriteModel, len(chunk))
		for i, h := range chunk {
			models[i] = mongodrv.NewUpdateOneModel().
				SetFilter(bson.D{{Key: "_id", Value: h}}).
				SetUpdate(bson.D{
					{Key: "$min", Value: bson.D{{Key: "readyAt", Value: oldest[h].UTC()}}},
					{Key: "$inc", Value: bson.D{{Key: "v", Value: int64(1)}}},
				}).
				SetUpsert(true)
		}
		for try := 0; ; try++ {
			_, err := hosts.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
			if err == nil {
				break
			}
			wes, ok := writeErrors(err)
			if !ok || try == conflictRetries {
				return fmt.Errorf("ready hosts: %w", interpretError(err, nil))
			}
			again := make([]mongodrv.WriteModel, 0, len(wes))
			for _, we := range wes {
				if we.Code != 11000 && we.Code != 11001 && !concurrentConflict(we.Code) {
					return fmt.Errorf("ready hosts: %w", interpretError(err, nil))
				}
				again = append(again, models[we.Index])
			}
			models = again
		}
	}
	return nil
}

// lowerReadyOfJobs lowers the ready hosts of the jobs ids, which a write
// has just put in the queue at runAt[id], reading their hosts first.
func (s *JobStore) lowerReadyOfJobs(ctx context.Context, runAt map[string]time.Time) error {
	if len(runAt) == 0 {
		return nil
	}
	ids := make([]string, 0, len(runAt))
	for id := range runAt {
		ids = append(ids, id)
	}
	type hostOf struct {
		ID   string `bson:"_id"`
		Host string `bson:"host"`
	}
	docs, err := findAll(ctx, s.jobs, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, "ready hosts: read hosts",
		func(d hostOf) hostOf { return d }, options.Find().SetProjection(bson.D{{Key: "host", Value: 1}}))
	if err != nil {
		return err
	}
	oldest := map[string]time.Time{}
	for _, d := range docs {
		if t, ok := oldest[d.Host]; !ok || runAt[d.ID].Before(t) {
			oldest[d.Host] = runAt[d.ID]
		}
	}
	return lowerReady(ctx, s.hosts, oldest)
}

// readyHosts is the lease's first read: up to n hosts whose readyAt is due
// by now, oldest readyAt first, none of passed.
func (s *JobStore) readyHosts(ctx context.Context, now time.Time, passed []string, n int) ([]hostDoc, error) {
	filter := bson.D{{Key: "readyAt", Value: bson.D{{Key: "$lte", Value: now}}}}
	if len(passed) > 0 {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$nin", Value: passed}}})
	}
	return findAll(ctx, s.hosts, filter, "lease: ready hosts", func(d hostDoc) hostDoc { return d },
		options.Find().
			SetSort(bson.D{{Key: "readyAt", Value: 1}}).
			SetLimit(int64(n)).
			SetBatchSize(int32(n)).
			SetHint(idxJobHostsReady))
}

// raiseReady is the lease's last write: each host of open, whose queued
// jobs the lease read as cands (the oldest window of them, all of them
// when the read was not full), gets the runAt of its oldest job the lease
// did not win as its readyAt: of the jobs read, or, when the host has none
// left among them, the last job read (a lower bound: the host's other jobs
// come after it) if the read was full. A host that looks empty is read
// again, on its own (queuedMin), before its readyAt goes: a host left
// without readyAt is never read by a lease again until a write lowers it,
// so that is decided on a read of the host alone. Conditional on the v the
// lease read (see Ready hosts); a raise that fails leaves readyAt early,
// which costs a later lease one look, so its failure is not the lease's.
func (s *JobStore) raiseReady(ctx context.Context, open []hostDoc, cands []candidate, won []domain.Job, full bool) {
	taken := make(map[string]bool, len(won))
	for _, j := range won {
		taken[j.ID] = true
	}
	next := map[string]time.Time{}
	for _, c := range cands {
		if _, ok := next[c.Host]; !ok && !taken[c.ID] {
			next[c.Host] = c.RunAt
		}
	}
	var empty []string
	for _, h := range open {
		if _, ok := next[h.Host]; !ok && !full {
			empty = append(empty, h.Host)
		}
	}
	if len(empty) > 0 {
		left, err := s.queuedMin(ctx, empty)
		if err != nil {
			return // left early: see above
		}
		for h, at := range left {
			next[h] = at
		}
	}
	var models []mongodrv.WriteModel
	for _, h := range open {
		at, ok := next[h.Host]
		if !ok && full && len(cands) > 0 {
			at, ok = cands[len(cands)-1].RunAt, true
		}
		if ok && at.Equal(h.ReadyAt) {
			continue
		}
		update := bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: int64(1)}}}}
		if ok {
			update = append(update, bson.E{Key: "$set", Value: bson.D{{Key: "readyAt", Value: at.UTC()}}})
		} else {
			update = append(update, bson.E{Key: "$unset", Value: bson.D{{Key: "readyAt", Value: ""}}})
		}
		models = append(models, mongodrv.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: h.Host}, {Key: "v", Value: h.V}}).
			SetUpdate(update))
	}
	if len(models) > 0 {
		_, _ = s.hosts.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	}
}

// queuedMin is, for each of hosts with queued jobs, its oldest runAt:
// one aggregate over jobs_host_state's queued ranges of those hosts.
func (s *JobStore) queuedMin(ctx context.Context, hosts []string) (map[string]time.Time, error) {
	return minRunAt(ctx, s.jobs, bson.D{
		{Key: "host", Value: bson.D{{Key: "$in", Value: hosts}}},
		{Key: "state", Value: string(domain.JobQueued)},
	})
}

// minRunAt groups the jobs matching match by host, each with its oldest
// runAt.
func minRunAt(ctx context.Context, jobs *mongodrv.Collection, match bson.D) (map[string]time.Time, error) {
	cur, err := jobs.Aggregate(ctx, mongodrv.Pipeline{
		{{Key: "$match", Value: match}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$host"}, {Key: "readyAt", Value: bson.D{{Key: "$min", Value: "$runAt"}}}}}},
	})
	if err != nil {
		return nil, fmt.Errorf("ready hosts: %w", interpretError(err, nil))
	}
	var rows []struct {
		Host    string    `bson:"_id"`
		ReadyAt time.Time `bson:"readyAt"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("ready hosts: %w", interpretError(err, nil))
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.Host] = r.ReadyAt
	}
	return out, nil
}

// repairReadyHosts is migration 012's Go part (see migrations/mongo): it
// lowers every host's readyAt to its oldest queued job, and returns how
// many hosts have queued jobs.
func repairReadyHosts(ctx context.Context, db *mongodrv.Database) (int, error) {
	oldest, err := minRunAt(ctx, collection(db, collJobs), bson.D{{Key: "state", Value: string(domain.JobQueued)}})
	if err != nil {
		return 0, err
	}
	return len(oldest), lowerReady(ctx, collection(db, collJobHosts), oldest)
}
