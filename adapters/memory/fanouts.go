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

var _ ports.FanOutStore = (*FanOutStore)(nil)

// FanOutStore keeps fan-out records in a map by activity id.
type FanOutStore struct {
	mu   sync.Mutex
	byID map[string]domain.FanOut
}

// NewFanOutStore returns an empty store.
func NewFanOutStore() *FanOutStore { return &FanOutStore{byID: make(map[string]domain.FanOut)} }

// Create implements ports.FanOutStore.
func (s *FanOutStore) Create(ctx context.Context, f domain.FanOut) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.ID == "" {
		return fmt.Errorf("%w: fan-out without an id", domain.ErrInvalidInput)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[f.ID]; ok {
		return fmt.Errorf("fan-out %s: %w", f.ID, domain.ErrAlreadyExists)
	}
	f.Payload = slices.Clone(f.Payload)
	s.byID[f.ID] = f
	return nil
}

// Advance implements ports.FanOutStore.
func (s *FanOutStore) Advance(ctx context.Context, p ports.FanOutProgress) (domain.FanOut, error) {
	if err := ctx.Err(); err != nil {
		return domain.FanOut{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.byID[p.ID]
	if !ok {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrNotFound)
	}
	if f.Done || f.Owner != p.Owner {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrLeaseLost)
	}
	if p.Cursor > f.Cursor {
		f.Cursor = p.Cursor
	}
	f.Queued += p.Queued
	f.UpdatedAt = p.Now.UTC()
	if p.Done {
		f.Done, f.Owner, f.LeaseUntil = true, "", time.Time{}
	} else {
		f.LeaseUntil = p.Until.UTC()
	}
	s.byID[p.ID] = f
	return f, nil
}

// Claim implements ports.FanOutStore.
func (s *FanOutStore) Claim(ctx context.Context, owner string, now, until time.Time) (domain.FanOut, error) {
	if err := ctx.Err(); err != nil {
		return domain.FanOut{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *domain.FanOut
	for _, f := range s.byID {
		if f.Done || f.LeaseUntil.After(now) {
			continue
		}
		if best == nil || f.CreatedAt.Before(best.CreatedAt) || (f.CreatedAt.Equal(best.CreatedAt) && f.ID < best.ID) {
			best = &f
		}
	}
	if best == nil {
		return domain.FanOut{}, fmt.Errorf("claimable fan-out: %w", domain.ErrNotFound)
	}
	f := *best
	f.Owner, f.LeaseUntil, f.UpdatedAt = owner, until.UTC(), now.UTC()
	s.byID[f.ID] = f
	f.Payload = slices.Clone(f.Payload)
	return f, nil
}

// Get implements ports.FanOutStore.
func (s *FanOutStore) Get(ctx context.Context, id string) (domain.FanOut, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.byID[id]
	if !ok {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", id, domain.ErrNotFound)
	}
	f.Payload = slices.Clone(f.Payload)
	return f, nil
}

// List implements ports.FanOutStore.
func (s *FanOutStore) List(ctx context.Context, limit int) ([]domain.FanOut, error) {
	s.mu.Lock()
	out := make([]domain.FanOut, 0, len(s.byID))
	for _, f := range s.byID {
		f.Payload = nil
		out = append(out, f)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b domain.FanOut) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return limitSlice(out, limit), nil
}

// Purge implements ports.FanOutStore.
func (s *FanOutStore) Purge(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, f := range s.byID {
		if f.Done && f.UpdatedAt.Before(before) {
			delete(s.byID, id)
			n++
		}
	}
	return n, nil
}
