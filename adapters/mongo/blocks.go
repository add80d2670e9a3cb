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

var _ ports.BlockStore = (*BlockStore)(nil)

// BlockStore keeps blocks and mutes in actor_blocks, unique by (actor,
// target, kind) through actor_blocks_pair, which serves every read.
type BlockStore struct {
	blocks *mongodrv.Collection
}

// NewBlockStore returns the store of db.
func NewBlockStore(db *mongodrv.Database) *BlockStore {
	return &BlockStore{blocks: collection(db, collActorBlocks)}
}

// actorBlockDoc has no _id field: the server gives each an ObjectId,
// which nothing reads.
type actorBlockDoc struct {
	Actor      string    `bson:"actor"`
	Target     string    `bson:"target"`
	Kind       string    `bson:"kind"`
	ActivityID string    `bson:"activityId,omitempty"`
	CreatedAt  time.Time `bson:"createdAt"`
}

func (d actorBlockDoc) block() domain.ActorBlock {
	return domain.ActorBlock{ActorURI: d.Actor, TargetURI: d.Target, Kind: domain.BlockKind(d.Kind), ActivityID: d.ActivityID, CreatedAt: d.CreatedAt.UTC()}
}

// AddBlock implements ports.BlockStore: an insert, and the unique index
// turns a second one (concurrent or not) into created=false.
func (s *BlockStore) AddBlock(ctx context.Context, b domain.ActorBlock) (bool, error) {
	err := insertOne(ctx, s.blocks, actorBlockDoc{Actor: b.ActorURI, Target: b.TargetURI, Kind: string(b.Kind), ActivityID: b.ActivityID, CreatedAt: utc(b.CreatedAt)})
	if mongodrv.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s of %s by %s: %w", b.Kind, b.TargetURI, b.ActorURI, interpretError(err, nil))
	}
	return true, nil
}

// RemoveBlock implements ports.BlockStore in one FindOneAndDelete.
func (s *BlockStore) RemoveBlock(ctx context.Context, actor, target string, kind domain.BlockKind) (domain.ActorBlock, error) {
	var d actorBlockDoc
	err := s.blocks.FindOneAndDelete(ctx, bson.D{{Key: "actor", Value: actor}, {Key: "target", Value: target}, {Key: "kind", Value: string(kind)}}).Decode(&d)
	if err != nil {
		return domain.ActorBlock{}, fmt.Errorf("%s of %s by %s: %w", kind, target, actor, interpretError(err, nil))
	}
	return d.block(), nil
}

// Between implements ports.BlockStore: two ranges of actor_blocks_pair.
func (s *BlockStore) Between(ctx context.Context, a, b string) ([]domain.ActorBlock, error) {
	filter := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "actor", Value: a}, {Key: "target", Value: b}},
		bson.D{{Key: "actor", Value: b}, {Key: "target", Value: a}},
	}}}
	return findAll(ctx, s.blocks, filter, "blocks between "+a+" and "+b, actorBlockDoc.block)
}

// BlocksBy implements ports.BlockStore, in target order (Mongo compares
// strings by their bytes), along actor_blocks_pair.
func (s *BlockStore) BlocksBy(ctx context.Context, actor string, kind domain.BlockKind, after string, limit int) ([]domain.ActorBlock, error) {
	filter := bson.D{{Key: "actor", Value: actor}, {Key: "target", Value: bson.D{{Key: "$gt", Value: after}}}, {Key: "kind", Value: string(kind)}}
	opts := options.Find().SetSort(bson.D{{Key: "actor", Value: 1}, {Key: "target", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.blocks, filter, string(kind)+"s by "+actor, actorBlockDoc.block, opts)
}

// OfTargets implements ports.BlockStore: one $in on actor_blocks_pair.
func (s *BlockStore) OfTargets(ctx context.Context, actor string, targets []string) ([]domain.ActorBlock, error) {
	if len(targets) == 0 {
		return nil, nil
	}
	filter := bson.D{{Key: "actor", Value: actor}, {Key: "target", Value: bson.D{{Key: "$in", Value: targets}}}}
	return findAll(ctx, s.blocks, filter, "blocks by "+actor, actorBlockDoc.block)
}
