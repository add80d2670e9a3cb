package postgres

import (
	"context"
	"fmt"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.BlockStore = (*BlockStore)(nil)

// BlockStore keeps blocks and mutes in actor_blocks, whose primary key
// (actor, target, kind) makes them unique and serves every read.
type BlockStore struct{ pool *pgxpool.Pool }

// NewBlockStore returns the store on pool.
func NewBlockStore(pool *pgxpool.Pool) *BlockStore { return &BlockStore{pool: pool} }

const actorBlockColumns = `actor_uri, target_uri, kind, activity_id, created_at`

func scanActorBlock(row pgx.Row) (domain.ActorBlock, error) {
	var b domain.ActorBlock
	var kind string
	if err := row.Scan(&b.ActorURI, &b.TargetURI, &kind, &b.ActivityID, &b.CreatedAt); err != nil {
		return domain.ActorBlock{}, err
	}
	b.Kind, b.CreatedAt = domain.BlockKind(kind), b.CreatedAt.UTC()
	return b, nil
}

// AddBlock implements ports.BlockStore: the primary key decides, so of
// concurrent adds exactly one inserts.
func (s *BlockStore) AddBlock(ctx context.Context, b domain.ActorBlock) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
INSERT INTO actor_blocks (`+actorBlockColumns+`) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (actor_uri, target_uri, kind) DO NOTHING`,
		b.ActorURI, b.TargetURI, string(b.Kind), b.ActivityID, b.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("%s of %s by %s: %w", b.Kind, b.TargetURI, b.ActorURI, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// RemoveBlock implements ports.BlockStore in one statement.
func (s *BlockStore) RemoveBlock(ctx context.Context, actor, target string, kind domain.BlockKind) (domain.ActorBlock, error) {
	b, err := scanActorBlock(s.pool.QueryRow(ctx, `
DELETE FROM actor_blocks WHERE actor_uri = $1 AND target_uri = $2 AND kind = $3
RETURNING `+actorBlockColumns, actor, target, string(kind)))
	if err != nil {
		return domain.ActorBlock{}, fmt.Errorf("%s of %s by %s: %w", kind, target, actor, interpretError(err))
	}
	return b, nil
}

// Between implements ports.BlockStore: two ranges of the primary key.
func (s *BlockStore) Between(ctx context.Context, a, b string) ([]domain.ActorBlock, error) {
	out, err := query(ctx, s.pool, scanActorBlock, `
SELECT `+actorBlockColumns+` FROM actor_blocks
WHERE (actor_uri = $1 AND target_uri = $2) OR (actor_uri = $2 AND target_uri = $1)`, a, b)
	if err != nil {
		return nil, fmt.Errorf("blocks between %s and %s: %w", a, b, interpretError(err))
	}
	return out, nil
}

// BlocksBy implements ports.BlockStore, in byte order of target URI (the
// columns are COLLATE "C"), along the primary key.
func (s *BlockStore) BlocksBy(ctx context.Context, actor string, kind domain.BlockKind, after string, limit int) ([]domain.ActorBlock, error) {
	out, err := query(ctx, s.pool, scanActorBlock, `
SELECT `+actorBlockColumns+` FROM actor_blocks
WHERE actor_uri = $1 AND target_uri > $2 AND kind = $3
ORDER BY target_uri
LIMIT $4`, actor, after, string(kind), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("%ss by %s: %w", kind, actor, interpretError(err))
	}
	return out, nil
}

// OfTargets implements ports.BlockStore: one lookup of the primary key
// per target, in one statement.
func (s *BlockStore) OfTargets(ctx context.Context, actor string, targets []string) ([]domain.ActorBlock, error) {
	if len(targets) == 0 {
		return nil, nil
	}
	out, err := query(ctx, s.pool, scanActorBlock, `
SELECT `+actorBlockColumns+` FROM actor_blocks
WHERE actor_uri = $1 AND target_uri = ANY($2)`, actor, targets)
	if err != nil {
		return nil, fmt.Errorf("blocks by %s: %w", actor, interpretError(err))
	}
	return out, nil
}
