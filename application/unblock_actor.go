package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// UnblockActor asks that a persona lift its block of a remote actor.
type UnblockActor struct {
	UserID string
	As     string // persona name; must be the user's
	Target string // URI or user@host
}

// Unblocked says what was sent.
type Unblocked struct {
	Target     string
	ActivityID string // the Undo sent
	EnqueueResult
}

// UnblockActorHandler removes the block and sends Undo{Block} (object:
// the Block sent, by its id) to the actor's own inbox. The follows the
// block ended stay ended: either side may follow again.
type UnblockActorHandler struct{ core *fedCore }

// Handle unblocks: domain.ErrNotFound when the persona does not block the
// target.
func (h UnblockActorHandler) Handle(ctx context.Context, cmd UnblockActor) (Unblocked, error) {
	d := h.core.deps
	me, fa, err := h.core.blockParties(ctx, cmd.UserID, cmd.As, cmd.Target)
	if err != nil {
		return Unblocked{}, err
	}
	b, err := d.Blocks.RemoveBlock(ctx, me.URI, fa.ActorURI, domain.BlockKindBlock)
	if err != nil {
		return Unblocked{}, fmt.Errorf("block of %s by %s: %w", fa.ActorURI, me.Name, err)
	}
	undo := Activity{
		ID: d.URLs.Activity(me.URI, d.IDs.NewID()), Type: "Undo", Actor: me.URI, To: []string{fa.ActorURI},
		Object: FollowObject{ID: b.ActivityID, Type: "Block", Actor: me.URI, Object: fa.ActorURI},
	}
	res, err := h.core.send(ctx, me, undo, []string{personalInbox(fa)})
	if err != nil {
		// Nothing was sent: the block stands, so that unblocking again
		// sends the Undo.
		if _, aerr := d.Blocks.AddBlock(context.WithoutCancel(ctx), b); aerr != nil {
			d.Log.ErrorContext(ctx, "could not restore a block whose Undo was not queued", "persona", me.URI, "target", fa.ActorURI, "err", aerr)
		}
		return Unblocked{}, err
	}
	d.Log.InfoContext(ctx, "block undone", "persona", me.URI, "target", fa.ActorURI, "activity", undo.ID)
	return Unblocked{Target: fa.ActorURI, ActivityID: undo.ID, EnqueueResult: res}, nil
}
