package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// ListBlocks asks for a page of a persona's blocks (or mutes).
type ListBlocks struct {
	UserID string
	As     string           // persona name; must be the user's
	Kind   domain.BlockKind // block when empty
	After  string           // target URI the previous page ended with
	Limit  int              // DefaultFollowerPage when 0; at most MaxFollowerPage
}

// BlockPage is one page, by target URI.
type BlockPage struct {
	Blocks []domain.ActorBlock
	Next   string // After of the next page; empty on the last
}

// ListBlocksHandler lists a persona's blocks or mutes for its owner.
type ListBlocksHandler struct{ core *fedCore }

// Handle returns one page.
func (h ListBlocksHandler) Handle(ctx context.Context, q ListBlocks) (BlockPage, error) {
	d := h.core.deps
	if d.Blocks == nil {
		return BlockPage{}, fmt.Errorf("%w: blocks are not kept by this server", domain.ErrUnavailable)
	}
	me, err := h.core.ownPersona(ctx, q.UserID, q.As)
	if err != nil {
		return BlockPage{}, err
	}
	if q.Kind == "" {
		q.Kind = domain.BlockKindBlock
	}
	if !q.Kind.Valid() {
		return BlockPage{}, fmt.Errorf("%w: kind %q is not block or mute", domain.ErrInvalidInput, clip(string(q.Kind)))
	}
	if q.Limit, err = pageLimit(q.Limit); err != nil {
		return BlockPage{}, err
	}
	bs, err := d.Blocks.BlocksBy(ctx, me.URI, q.Kind, q.After, q.Limit)
	if err != nil {
		return BlockPage{}, err
	}
	page := BlockPage{Blocks: bs}
	if len(bs) == q.Limit {
		page.Next = bs[len(bs)-1].TargetURI
	}
	return page, nil
}
