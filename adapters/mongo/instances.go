package mongo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.InstanceStore = (*InstanceStore)(nil)

// maxUpdateRounds bounds InstanceStore.Update's optimistic retries. Each
// round that loses had another Update win, so a host would need this many
// simultaneous writers to run out; 32 concurrent failures of one host take
// at most 32 rounds.
const maxUpdateRounds = 1000

// InstanceStore keeps circuit breaker states in remote_instances, one
// document per host (_id = host), updated with optimistic concurrency on a
// version field.
type InstanceStore struct {
	hosts *mongodrv.Collection
}

// NewInstanceStore returns the store of db.
func NewInstanceStore(db *mongodrv.Database) *InstanceStore {
	return &InstanceStore{hosts: collection(db, collRemoteInstances)}
}

type instanceDoc struct {
	ID                  string    `bson:"_id"`
	Host                string    `bson:"host"`
	ConsecutiveFailures int       `bson:"consecutiveFailures"`
	QuarantineLevel     int       `bson:"quarantineLevel"`
	QuarantinedUntil    time.Time `bson:"quarantinedUntil,omitempty"`
	LastSuccessAt       time.Time `bson:"lastSuccessAt,omitempty"`
	LastFailureAt       time.Time `bson:"lastFailureAt,omitempty"`
	LastError           string    `bson:"lastError,omitempty"`
	Version             int64     `bson:"version"`
}

func (d instanceDoc) instance() domain.RemoteInstance {
	return domain.RemoteInstance{
		Host: d.Host, ConsecutiveFailures: d.ConsecutiveFailures, QuarantineLevel: d.QuarantineLevel,
		QuarantinedUntil: d.QuarantinedUntil, LastSuccessAt: d.LastSuccessAt, LastFailureAt: d.LastFailureAt,
		LastError: d.LastError,
	}
}

func toInstanceDoc(r domain.RemoteInstance, version int64) instanceDoc {
	return instanceDoc{
		ID: r.Host, Host: r.Host, ConsecutiveFailures: r.ConsecutiveFailures, QuarantineLevel: r.QuarantineLevel,
		QuarantinedUntil: utc(r.QuarantinedUntil), LastSuccessAt: utc(r.LastSuccessAt), LastFailureAt: utc(r.LastFailureAt),
		LastError: r.LastError, Version: version,
	}
}

// Get implements ports.InstanceStore.
func (s *InstanceStore) Get(ctx context.Context, host string) (domain.RemoteInstance, error) {
	var d instanceDoc
	if err := s.hosts.FindOne(ctx, bson.D{{Key: "_id", Value: strings.ToLower(host)}}).Decode(&d); err != nil {
		return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w", host, interpretError(err, nil))
	}
	return d.instance(), nil
}

// Update implements ports.InstanceStore: read the document and its version,
// apply fn, then write it back only if the version is still the one read
// (a replace filtered by version, or an insert for a host never stored).
// A lost race — the filter matched nothing, or the insert hit the _id of a
// concurrent insert — reads again and calls fn again, so every concurrent
// failure is counted once.
func (s *InstanceStore) Update(ctx context.Context, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error) {
	host, err := ports.InstanceHost(host)
	if err != nil {
		return domain.RemoteInstance{}, err
	}
	for round := 0; round < maxUpdateRounds; round++ {
		if err := ctx.Err(); err != nil {
			return domain.RemoteInstance{}, err
		}
		var d instanceDoc
		err := s.hosts.FindOne(ctx, bson.D{{Key: "_id", Value: host}}).Decode(&d)
		found := err == nil
		if err != nil && !errors.Is(err, mongodrv.ErrNoDocuments) {
			return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w", host, interpretError(err, nil))
		}
		r := domain.NewRemoteInstance(host)
		if found {
			r = d.instance()
		}
		fn(&r)
		r.Host = host
		next := toInstanceDoc(r, d.Version+1)
		if !found {
			err = insertOne(ctx, s.hosts, next)
			if mongodrv.IsDuplicateKeyError(err) {
				continue // another Update created it first
			}
			if err != nil {
				return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w", host, interpretError(err, nil))
			}
			return r, nil
		}
		// A document written without a version (by hand, or by an older
		// tool) is version 0: match it by the field's absence too.
		var version any = d.Version
		if d.Version == 0 {
			version = bson.D{{Key: "$in", Value: bson.A{int64(0), nil}}}
		}
		res, err := s.hosts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: host}, {Key: "version", Value: version}}, next)
		if err != nil {
			return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w", host, interpretError(err, nil))
		}
		if res.MatchedCount == 1 {
			return r, nil
		}
	}
	return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w: %d conflicting updates in a row", host, domain.ErrUnavailable, maxUpdateRounds)
}

// List implements ports.InstanceStore.
func (s *InstanceStore) List(ctx context.Context, quarantinedAt time.Time) ([]domain.RemoteInstance, error) {
	filter := bson.D{}
	if !quarantinedAt.IsZero() {
		filter = append(filter, bson.E{Key: "quarantinedUntil", Value: bson.D{{Key: "$gt", Value: quarantinedAt.UTC()}}})
	}
	return findAll(ctx, s.hosts, filter, "list instances", instanceDoc.instance, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
}
