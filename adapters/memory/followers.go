package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.FollowerStore = (*FollowerStore)(nil)

type followKey struct{ follower, followed string }

// FollowerStore keeps follow relations in a map keyed by the pair.
type FollowerStore struct {
	mu      sync.Mutex
	follows map[followKey]domain.Follower
}

// NewFollowerStore returns an empty store.
func NewFollowerStore() *FollowerStore {
	return &FollowerStore{follows: make(map[followKey]domain.Follower)}
}

// Add implements ports.FollowerStore.
func (s *FollowerStore) Add(ctx context.Context, f domain.Follower) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := followKey{f.FollowerURI, f.FollowedURI}
	if _, ok := s.follows[k]; ok {
		return false, nil
	}
	s.follows[k] = f
	return true, nil
}

// Get implements ports.FollowerStore.
func (s *FollowerStore) Get(ctx context.Context, follower, followed string) (domain.Follower, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.follows[followKey{follower, followed}]
	if !ok {
		return domain.Follower{}, fmt.Errorf("follow %s → %s: %w", follower, followed, domain.ErrNotFound)
	}
	return f, nil
}

// SetState implements ports.FollowerStore.
func (s *FollowerStore) SetState(ctx context.Context, follower, followed string, st domain.FollowState, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := followKey{follower, followed}
	f, ok := s.follows[k]
	if !ok {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, domain.ErrNotFound)
	}
	f.State, f.UpdatedAt = st, at
	s.follows[k] = f
	return nil
}

// Remove implements ports.FollowerStore.
func (s *FollowerStore) Remove(ctx context.Context, follower, followed string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := followKey{follower, followed}
	if _, ok := s.follows[k]; !ok {
		return fmt.Errorf("follow %s → %s: %w", follower, followed, domain.ErrNotFound)
	}
	delete(s.follows, k)
	return nil
}

// RemoveActor implements ports.FollowerStore.
func (s *FollowerStore) RemoveActor(ctx context.Context, actor string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.follows {
		if k.follower == actor || k.followed == actor {
			delete(s.follows, k)
			n++
		}
	}
	return n, nil
}

// Followers implements ports.FollowerStore.
func (s *FollowerStore) Followers(ctx context.Context, followed string, st domain.FollowState, after string, limit int) ([]domain.Follower, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Follower
	for k, f := range s.follows {
		if k.followed == followed && f.State == st && k.follower > after {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b domain.Follower) int { return cmp.Compare(a.FollowerURI, b.FollowerURI) })
	return limitSlice(out, limit), nil
}

// FollowerURIs implements ports.FollowerStore.
func (s *FollowerStore) FollowerURIs(ctx context.Context, followed string, st domain.FollowState, after string, limit int) ([]string, error) {
	page, err := s.Followers(ctx, followed, st, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(page))
	for i, f := range page {
		out[i] = f.FollowerURI
	}
	return out, nil
}

// CountFollowers implements ports.FollowerStore.
func (s *FollowerStore) CountFollowers(ctx context.Context, followed string, st domain.FollowState) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, f := range s.follows {
		if k.followed == followed && f.State == st {
			n++
		}
	}
	return n, nil
}

// FollowedURIs implements ports.FollowerStore.
func (s *FollowerStore) FollowedURIs(ctx context.Context, follower, after string, limit int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.follows {
		if k.follower == follower && k.followed > after {
			out = append(out, k.followed)
		}
	}
	slices.Sort(out)
	return limitSlice(out, limit), nil
}
