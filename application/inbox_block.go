package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// What the inbox does with blocks (SPEC §11 "Personas"): a remote actor's
// Block of one of ours and its Undo, and the refusal of a blocked actor's
// activities. Each check is one lookup of the BlockStore, made only for
// activities that concern one of our actors (a Follow, a note addressing
// or mentioning one, a reaction to one of its posts).

// block handles a remote actor's Block of one of our actors: the block is
// kept (so nothing more of ours is delivered to the blocker: Publish skips
// it when addressed, and it follows no more) and the follows both ways
// end, as Mastodon and GoToSocial drop them on a Block. Nothing is sent
// back: the blocker's server dropped its side already.
func (h InboxHandler) block(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	target := act.Object.ID
	if target == "" || !h.core.local(target) {
		return h.core.ignore(ctx, act, "Block of an actor that is not ours"), nil
	}
	la, err := (LocalActorsHandler{core: h.core}).ByURI(ctx, target)
	if notFound(err) {
		return h.core.ignore(ctx, act, "Block of an actor we do not have"), nil
	}
	if err != nil {
		return InboxResult{}, err
	}
	if la.Kind == domain.NameKindInstance || d.Blocks == nil {
		return h.core.ignore(ctx, act, "Block of an actor that keeps no blocks"), nil
	}
	b, err := domain.NewActorBlock(signer, la.URI, domain.BlockKindBlock, act.ID, d.Clock.Now())
	if err != nil {
		return InboxResult{}, err
	}
	created, err := d.Blocks.AddBlock(ctx, b)
	if err != nil {
		return InboxResult{}, err
	}
	removed := 0
	for _, pair := range [][2]string{{signer, la.URI}, {la.URI, signer}} {
		err := d.Followers.Remove(ctx, pair[0], pair[1])
		if err == nil {
			removed++
		} else if !notFound(err) {
			return InboxResult{}, err
		}
	}
	d.Log.InfoContext(ctx, "blocked by remote", "actor", signer, "target", la.URI, "follows_removed", removed, "new", created)
	return InboxResult{Duplicate: !created && removed == 0}, nil
}

// undoBlock handles the blocker's Undo{Block}: the block goes; the
// follows it ended stay ended.
func (h InboxHandler) undoBlock(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	if o.Actor != "" && o.Actor != signer {
		return InboxResult{}, fmt.Errorf("%w: Undo of a Block by %q, not by the signer", domain.ErrForbidden, clip(o.Actor))
	}
	target := o.Object
	if target == "" {
		target = req.Recipient
	}
	if target == "" || !h.core.local(target) || d.Blocks == nil {
		return h.core.ignore(ctx, act, "undo of a block of an actor that is not ours"), nil
	}
	if _, err := d.Blocks.RemoveBlock(ctx, signer, target, domain.BlockKindBlock); notFound(err) {
		return h.core.ignore(ctx, act, "no such block"), nil
	} else if err != nil {
		return InboxResult{}, err
	}
	d.Log.InfoContext(ctx, "block by remote undone", "actor", signer, "target", target)
	return InboxResult{}, nil
}

// refuseBlockedFollow answers the Follow of an actor the target blocks
// with a Reject (as Mastodon does), storing nothing: the follower's
// server learns at once that the follow will not be, where a 4xx would
// only say that this delivery failed.
func (h InboxHandler) refuseBlockedFollow(ctx context.Context, req InboxRequest, target LocalActor) (InboxResult, bool, error) {
	blocked, err := h.core.blocks(ctx, target.URI, req.Signer.ActorURI)
	if err != nil || !blocked {
		return InboxResult{}, false, err
	}
	if err := h.core.answerFollow(ctx, target, req.Signer, req.Activity.ID, "Reject"); err != nil {
		return InboxResult{}, true, err
	}
	d := h.core.deps
	d.Log.InfoContext(ctx, "follow of a blocking persona rejected", "follower", req.Signer.ActorURI, "followed", target.URI)
	return h.core.ignore(ctx, req.Activity, "the followed actor blocks the follower"), true, nil
}

// localNoteAuthor is the local actor a note of ours belongs to (note URIs
// are URLs.Note(actor, id)); false for any other URI.
func (c *fedCore) localNoteAuthor(uri string) (string, bool) {
	return c.localOwner(uri, "/statuses/")
}

// notBlocking keeps the local actors among uris that do not block author
// (a remote author's note reaches only those); other URIs are kept as
// they are.
func (c *fedCore) notBlocking(ctx context.Context, author string, uris []string) ([]string, error) {
	out := uris[:0:0]
	for _, u := range uris {
		if _, _, ok := c.parseLocal(u); ok {
			blocked, err := c.blocks(ctx, u, author)
			if err != nil {
				return nil, err
			}
			if blocked {
				continue
			}
		}
		out = append(out, u)
	}
	return out, nil
}
