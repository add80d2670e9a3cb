package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.InstanceStore = (*InstanceStore)(nil)

// InstanceStore keeps breaker states in a map; Update holds the mutex while
// fn runs, which makes it atomic.
type InstanceStore struct {
	mu    sync.Mutex
	hosts map[string]domain.RemoteInstance
}

// NewInstanceStore returns an empty store.
func NewInstanceStore() *InstanceStore {
	return &InstanceStore{hosts: make(map[string]domain.RemoteInstance)}
}

// Get implements ports.InstanceStore.
func (s *InstanceStore) Get(ctx context.Context, host string) (domain.RemoteInstance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.hosts[strings.ToLower(host)]
	if !ok {
		return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w", host, domain.ErrNotFound)
	}
	return r, nil
}

// Update implements ports.InstanceStore.
func (s *InstanceStore) Update(ctx context.Context, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error) {
	if err := ctx.Err(); err != nil {
		return domain.RemoteInstance{}, err
	}
	host, err := ports.InstanceHost(host)
	if err != nil {
		return domain.RemoteInstance{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.update(host, fn), nil
}

// UpdateMany implements ports.InstanceStore under one hold of the mutex.
func (s *InstanceStore) UpdateMany(ctx context.Context, hosts []string, fn func(*domain.RemoteInstance)) (map[string]domain.RemoteInstance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	keys, err := ports.InstanceHosts(hosts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]domain.RemoteInstance, len(keys))
	for _, h := range keys {
		out[h] = s.update(h, fn)
	}
	return out, nil
}

// update is one host's read-modify-write: its record (a new one when
// there is none) changed by fn, the host kept. The caller holds the mutex.
func (s *InstanceStore) update(host string, fn func(*domain.RemoteInstance)) domain.RemoteInstance {
	r, ok := s.hosts[host]
	if !ok {
		r = domain.NewRemoteInstance(host)
	}
	fn(&r)
	r.Host = host
	s.hosts[host] = r
	return r
}

// List implements ports.InstanceStore.
func (s *InstanceStore) List(ctx context.Context, quarantinedAt time.Time) ([]domain.RemoteInstance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.RemoteInstance
	for _, r := range s.hosts {
		if quarantinedAt.IsZero() || r.Quarantined(quarantinedAt) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b domain.RemoteInstance) int { return cmp.Compare(a.Host, b.Host) })
	return out, nil
}
