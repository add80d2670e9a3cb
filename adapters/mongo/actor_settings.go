package mongo

import (
	"context"
	"fmt"

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

// SetAvatarKeys implements ports.ActorStore.
func (s *AccountStore) SetAvatarKeys(ctx context.Context, id string, keys domain.KeyPair) error {
	return setActor(ctx, s.avatars, "avatar", id, bson.D{{Key: "publicKeyPem", Value: keys.PublicPEM}, {Key: "privateKeyPem", Value: keys.PrivatePEM}})
}

// SetGroupKeys implements ports.ActorStore.
func (s *AccountStore) SetGroupKeys(ctx context.Context, id string, keys domain.KeyPair) error {
	return setActor(ctx, s.groups, "group", id, bson.D{{Key: "publicKeyPem", Value: keys.PublicPEM}, {Key: "privateKeyPem", Value: keys.PrivatePEM}})
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
