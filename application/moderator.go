package application

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Moderator gathers what the operator decides about who federates (SPEC
// §11), for the operator API, the operator page and the CLI:
// domain blocks (one at a time, or a Mastodon CSV list at once) and
// domain allows. Blocks and
// allows go through Moderation, so this process applies them at once and
// the others within its cache time. It sits beside Operator (the queue and
// the breakers) with its own constructor, so either can be wired alone.
type Moderator struct {
	Block        BlockDomainHandler
	UpdateBlock  UpdateDomainBlockHandler
	Unblock      UnblockDomainHandler
	ImportBlocks ImportDomainBlocksHandler
	ExportBlocks ExportDomainBlocksHandler
	Allow        AllowDomainHandler
	Disallow     DisallowDomainHandler

	deps ModeratorDeps
}

// ModeratorDeps are the Moderator's collaborators.
type ModeratorDeps struct {
	Moderation *Moderation
	Clock      ports.Clock
	Log        *slog.Logger
}

// NewModerator builds the moderation use cases.
func NewModerator(d ModeratorDeps) *Moderator {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.Log = d.Log.With("component", "moderation")
	return &Moderator{
		Block:        BlockDomainHandler{mod: d.Moderation, clock: d.Clock},
		UpdateBlock:  UpdateDomainBlockHandler{mod: d.Moderation},
		Unblock:      UnblockDomainHandler{mod: d.Moderation},
		ImportBlocks: ImportDomainBlocksHandler{mod: d.Moderation, clock: d.Clock, log: d.Log},
		ExportBlocks: ExportDomainBlocksHandler{mod: d.Moderation},
		Allow:        AllowDomainHandler{mod: d.Moderation, clock: d.Clock},
		Disallow:     DisallowDomainHandler{mod: d.Moderation},
		deps:         d,
	}
}

// Mode is the federation mode Herald runs in (HERALD_FEDERATION_MODE).
func (m *Moderator) Mode() domain.FederationMode { return m.deps.Moderation.Mode() }

// Blocks lists the domain blocks, by domain.
func (m *Moderator) Blocks(ctx context.Context) ([]domain.DomainBlock, error) {
	bs, err := m.deps.Moderation.Blocks(ctx)
	if err != nil {
		return nil, fmt.Errorf("domain blocks: %w", err)
	}
	return bs, nil
}

// Allows lists the domain allows, by domain.
func (m *Moderator) Allows(ctx context.Context) ([]domain.DomainAllow, error) {
	as, err := m.deps.Moderation.Allows(ctx)
	if err != nil {
		return nil, fmt.Errorf("domain allows: %w", err)
	}
	return as, nil
}
