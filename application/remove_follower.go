package application

import (
	"context"
)

// RemoveFollower asks that an actor no longer follow a persona (Mastodon's
// "remove from followers"), given by URI or as user@host.
type RemoveFollower struct {
	UserID string
	As     string // persona name; must be the user's
	Target string
}

// FollowerRemoved says whom.
type FollowerRemoved struct {
	Target string
}

// RemoveFollowerHandler removes the follow, pending or accepted, and sends
// a Reject of its Follow to the follower's inbox, as Mastodon's
// RemoveFromFollowersService does. A local follower goes without a
// message.
type RemoveFollowerHandler struct{ core *fedCore }

// Handle removes: domain.ErrNotFound when the target does not follow the
// persona.
func (h RemoveFollowerHandler) Handle(ctx context.Context, cmd RemoveFollower) (FollowerRemoved, error) {
	d := h.core.deps
	me, target, err := h.core.parties(ctx, cmd.UserID, cmd.As, cmd.Target)
	if err != nil {
		return FollowerRemoved{}, err
	}
	f, err := h.core.endFollow(ctx, target.URI, me.URI, clip(target.URI), me.Name)
	if err != nil {
		return FollowerRemoved{}, err
	}
	if target.Remote != nil {
		if err := h.core.answerFollow(ctx, me, *target.Remote, f.ActivityID, "Reject"); err != nil {
			if _, aerr := d.Followers.Add(context.WithoutCancel(ctx), f); aerr != nil {
				d.Log.ErrorContext(ctx, "could not restore a follower whose Reject was not queued", "follower", target.URI, "followed", me.URI, "err", aerr)
			}
			return FollowerRemoved{}, err
		}
	}
	d.Log.InfoContext(ctx, "follower removed", "follower", target.URI, "followed", me.URI)
	return FollowerRemoved{Target: target.URI}, nil
}
