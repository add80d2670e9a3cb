package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.ModerationStore = (*ModerationStore)(nil)
	_ ports.ReportStore     = (*ReportStore)(nil)
)

// ModerationStore keeps the domain blocks and allows, each in a map by
// its domain.
type ModerationStore struct {
	mu     sync.Mutex
	blocks map[string]domain.DomainBlock
	allows map[string]domain.DomainAllow
}

// NewModerationStore returns an empty store.
func NewModerationStore() *ModerationStore {
	return &ModerationStore{blocks: make(map[string]domain.DomainBlock), allows: make(map[string]domain.DomainAllow)}
}

// AddDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) AddDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.blocks[b.Domain]; ok {
		return fmt.Errorf("block of %s: %w", b.Domain, domain.ErrAlreadyExists)
	}
	b.CreatedAt = b.CreatedAt.UTC()
	s.blocks[b.Domain] = b
	return nil
}

// UpdateDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) UpdateDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.blocks[b.Domain]
	if !ok {
		return fmt.Errorf("block of %s: %w", b.Domain, domain.ErrNotFound)
	}
	b.CreatedAt = old.CreatedAt
	s.blocks[b.Domain] = b
	return nil
}

// RemoveDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainBlock(ctx context.Context, d string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return remove(s.blocks, "block", d)
}

// DomainBlocks implements ports.ModerationStore.
func (s *ModerationStore) DomainBlocks(ctx context.Context) ([]domain.DomainBlock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return byDomain(s.blocks), nil
}

// AddDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) AddDomainAllow(ctx context.Context, a domain.DomainAllow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.allows[a.Domain]; ok {
		return fmt.Errorf("allow of %s: %w", a.Domain, domain.ErrAlreadyExists)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	s.allows[a.Domain] = a
	return nil
}

// RemoveDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainAllow(ctx context.Context, d string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return remove(s.allows, "allow", d)
}

// DomainAllows implements ports.ModerationStore.
func (s *ModerationStore) DomainAllows(ctx context.Context) ([]domain.DomainAllow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return byDomain(s.allows), nil
}

// remove deletes the block or allow of d from m, domain.ErrNotFound if
// there is none. The caller holds the mutex.
func remove[V any](m map[string]V, what, d string) error {
	if _, ok := m[d]; !ok {
		return fmt.Errorf("%s of %s: %w", what, d, domain.ErrNotFound)
	}
	delete(m, d)
	return nil
}

// byDomain lists m's blocks or allows, which it keys by domain, in
// domain order. The caller holds the mutex.
func byDomain[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, d := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[d])
	}
	return out
}

// ReportStore keeps the reports by id, and the id of each Flag's report.
type ReportStore struct {
	mu     sync.Mutex
	byID   map[string]domain.Report
	byFlag map[string]string // Flag id → report id
}

// NewReportStore returns an empty store.
func NewReportStore() *ReportStore {
	return &ReportStore{byID: make(map[string]domain.Report), byFlag: make(map[string]string)}
}

// AddReport implements ports.ReportStore.
func (s *ReportStore) AddReport(ctx context.Context, r domain.Report) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byFlag[r.ActivityID]; ok {
		return false, nil
	}
	if _, ok := s.byID[r.ID]; ok {
		return false, fmt.Errorf("report %s: %w", r.ID, domain.ErrAlreadyExists)
	}
	r = copyReport(r)
	r.CreatedAt, r.ResolvedAt = r.CreatedAt.UTC(), r.ResolvedAt.UTC()
	s.byID[r.ID] = r
	s.byFlag[r.ActivityID] = r.ID
	return true, nil
}

// Report implements ports.ReportStore.
func (s *ReportStore) Report(ctx context.Context, id string) (domain.Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return domain.Report{}, fmt.Errorf("report %s: %w", id, domain.ErrNotFound)
	}
	return copyReport(r), nil
}

func copyReport(r domain.Report) domain.Report {
	r.Targets, r.Objects = slices.Clone(r.Targets), slices.Clone(r.Objects)
	return r
}

// Reports implements ports.ReportStore: a walk of every report, sorted
// (an operator's reports are few next to what the memory store holds).
func (s *ReportStore) Reports(ctx context.Context, open bool, limit int) ([]domain.Report, error) {
	s.mu.Lock()
	out := []domain.Report{}
	for _, r := range s.byID {
		if !open || r.Open() {
			out = append(out, copyReport(r))
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b domain.Report) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return limitSlice(out, limit), nil
}

// ResolveReport implements ports.ReportStore.
func (s *ReportStore) ResolveReport(ctx context.Context, id string, at time.Time, note string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return fmt.Errorf("report %s: %w", id, domain.ErrNotFound)
	}
	if r.Open() {
		r.ResolvedAt, r.Resolution = at.UTC(), note
		s.byID[id] = r
	}
	return nil
}
