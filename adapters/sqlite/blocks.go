package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.BlockStore = (*BlockStore)(nil)

// BlockStore keeps blocks and mutes in actor_blocks, whose primary key
// (actor, target, kind) makes them unique and serves every read.
type BlockStore struct{ db *DB }

// NewBlockStore returns the store on db.
func NewBlockStore(db *DB) *BlockStore { return &BlockStore{db: db} }

const actorBlockColumns = `actor_uri, target_uri, kind, activity_id, created_at`

func scanBlock(row scanner) (domain.ActorBlock, error) {
	var b domain.ActorBlock
	var kind string
	var created sql.NullInt64
	if err := row.Scan(&b.ActorURI, &b.TargetURI, &kind, &b.ActivityID, &created); err != nil {
		return domain.ActorBlock{}, err
	}
	b.Kind, b.CreatedAt = domain.BlockKind(kind), fromNanos(created)
	return b, nil
}

// AddBlock implements ports.BlockStore: the primary key decides, so of
// concurrent adds exactly one inserts.
func (s *BlockStore) AddBlock(ctx context.Context, b domain.ActorBlock) (bool, error) {
	res, err := s.db.w.ExecContext(ctx, `
INSERT INTO actor_blocks (`+actorBlockColumns+`) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (actor_uri, target_uri, kind) DO NOTHING`,
		b.ActorURI, b.TargetURI, string(b.Kind), b.ActivityID, nanos(b.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("%s of %s by %s: %w", b.Kind, b.TargetURI, b.ActorURI, interpretError(err))
	}
	return affected(res) == 1, nil
}

// RemoveBlock implements ports.BlockStore in one statement.
func (s *BlockStore) RemoveBlock(ctx context.Context, actor, target string, kind domain.BlockKind) (domain.ActorBlock, error) {
	b, err := scanBlock(s.db.w.QueryRowContext(ctx, `
DELETE FROM actor_blocks WHERE actor_uri = ? AND target_uri = ? AND kind = ?
RETURNING `+actorBlockColumns, actor, target, string(kind)))
	if err != nil {
		return domain.ActorBlock{}, fmt.Errorf("%s of %s by %s: %w", kind, target, actor, interpretError(err))
	}
	return b, nil
}

// Between implements ports.BlockStore: two ranges of the primary key.
func (s *BlockStore) Between(ctx context.Context, a, b string) ([]domain.ActorBlock, error) {
	out, err := query(ctx, s.db, scanBlock, `
SELECT `+actorBlockColumns+` FROM actor_blocks
WHERE (actor_uri = ?1 AND target_uri = ?2) OR (actor_uri = ?2 AND target_uri = ?1)`, a, b)
	if err != nil {
		return nil, fmt.Errorf("blocks between %s and %s: %w", a, b, interpretError(err))
	}
	return out, nil
}

// BlocksBy implements ports.BlockStore, in byte order of target URI
// (SQLite's BINARY collation), along the primary key.
func (s *BlockStore) BlocksBy(ctx context.Context, actor string, kind domain.BlockKind, after string, limit int) ([]domain.ActorBlock, error) {
	out, err := query(ctx, s.db, scanBlock, `
SELECT `+actorBlockColumns+` FROM actor_blocks
WHERE actor_uri = ? AND target_uri > ? AND kind = ?
ORDER BY target_uri
LIMIT ?`, actor, after, string(kind), limitArg(limit))
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
	args := []any{actor}
	marks := make([]string, 0, len(targets))
	for _, t := range targets {
		args = append(args, t)
		marks = append(marks, "?")
	}
	out, err := query(ctx, s.db, scanBlock, `
SELECT `+actorBlockColumns+` FROM actor_blocks
WHERE actor_uri = ? AND target_uri IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("blocks by %s: %w", actor, interpretError(err))
	}
	return out, nil
}
