package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.BlockStore = (*BlockStore)(nil)

type blockKey struct {
	actor, target string
	kind          domain.BlockKind
}

// BlockStore keeps blocks and mutes in a map keyed by (actor, target,
// kind).
type BlockStore struct {
	mu     sync.Mutex
	blocks map[blockKey]domain.ActorBlock
}

// NewBlockStore returns an empty store.
func NewBlockStore() *BlockStore {
	return &BlockStore{blocks: make(map[blockKey]domain.ActorBlock)}
}

// AddBlock implements ports.BlockStore.
func (s *BlockStore) AddBlock(ctx context.Context, b domain.ActorBlock) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := blockKey{b.ActorURI, b.TargetURI, b.Kind}
	if _, ok := s.blocks[k]; ok {
		return false, nil
	}
	b.CreatedAt = b.CreatedAt.UTC()
	s.blocks[k] = b
	return true, nil
}

// RemoveBlock implements ports.BlockStore.
func (s *BlockStore) RemoveBlock(ctx context.Context, actor, target string, kind domain.BlockKind) (domain.ActorBlock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := blockKey{actor, target, kind}
	b, ok := s.blocks[k]
	if !ok {
		return domain.ActorBlock{}, fmt.Errorf("%s of %s by %s: %w", kind, target, actor, domain.ErrNotFound)
	}
	delete(s.blocks, k)
	return b, nil
}

// Between implements ports.BlockStore.
func (s *BlockStore) Between(ctx context.Context, a, b string) ([]domain.ActorBlock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.ActorBlock
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		for _, kind := range []domain.BlockKind{domain.BlockKindBlock, domain.BlockKindMute} {
			if bl, ok := s.blocks[blockKey{pair[0], pair[1], kind}]; ok {
				out = append(out, bl)
			}
		}
	}
	return out, nil
}

// BlocksBy implements ports.BlockStore.
func (s *BlockStore) BlocksBy(ctx context.Context, actor string, kind domain.BlockKind, after string, limit int) ([]domain.ActorBlock, error) {
	s.mu.Lock()
	var out []domain.ActorBlock
	for k, b := range s.blocks {
		if k.actor == actor && k.kind == kind && k.target > after {
			out = append(out, b)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(x, y domain.ActorBlock) int { return cmp.Compare(x.TargetURI, y.TargetURI) })
	return limitSlice(out, limit), nil
}

// OfTargets implements ports.BlockStore.
func (s *BlockStore) OfTargets(ctx context.Context, actor string, targets []string) ([]domain.ActorBlock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.ActorBlock
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t] {
			continue
		}
		seen[t] = true
		for _, kind := range []domain.BlockKind{domain.BlockKindBlock, domain.BlockKindMute} {
			if b, ok := s.blocks[blockKey{actor, t, kind}]; ok {
				out = append(out, b)
			}
		}
	}
	return out, nil
}
