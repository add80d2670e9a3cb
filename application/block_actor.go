package application

import (
	"context"

	"github.com/heraldfed/herald/domain"
)

// BlockActor asks that a persona block a remote actor (SPEC §11
// "Personas"), given by its URI or as user@host.
type BlockActor struct {
	UserID string
	As     string // persona name; must be the user's
	Target string
}

// ActorBlocked says what the block did.
type ActorBlocked struct {
	Target     string // the blocked actor's URI
	ActivityID string // the Block sent (the first one, when already blocked)
	// Created is false when the persona blocked the target already:
	// nothing more is sent.
	Created bool
	// Unfollowed and FollowerRemoved say which follows the block ended.
	Unfollowed, FollowerRemoved bool
	EnqueueResult
}

// BlockActorHandler blocks as Mastodon's BlockService does: the persona's
// follow of the target ends with an Undo{Follow}, the target's follow of
// the persona with a Reject{Follow}, and a Block goes to the target's own
// inbox, signed by the persona. Mastodon and GoToSocial drop the follows
// both ways on the Block alone; the Undo and the Reject tell servers that
// do not. From then on nothing of the persona is delivered to the target
// (it follows no more, and Publish skips it when addressed) and its
// activities to the persona are refused (InboxHandler).
type BlockActorHandler struct{ core *fedCore }

// Handle blocks cmd.Target as cmd.As.
func (h BlockActorHandler) Handle(ctx context.Context, cmd BlockActor) (ActorBlocked, error) {
	d := h.core.deps
	me, fa, err := h.core.blockParties(ctx, cmd.UserID, cmd.As, cmd.Target)
	if err != nil {
		return ActorBlocked{}, err
	}
	b, err := domain.NewActorBlock(me.URI, fa.ActorURI, domain.BlockKindBlock, d.URLs.Activity(me.URI, d.IDs.NewID()), d.Clock.Now())
	if err != nil {
		return ActorBlocked{}, err
	}
	created, err := d.Blocks.AddBlock(ctx, b)
	if err != nil {
		return ActorBlocked{}, err
	}
	out := ActorBlocked{Target: fa.ActorURI, ActivityID: b.ActivityID, Created: created}
	if !created {
		if cur, err := d.Blocks.Between(ctx, me.URI, fa.ActorURI); err == nil {
			for _, c := range cur {
				if c.ActorURI == me.URI && c.Kind == domain.BlockKindBlock {
					out.ActivityID = c.ActivityID
				}
			}
		}
	}
	// The follows go whether the block is new or not: a follow that
	// slipped in beside an earlier block (a race with the inbox) ends too.
	if f, err := h.core.endFollow(ctx, me.URI, fa.ActorURI, me.Name, clip(fa.ActorURI)); err == nil {
		_, res, err := h.core.undoFollowOf(ctx, me, f, fa)
		if err != nil {
			return out, err
		}
		out.Unfollowed = true
		out.add(res)
	} else if !notFound(err) {
		return out, err
	}
	if f, err := h.core.endFollow(ctx, fa.ActorURI, me.URI, clip(fa.ActorURI), me.Name); err == nil {
		if err := h.core.answerFollow(ctx, me, fa, f.ActivityID, "Reject"); err != nil {
			return out, err
		}
		out.FollowerRemoved = true
	} else if !notFound(err) {
		return out, err
	}
	if !created {
		return out, nil
	}
	block := Activity{ID: b.ActivityID, Type: "Block", Actor: me.URI, To: []string{fa.ActorURI}, Object: fa.ActorURI}
	res, err := h.core.send(ctx, me, block, []string{personalInbox(fa)})
	if err != nil {
		// Nothing was sent: the block goes, so that blocking again sends it.
		if _, rerr := d.Blocks.RemoveBlock(context.WithoutCancel(ctx), me.URI, fa.ActorURI, domain.BlockKindBlock); rerr != nil {
			d.Log.ErrorContext(ctx, "could not undo a block whose Block was not queued", "persona", me.URI, "target", fa.ActorURI, "err", rerr)
		}
		return out, err
	}
	out.add(res)
	d.Log.InfoContext(ctx, "block sent", "persona", me.URI, "target", fa.ActorURI, "activity", b.ActivityID,
		"unfollowed", out.Unfollowed, "follower_removed", out.FollowerRemoved)
	return out, nil
}

func (r *EnqueueResult) add(o EnqueueResult) {
	r.Queued += o.Queued
	r.AlreadyQueued += o.AlreadyQueued
}
