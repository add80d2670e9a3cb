package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.FollowerStore = (*FollowerStore)(nil)

// FollowerStore keeps follow relations in followers, unique by the pair
// (followers_pair_key).
type FollowerStore struct{ db *DB }

// NewFollowerStore returns the store on db.
func NewFollowerStore(db *DB) *FollowerStore { return &FollowerStore{db: db} }

const followerColumns = `follower_uri, followed_uri, state, activity_id, created_at, updated_at`

func scanFollower(row scanner) (domain.Follower, error) {
	var f domain.Follower
	var state string
	var created, updated sql.NullInt64
	if err := row.Scan(&f.FollowerURI, &f.FollowedURI, &state, &f.ActivityID, &created, &updated); err != nil {
		return domain.Follower{}, err
	}
	f.State = domain.FollowState(state)
	f.CreatedAt, f.UpdatedAt = fromNanos(created), fromNanos(updated)
	return f, nil
}

// Add implements ports.FollowerStore: the unique pair index decides, so of
// concurrent adds exactly one inserts and the existing row is never changed.
func (s *FollowerStore) Add(ctx context.Context, f domain.Follower) (bool, error) {
	res, err := s.db.w.ExecContext(ctx, `
INSERT INTO followers (`+followerColumns+`) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (follower_uri, followed_uri) DO NOTHING`,
		f.FollowerURI, f.FollowedURI, string(f.State), f.ActivityID, nanos(f.CreatedAt), nanos(f.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("add follow %s → %s: %w", f.FollowerURI, f.FollowedURI, interpretError(err))
	}
	return affected(res) == 1, nil
}

// Get implements ports.FollowerStore.
func (s *FollowerStore) Get(ctx context.Context, follower, followed string) (domain.Follower, error) {
	f, err := scanFollower(s.db.r.QueryRowContext(ctx,
		`SELECT `+followerColumns+` FROM followers WHERE follower_uri = ? AND followed_uri = ?`, follower, followed))
	if err != nil {
		return domain.Follower{}, fmt.Errorf("follow %s → %s: %w", follower, followed, interpretError(err))
	}
	return f, nil
}

// SetState implements ports.FollowerStore.
func (s *FollowerStore) SetState(ctx context.Context, follower, followed string, st domain.FollowState, at time.Time) error {
	res, err := s.db.w.ExecContext(ctx,
		`UPDATE followers SET state = ?, updated_at = ? WHERE follower_uri = ? AND followed_uri = ?`,
		string(st), nanos(at), follower, followed)
	if err != nil {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, domain.ErrNotFound)
	}
	return nil
}

// Remove implements ports.FollowerStore.
func (s *FollowerStore) Remove(ctx context.Context, follower, followed string) error {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM followers WHERE follower_uri = ? AND followed_uri = ?`, follower, followed)
	if err != nil {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, domain.ErrNotFound)
	}
	return nil
}

// RemoveActor implements ports.FollowerStore. The two sides are two
// conditions each served by an index (followers_pair_key by follower,
// followers_followed_state_idx by followed).
func (s *FollowerStore) RemoveActor(ctx context.Context, actor string) (int, error) {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM followers WHERE follower_uri = ?1 OR followed_uri = ?1`, actor)
	if err != nil {
		return 0, fmt.Errorf("remove follows of %s: %w", actor, interpretError(err))
	}
	return affected(res), nil
}

// Followers implements ports.FollowerStore, in byte order of follower URI
// (SQLite's BINARY collation is Go's string order), which
// followers_followed_state_idx serves.
func (s *FollowerStore) Followers(ctx context.Context, followed string, st domain.FollowState, after string, limit int) ([]domain.Follower, error) {
	out, err := query(ctx, s.db, scanFollower, `
SELECT `+followerColumns+` FROM followers
WHERE followed_uri = ? AND state = ? AND follower_uri > ?
ORDER BY follower_uri
LIMIT ?`, followed, string(st), after, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("followers of %s: %w", followed, interpretError(err))
	}
	return out, nil
}

// FollowerURIs implements ports.FollowerStore from
// followers_followed_state_idx alone (a covering index).
func (s *FollowerStore) FollowerURIs(ctx context.Context, followed string, st domain.FollowState, after string, limit int) ([]string, error) {
	out, err := query(ctx, s.db, scanText, `
SELECT follower_uri FROM followers
WHERE followed_uri = ? AND state = ? AND follower_uri > ?
ORDER BY follower_uri
LIMIT ?`, followed, string(st), after, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("followers of %s: %w", followed, interpretError(err))
	}
	return out, nil
}

// CountFollowers implements ports.FollowerStore.
func (s *FollowerStore) CountFollowers(ctx context.Context, followed string, st domain.FollowState) (int, error) {
	var n int
	err := s.db.r.QueryRowContext(ctx, `SELECT count(*) FROM followers WHERE followed_uri = ? AND state = ?`,
		followed, string(st)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count followers of %s: %w", followed, interpretError(err))
	}
	return n, nil
}

// FollowedURIs implements ports.FollowerStore, from followers_pair_key.
func (s *FollowerStore) FollowedURIs(ctx context.Context, follower, after string, limit int) ([]string, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	out, err := query(ctx, s.db, scanText, `SELECT followed_uri FROM followers WHERE follower_uri = ? AND followed_uri > ? ORDER BY followed_uri LIMIT ?`, follower, after, limit)
	if err != nil {
		return nil, fmt.Errorf("followed by %s: %w", follower, interpretError(err))
	}
	return out, nil
}
