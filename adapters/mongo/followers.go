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

var _ ports.FollowerStore = (*FollowerStore)(nil)

// FollowerStore keeps follow relations in followers, unique by the
// (follower, followed) pair through followers_pair.
type FollowerStore struct {
	follows *mongodrv.Collection
}

// NewFollowerStore returns the store of db.
func NewFollowerStore(db *mongodrv.Database) *FollowerStore {
	return &FollowerStore{follows: collection(db, collFollowers)}
}

// followerDoc has no _id field: the server gives new rows an ObjectId, and
// legacy rows keep theirs; nothing reads it.
type followerDoc struct {
	Follower   string    `bson:"follower"`
	Followed   string    `bson:"followed"`
	State      string    `bson:"state"`
	ActivityID string    `bson:"activityId,omitempty"`
	CreatedAt  time.Time `bson:"createdAt,omitempty"`
	UpdatedAt  time.Time `bson:"updatedAt,omitempty"`
}

func (d followerDoc) follower() domain.Follower {
	return domain.Follower{FollowerURI: d.Follower, FollowedURI: d.Followed, State: domain.FollowState(d.State),
		ActivityID: d.ActivityID, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

func pair(follower, followed string) bson.D {
	return bson.D{{Key: "follower", Value: follower}, {Key: "followed", Value: followed}}
}

// Add implements ports.FollowerStore: an insert, and the unique pair index
// turns a second Add of the pair (concurrent or not) into created=false.
func (s *FollowerStore) Add(ctx context.Context, f domain.Follower) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	err := insertOne(ctx, s.follows, followerDoc{
		Follower: f.FollowerURI, Followed: f.FollowedURI, State: string(f.State), ActivityID: f.ActivityID,
		CreatedAt: utc(f.CreatedAt), UpdatedAt: utc(f.UpdatedAt),
	})
	if mongodrv.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("follow %s → %s: %w", f.FollowerURI, f.FollowedURI, interpretError(err, nil))
	}
	return true, nil
}

// Get implements ports.FollowerStore.
func (s *FollowerStore) Get(ctx context.Context, follower, followed string) (domain.Follower, error) {
	var d followerDoc
	if err := s.follows.FindOne(ctx, pair(follower, followed)).Decode(&d); err != nil {
		return domain.Follower{}, fmt.Errorf("follow %s → %s: %w", follower, followed, interpretError(err, nil))
	}
	return d.follower(), nil
}

// SetState implements ports.FollowerStore.
func (s *FollowerStore) SetState(ctx context.Context, follower, followed string, st domain.FollowState, at time.Time) error {
	res, err := s.follows.UpdateOne(ctx, pair(follower, followed), bson.D{{Key: "$set", Value: bson.D{
		{Key: "state", Value: string(st)}, {Key: "updatedAt", Value: at.UTC()},
	}}})
	if err != nil {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, interpretError(err, nil))
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, domain.ErrNotFound)
	}
	return nil
}

// Remove implements ports.FollowerStore.
func (s *FollowerStore) Remove(ctx context.Context, follower, followed string) error {
	res, err := s.follows.DeleteOne(ctx, pair(follower, followed))
	if err != nil {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, domain.ErrNotFound)
	}
	return nil
}

// RemoveActor implements ports.FollowerStore.
func (s *FollowerStore) RemoveActor(ctx context.Context, actor string) (int, error) {
	res, err := s.follows.DeleteMany(ctx, bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "follower", Value: actor}}, bson.D{{Key: "followed", Value: actor}},
	}}})
	if err != nil {
		return 0, fmt.Errorf("remove follows of %s: %w", actor, interpretError(err, nil))
	}
	return int(res.DeletedCount), nil
}

// Followers implements ports.FollowerStore, paged by follower URI along
// followers_followed_state.
func (s *FollowerStore) Followers(ctx context.Context, followed string, st domain.FollowState, after string, limit int) ([]domain.Follower, error) {
	filter := bson.D{{Key: "followed", Value: followed}, {Key: "state", Value: string(st)}}
	if after != "" {
		filter = append(filter, bson.E{Key: "follower", Value: bson.D{{Key: "$gt", Value: after}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "follower", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.follows, filter, fmt.Sprintf("followers of %s", followed), followerDoc.follower, opts)
}

// FollowerURIs implements ports.FollowerStore with a projection that
// followers_followed_state covers.
func (s *FollowerStore) FollowerURIs(ctx context.Context, followed string, st domain.FollowState, after string, limit int) ([]string, error) {
	filter := bson.D{{Key: "followed", Value: followed}, {Key: "state", Value: string(st)}}
	if after != "" {
		filter = append(filter, bson.E{Key: "follower", Value: bson.D{{Key: "$gt", Value: after}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "follower", Value: 1}}).SetProjection(bson.D{{Key: "follower", Value: 1}, {Key: "_id", Value: 0}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.follows, filter, fmt.Sprintf("followers of %s", followed), func(d followerDoc) string { return d.Follower }, opts)
}

// CountFollowers implements ports.FollowerStore.
func (s *FollowerStore) CountFollowers(ctx context.Context, followed string, st domain.FollowState) (int, error) {
	n, err := s.follows.CountDocuments(ctx, bson.D{{Key: "followed", Value: followed}, {Key: "state", Value: string(st)}})
	if err != nil {
		return 0, fmt.Errorf("count followers of %s: %w", followed, interpretError(err, nil))
	}
	return int(n), nil
}

// FollowedURIs implements ports.FollowerStore along followers_pair
// (follower, then followed).
func (s *FollowerStore) FollowedURIs(ctx context.Context, follower, after string, limit int) ([]string, error) {
	filter := bson.D{{Key: "follower", Value: follower}}
	if after != "" {
		filter = append(filter, bson.E{Key: "followed", Value: bson.D{{Key: "$gt", Value: after}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "followed", Value: 1}}).SetProjection(bson.D{{Key: "followed", Value: 1}, {Key: "_id", Value: 0}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.follows, filter, fmt.Sprintf("followed by %s", follower), func(d followerDoc) string { return d.Followed }, opts)
}
