package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.NameRegistry = (*NameRegistry)(nil)

// NameRegistry is the username space in reserved_names. The document id is
// the name and reserved_names_name is unique too, so whichever index a
// duplicate hits, two simultaneous reservations of one name have exactly
// one winner, arbitrated by the server.
type NameRegistry struct {
	names *mongodrv.Collection
}

// NewNameRegistry returns the registry of db.
func NewNameRegistry(db *mongodrv.Database) *NameRegistry {
	return &NameRegistry{names: collection(db, collReservedNames)}
}

type reservedDoc struct {
	ID        string    `bson:"_id"`
	Name      string    `bson:"name"`
	Kind      string    `bson:"kind"`
	OwnerID   string    `bson:"ownerId"` // "" for system names, never absent: Release matches on it
	CreatedAt time.Time `bson:"createdAt,omitempty"`
	// DeletedAt is absent while the actor holding the name lives.
	DeletedAt time.Time `bson:"deletedAt,omitempty"`
}

func (d reservedDoc) name() domain.ReservedName {
	return domain.ReservedName{Name: d.Name, Kind: domain.NameKind(d.Kind), OwnerID: d.OwnerID, CreatedAt: d.CreatedAt, DeletedAt: d.DeletedAt}
}

// notDeleted matches the reservations of living actors.
var notDeleted = bson.E{Key: "deletedAt", Value: bson.D{{Key: "$exists", Value: false}}}

// nameDups: any duplicate in reserved_names means the name is taken.
var nameDups = &dupRules{other: domain.ErrNameTaken}

// Reserve implements ports.NameRegistry.
func (r *NameRegistry) Reserve(ctx context.Context, n domain.ReservedName) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := insertOne(ctx, r.names, reservedDoc{
		ID: n.Name, Name: n.Name, Kind: string(n.Kind), OwnerID: n.OwnerID, CreatedAt: utc(n.CreatedAt),
	})
	if err != nil {
		return fmt.Errorf("reserve %q: %w", n.Name, interpretError(err, nameDups))
	}
	return nil
}

// Release implements ports.NameRegistry.
func (r *NameRegistry) Release(ctx context.Context, name, ownerID string) error {
	res, err := r.names.DeleteOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "ownerId", Value: ownerID}, notDeleted})
	if err != nil {
		return fmt.Errorf("release %q: %w", name, interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	return nil
}

// Get implements ports.NameRegistry.
func (r *NameRegistry) Get(ctx context.Context, name string) (domain.ReservedName, error) {
	var d reservedDoc
	if err := r.names.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&d); err != nil {
		return domain.ReservedName{}, fmt.Errorf("reservation %q: %w", name, interpretError(err, nil))
	}
	return d.name(), nil
}

// List implements ports.NameRegistry.
func (r *NameRegistry) List(ctx context.Context, kind domain.NameKind) ([]domain.ReservedName, error) {
	filter := bson.D{}
	if kind != "" {
		filter = append(filter, bson.E{Key: "kind", Value: string(kind)})
	}
	return findAll(ctx, r.names, filter, "list names", reservedDoc.name, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
}

// MarkDeleted implements ports.NameRegistry. The first mark stands: the
// update matches only a reservation without deletedAt, and when it matches
// none, a look-up tells a marked reservation from another owner's or none.
func (r *NameRegistry) MarkDeleted(ctx context.Context, name, ownerID string, at time.Time) error {
	held := bson.D{{Key: "_id", Value: name}, {Key: "ownerId", Value: ownerID}}
	res, err := r.names.UpdateOne(ctx, append(held, notDeleted), bson.D{{Key: "$set", Value: bson.D{{Key: "deletedAt", Value: utc(at)}}}})
	if err != nil {
		return fmt.Errorf("mark %q deleted: %w", name, interpretError(err, nil))
	}
	if res.MatchedCount > 0 {
		return nil
	}
	n, err := r.names.CountDocuments(ctx, held)
	if err != nil {
		return fmt.Errorf("mark %q deleted: %w", name, interpretError(err, nil))
	}
	if n == 0 {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	return nil
}
