package application

import (
	"context"

	"github.com/heraldfed/herald/domain"
)

// Unfollow asks that a persona stop following an actor (or withdraw its
// follow request), given by URI or as user@host.
type Unfollow struct {
	UserID string
	As     string // persona name; must be the user's
	Target string
}

// Unfollowed says what was sent.
type Unfollowed struct {
	Target     string
	State      domain.FollowState // what the follow was: pending or accepted
	ActivityID string             // the Undo sent; empty for a local actor
	EnqueueResult
}

// UnfollowHandler removes the persona's follow, pending or accepted, and
// sends Undo{Follow} to the followed actor's inbox, its object the Follow
// sent (by its id, kept in the relation), as Mastodon's UnfollowService
// does. A follow of a local actor ends without a message.
type UnfollowHandler struct{ core *fedCore }

// Handle unfollows: domain.ErrNotFound when the persona does not follow
// the target.
func (h UnfollowHandler) Handle(ctx context.Context, cmd Unfollow) (Unfollowed, error) {
	d := h.core.deps
	me, target, err := h.core.parties(ctx, cmd.UserID, cmd.As, cmd.Target)
	if err != nil {
		return Unfollowed{}, err
	}
	f, err := h.core.endFollow(ctx, me.URI, target.URI, me.Name, clip(target.URI))
	if err != nil {
		return Unfollowed{}, err
	}
	out := Unfollowed{Target: target.URI, State: f.State}
	if target.Remote == nil {
		d.Log.InfoContext(ctx, "local follow ended", "follower", me.URI, "followed", target.URI)
		return out, nil
	}
	id, res, err := h.core.undoFollowOf(ctx, me, f, *target.Remote)
	if err != nil {
		// Nothing was sent: the follow stands, so that unfollowing again
		// sends the Undo.
		if _, aerr := d.Followers.Add(context.WithoutCancel(ctx), f); aerr != nil {
			d.Log.ErrorContext(ctx, "could not restore a follow whose Undo was not queued", "follower", me.URI, "followed", target.URI, "err", aerr)
		}
		return Unfollowed{}, err
	}
	out.ActivityID, out.EnqueueResult = id, res
	d.Log.InfoContext(ctx, "unfollow sent", "follower", me.URI, "followed", target.URI, "state", f.State)
	return out, nil
}
