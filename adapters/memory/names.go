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

var _ ports.NameRegistry = (*NameRegistry)(nil)

// NameRegistry is the username space as a map guarded by a mutex.
type NameRegistry struct {
	mu    sync.Mutex
	names map[string]domain.ReservedName
}

// NewNameRegistry returns an empty registry.
func NewNameRegistry() *NameRegistry {
	return &NameRegistry{names: make(map[string]domain.ReservedName)}
}

// Reserve implements ports.NameRegistry.
func (r *NameRegistry) Reserve(ctx context.Context, n domain.ReservedName) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.names[n.Name]; taken {
		return fmt.Errorf("%q: %w", n.Name, domain.ErrNameTaken)
	}
	r.names[n.Name] = n
	return nil
}

// Release implements ports.NameRegistry.
func (r *NameRegistry) Release(ctx context.Context, name, ownerID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.names[name]
	if !ok || n.OwnerID != ownerID || n.Deleted() {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	delete(r.names, name)
	return nil
}

// MarkDeleted implements ports.NameRegistry.
func (r *NameRegistry) MarkDeleted(ctx context.Context, name, ownerID string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.names[name]
	if !ok || n.OwnerID != ownerID {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	if !n.Deleted() {
		n.DeletedAt = at.UTC()
		r.names[name] = n
	}
	return nil
}

// Get implements ports.NameRegistry.
func (r *NameRegistry) Get(ctx context.Context, name string) (domain.ReservedName, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return lookup(r.names, "reservation", name)
}

// List implements ports.NameRegistry.
func (r *NameRegistry) List(ctx context.Context, kind domain.NameKind) ([]domain.ReservedName, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]domain.ReservedName, 0, len(r.names))
	for _, n := range r.names {
		if kind == "" || n.Kind == kind {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b domain.ReservedName) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
