package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The batch methods of ports.JobStore on MongoDB, in the simplest form that
// keeps the port's guarantees, built on the single-job operations of
// jobs.go. They cost round trips per job where the PostgreSQL adapter needs
// one statement per batch; docs/storage.md says what a batch lease on
// MongoDB proper would need (an updateMany that stamps a lease token on a
// set of candidates, read back by that token, and the host slots counted in
// the job documents themselves).

// collJobHostLocks holds one document per host that a capped lease is
// counting right now (_id = host, until, token): the lock that makes "count
// the host's leased jobs, then lease up to the cap" one step for every
// process. It is taken by an upsert whose filter wants the lock free, so a
// held lock turns the upsert into a duplicate _id, which MongoDB arbitrates.
const collJobHostLocks = "job_host_locks"

// hostLockFor bounds how long a crashed leaser can keep a host's lock.
const hostLockFor = 30 * time.Second

// LeaseBatch implements ports.JobStore. Without a cap it is the single
// FindOneAndUpdate lease repeated. With one, it takes the oldest runnable
// job's host, locks the host (another process counting it now makes this
// call pass the host over, as SKIP LOCKED does), counts the host's leased
// jobs, leases up to the cap of them, unlocks, and goes on with the next
// host. A job leaves leased only by its own document's update (settle,
// reap), so the count read under the lock is exact: every lease of the
// host was written, with majority write concern, by a lock holder before it
// unlocked.
func (s *JobStore) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	out, err := s.leaseBatch(ctx, req)
	if ferr := s.fillBodies(ctx, out); err == nil {
		err = ferr
	}
	return out, err
}

func (s *JobStore) leaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Token == "" {
		return nil, fmt.Errorf("%w: lease without a token", domain.ErrInvalidInput)
	}
	limit := max(req.Limit, 1)
	var out []domain.Job
	if req.PerHost <= 0 {
		for len(out) < limit {
			j, err := s.Lease(ctx, req)
			if errors.Is(err, domain.ErrNoJob) {
				break
			}
			if err != nil {
				return out, err
			}
			out = append(out, j)
		}
		return out, nil
	}
	passed := slices.Clone(req.SkipHosts)
	for len(out) < limit {
		filter := bson.D{
			{Key: "state", Value: string(domain.JobQueued)},
			{Key: "runAt", Value: bson.D{{Key: "$lte", Value: req.Now.UTC()}}},
		}
		if len(passed) > 0 {
			filter = append(filter, bson.E{Key: "host", Value: bson.D{{Key: "$nin", Value: passed}}})
		}
		var head jobDoc
		err := s.jobs.FindOne(ctx, filter, options.FindOne().
			SetSort(bson.D{{Key: "runAt", Value: 1}, {Key: "_id", Value: 1}}).
			SetHint(idxJobsLease)).Decode(&head)
		if errors.Is(err, mongodrv.ErrNoDocuments) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("lease: %w", interpretError(err, nil))
		}
		passed = append(passed, head.Host)
		got, err := s.leaseHost(ctx, req, head.Host, limit-len(out))
		out = append(out, got...)
		if err != nil {
			return out, err
		}
	}
	slices.SortFunc(out, func(a, b domain.Job) int {
		return cmp.Or(a.RunAt.Compare(b.RunAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// leaseHost leases up to want jobs of host within req.PerHost, under the
// host's lock; nothing if another leaser holds the lock.
func (s *JobStore) leaseHost(ctx context.Context, req ports.LeaseRequest, host string, want int) ([]domain.Job, error) {
	locks := collection(s.jobs.Database(), collJobHostLocks)
	_, err := locks.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: host}, {Key: "until", Value: bson.D{{Key: "$lt", Value: req.Now.UTC()}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "until", Value: req.Now.UTC().Add(hostLockFor)}, {Key: "token", Value: req.Token}}}},
		options.Update().SetUpsert(true))
	if mongodrv.IsDuplicateKeyError(err) {
		return nil, nil // counted by someone else right now
	}
	if err != nil {
		return nil, fmt.Errorf("lease: lock host %s: %w", host, interpretError(err, nil))
	}
	defer func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = locks.UpdateOne(c, bson.D{{Key: "_id", Value: host}, {Key: "token", Value: req.Token}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "until", Value: time.Unix(0, 0).UTC()}}}})
	}()
	n, err := s.jobs.CountDocuments(ctx, bson.D{{Key: "host", Value: host}, {Key: "state", Value: string(domain.JobLeased)}})
	if err != nil {
		return nil, fmt.Errorf("lease: count host %s: %w", host, interpretError(err, nil))
	}
	var out []domain.Job
	for room := min(want, req.PerHost-int(n)); len(out) < room; {
		d, err := s.findAndLease(ctx,
			bson.D{
				{Key: "state", Value: string(domain.JobQueued)},
				{Key: "runAt", Value: bson.D{{Key: "$lte", Value: req.Now.UTC()}}},
				{Key: "host", Value: host},
			},
			bson.D{{Key: "$set", Value: bson.D{
				{Key: "state", Value: string(domain.JobLeased)},
				{Key: "leaseToken", Value: req.Token},
				{Key: "leaseOwner", Value: req.Owner},
				{Key: "leaseUntil", Value: req.Until.UTC()},
			}}})
		if errors.Is(err, mongodrv.ErrNoDocuments) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("lease: %w", interpretError(err, nil))
		}
		out = append(out, d.job())
	}
	return out, nil
}

// Settle implements ports.JobStore with one fenced UpdateOne per
// settlement (held). A failure part way returns the error; the batch may be
// sent again, and what was applied comes back as lost.
func (s *JobStore) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ports.CheckSettlements(batch); err != nil {
		return nil, err
	}
	lost := make([]error, len(batch))
	for i, st := range batch {
		set := bson.D{{Key: "state", Value: string(st.State)}, {Key: "attempts", Value: st.Attempts}}
		unset := slices.Clone(unsetLease)
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
		err := s.held(ctx, st.ID, st.Token, bson.D{{Key: "$set", Value: set}, {Key: "$unset", Value: unset}})
		switch {
		case errors.Is(err, domain.ErrLeaseLost):
			lost[i] = err
		case err != nil:
			return nil, fmt.Errorf("settle: %w", err)
		}
	}
	return lost, nil
}
