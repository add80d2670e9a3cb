package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/domain"
)

// SetAvatarLocked implements ports.ActorStore.
func (s *AccountStore) SetAvatarLocked(ctx context.Context, id string, locked bool) error {
	return setActor(ctx, s.avatars, "avatar", id, bson.D{{Key: "locked", Value: locked}})
}

// SetGroupLocked implements ports.ActorStore.
func (s *AccountStore) SetGroupLocked(ctx context.Context, id string, locked bool) error {
	return setActor(ctx, s.groups, "group", id, bson.D{{Key: "locked", Value: locked}})
}

// SetAvatarProfile implements ports.ActorStore. An empty value is
// written as empty, not unset: reads treat both alike.
func (s *AccountStore) SetAvatarProfile(ctx context.Context, id, displayName, note string) error {
	return setActor(ctx, s.avatars, "avatar", id, bson.D{{Key: "displayName", Value: displayName}, {Key: "note", Value: note}})
}

// SetAvatarKeys implements ports.ActorStore.
func (s *AccountStore) SetAvatarKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return rotateKeys(ctx, s.avatars, "avatar", id, keys, at)
}

// SetGroupKeys implements ports.ActorStore.
func (s *AccountStore) SetGroupKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return rotateKeys(ctx, s.groups, "group", id, keys, at)
}

// rotateKeys moves the document's key pair to previous and sets keys. An
// update cannot read the document's own fields without an aggregation
// pipeline (which not every server here speaks), so it reads the pair and
// writes on the condition that it is still the one read: of two rotations
// at once each keeps a pair that really was current as the previous one.
func rotateKeys(ctx context.Context, c *mongodrv.Collection, what, id string, keys domain.KeyPair, at time.Time) error {
	for range 8 {
		var cur struct {
			Public  string `bson:"publicKeyPem"`
			Private string `bson:"privateKeyPem"`
		}
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&cur); err != nil {
			return fmt.Errorf("%s %q: %w", what, id, interpretError(err, nil))
		}
		res, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "publicKeyPem", Value: cur.Public}, {Key: "privateKeyPem", Value: cur.Private}},
			bson.D{{Key: "$set", Value: bson.D{
				{Key: "previousPublicKeyPem", Value: cur.Public}, {Key: "previousPrivateKeyPem", Value: cur.Private},
				{Key: "publicKeyPem", Value: keys.PublicPEM}, {Key: "privateKeyPem", Value: keys.PrivatePEM},
				{Key: "keysRotatedAt", Value: utc(at)},
			}}})
		if err != nil {
			return fmt.Errorf("%s %q: %w", what, id, interpretError(err, nil))
		}
		if res.MatchedCount == 1 {
			return nil
		}
	}
	return fmt.Errorf("%s %q: %w: its keys kept changing", what, id, domain.ErrUnavailable)
}

// setActor $sets fields of the actor document with that id;
// domain.ErrNotFound when there is none.
func setActor(ctx context.Context, c *mongodrv.Collection, what, id string, set bson.D) error {
	res, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, id, interpretError(err, nil))
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("%s %q: %w", what, id, domain.ErrNotFound)
	}
	return nil
}
