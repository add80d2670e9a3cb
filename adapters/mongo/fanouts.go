package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.FanOutStore = (*FanOutStore)(nil)

// collFanOuts keeps the durable fan-out records, the activity id as _id.
const collFanOuts = "fan_outs"

// Index names of fan_outs: Claim's (unfinished, oldest first) and the
// operator's listing (newest first).
const (
	idxFanOutsClaim   = "fan_outs_claim"
	idxFanOutsCreated = "fan_outs_created"
)

// FanOutStore keeps fan-out records in fan_outs. Claim and Advance are
// single FindOneAndUpdate calls, atomic per document.
type FanOutStore struct{ fans *mongodrv.Collection }

// NewFanOutStore returns the store of db.
func NewFanOutStore(db *mongodrv.Database) *FanOutStore {
	return &FanOutStore{fans: collection(db, collFanOuts)}
}

type fanOutDoc struct {
	ID         string    `bson:"_id"`
	ActorURI   string    `bson:"actorUri"`
	SenderID   string    `bson:"senderId"`
	KeyID      string    `bson:"keyId"`
	Payload    []byte    `bson:"payload,omitempty"`
	BodyID     string    `bson:"bodyId"`
	Cursor     string    `bson:"cursor"`
	Total      int       `bson:"total"`
	Queued     int       `bson:"queued"`
	Done       bool      `bson:"done"`
	Owner      string    `bson:"owner"`
	LeaseUntil time.Time `bson:"leaseUntil"`
	CreatedAt  time.Time `bson:"createdAt"`
	UpdatedAt  time.Time `bson:"updatedAt"`
}

func (d fanOutDoc) fanOut() domain.FanOut {
	f := domain.FanOut{ID: d.ID, ActorURI: d.ActorURI, SenderID: d.SenderID, KeyID: d.KeyID, Payload: d.Payload,
		BodyID: d.BodyID, Cursor: d.Cursor, Total: d.Total, Queued: d.Queued, Done: d.Done, Owner: d.Owner,
		LeaseUntil: d.LeaseUntil.UTC(), CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
	if f.LeaseUntil.IsZero() {
		f.LeaseUntil = time.Time{} // no lease: the zero time, not its UTC location
	}
	return f
}

// Create implements ports.FanOutStore.
func (s *FanOutStore) Create(ctx context.Context, f domain.FanOut) error {
	err := insertOne(ctx, s.fans, fanOutDoc{ID: f.ID, ActorURI: f.ActorURI, SenderID: f.SenderID, KeyID: f.KeyID,
		Payload: f.Payload, BodyID: f.BodyID, Cursor: f.Cursor, Total: f.Total, Queued: f.Queued, Done: f.Done,
		Owner: f.Owner, LeaseUntil: f.LeaseUntil.UTC(), CreatedAt: f.CreatedAt.UTC(), UpdatedAt: f.UpdatedAt.UTC()})
	if err != nil {
		return fmt.Errorf("create fan-out %s: %w", f.ID, interpretError(err, nil))
	}
	return nil
}

var withoutPayload = bson.D{{Key: "payload", Value: 0}}

// Advance implements ports.FanOutStore.
func (s *FanOutStore) Advance(ctx context.Context, p ports.FanOutProgress) (domain.FanOut, error) {
	set := bson.D{{Key: "done", Value: p.Done}, {Key: "updatedAt", Value: p.Now.UTC()}, {Key: "leaseUntil", Value: p.Until.UTC()}}
	if p.Done {
		set = bson.D{{Key: "done", Value: true}, {Key: "updatedAt", Value: p.Now.UTC()},
			{Key: "leaseUntil", Value: time.Time{}}, {Key: "owner", Value: ""}}
	}
	var d fanOutDoc
	err := s.fans.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: p.ID}, {Key: "owner", Value: p.Owner}, {Key: "done", Value: false}},
		bson.D{{Key: "$set", Value: set}, {Key: "$max", Value: bson.D{{Key: "cursor", Value: p.Cursor}}},
			{Key: "$inc", Value: bson.D{{Key: "queued", Value: p.Queued}}}},
		// No projection: FerretDB v1 does not implement findAndModify's.
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if err == nil {
		return d.fanOut(), nil
	}
	if !errors.Is(err, mongodrv.ErrNoDocuments) {
		return domain.FanOut{}, fmt.Errorf("advance fan-out %s: %w", p.ID, interpretError(err, nil))
	}
	n, err := s.fans.CountDocuments(ctx, bson.D{{Key: "_id", Value: p.ID}})
	if err != nil {
		return domain.FanOut{}, fmt.Errorf("advance fan-out %s: %w", p.ID, interpretError(err, nil))
	}
	if n == 0 {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrNotFound)
	}
	return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrLeaseLost)
}

// Claim implements ports.FanOutStore: one FindOneAndUpdate on
// fan_outs_claim, oldest first.
func (s *FanOutStore) Claim(ctx context.Context, owner string, now, until time.Time) (domain.FanOut, error) {
	var d fanOutDoc
	err := s.fans.FindOneAndUpdate(ctx,
		bson.D{{Key: "done", Value: false}, {Key: "leaseUntil", Value: bson.D{{Key: "$lte", Value: now.UTC()}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "owner", Value: owner}, {Key: "leaseUntil", Value: until.UTC()}, {Key: "updatedAt", Value: now.UTC()}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After).
			SetSort(bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}})).Decode(&d)
	if err != nil {
		return domain.FanOut{}, fmt.Errorf("claim fan-out: %w", interpretError(err, nil))
	}
	return d.fanOut(), nil
}

// Get implements ports.FanOutStore.
func (s *FanOutStore) Get(ctx context.Context, id string) (domain.FanOut, error) {
	var d fanOutDoc
	if err := s.fans.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", id, interpretError(err, nil))
	}
	return d.fanOut(), nil
}

// List implements ports.FanOutStore.
func (s *FanOutStore) List(ctx context.Context, limit int) ([]domain.FanOut, error) {
	opts := options.Find().SetSort(bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}}).SetProjection(withoutPayload)
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	cur, err := s.fans.Find(ctx, bson.D{}, opts)
	if err != nil {
		return nil, fmt.Errorf("list fan-outs: %w", interpretError(err, nil))
	}
	var docs []fanOutDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("list fan-outs: %w", interpretError(err, nil))
	}
	out := make([]domain.FanOut, len(docs))
	for i, d := range docs {
		out[i] = d.fanOut()
	}
	return out, nil
}

// Purge implements ports.FanOutStore.
func (s *FanOutStore) Purge(ctx context.Context, before time.Time) (int, error) {
	res, err := s.fans.DeleteMany(ctx, bson.D{{Key: "done", Value: true}, {Key: "updatedAt", Value: bson.D{{Key: "$lt", Value: before.UTC()}}}})
	if err != nil {
		return 0, fmt.Errorf("purge fan-outs: %w", interpretError(err, nil))
	}
	return int(res.DeletedCount), nil
}
