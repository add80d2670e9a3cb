package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// AnswerFollowRequest asks that a persona or group accept or reject a
// follow that waits for its approval (the actor is locked, or the follow
// comes from a silenced domain, SPEC §11).
type AnswerFollowRequest struct {
	UserID   string
	As       string // persona or group name; must be the user's
	Follower string // the follower's actor URI
	Accept   bool
}

// FollowAnswered says what became of it.
type FollowAnswered struct {
	State domain.FollowState // accepted; or "" when rejected (the follow is gone)
	// Changed is false when the follow was accepted already (an accept
	// answered again sends nothing).
	Changed bool
}

// AnswerFollowRequestHandler accepts or rejects a pending follow: the
// relation becomes accepted, or goes, and an Accept or a Reject of the
// Follow is queued to the follower.
type AnswerFollowRequestHandler struct{ core *fedCore }

// Handle answers. A follow that is not there is domain.ErrNotFound; one
// accepted already can be rejected (the follower is removed, as a
// "remove follower") but not accepted again.
func (h AnswerFollowRequestHandler) Handle(ctx context.Context, cmd AnswerFollowRequest) (FollowAnswered, error) {
	d := h.core.deps
	me, err := h.core.ownFollowed(ctx, cmd.UserID, cmd.As)
	if err != nil {
		return FollowAnswered{}, err
	}
	f, err := d.Followers.Get(ctx, cmd.Follower, me.URI)
	if err != nil {
		return FollowAnswered{}, fmt.Errorf("follow of %s by %s: %w", me.Name, clip(cmd.Follower), err)
	}
	if cmd.Accept && f.State == domain.FollowAccepted {
		return FollowAnswered{State: domain.FollowAccepted}, nil
	}
	// A remote follower is told by an Accept or a Reject of its Follow;
	// one of our own actors needs no message.
	tell := func(string) error { return nil }
	if !h.core.local(cmd.Follower) {
		fa, err := d.Foreign.ByActorURI(ctx, cmd.Follower)
		if err != nil {
			return FollowAnswered{}, fmt.Errorf("follower %s: %w", clip(cmd.Follower), err)
		}
		if cmd.Accept {
			if err := d.Moderation.Refuse(ctx, hostOf(fa.ActorURI), RefusedFollow); err != nil {
				return FollowAnswered{}, err
			}
		}
		tell = func(kind string) error { return h.core.answerFollow(ctx, me, fa, f.ActivityID, kind) }
	}
	if cmd.Accept {
		if err := d.Followers.SetState(ctx, cmd.Follower, me.URI, domain.FollowAccepted, d.Clock.Now()); err != nil {
			return FollowAnswered{}, err
		}
		if err := tell("Accept"); err != nil {
			return FollowAnswered{}, err
		}
		d.Log.InfoContext(ctx, "follow request accepted", "follower", cmd.Follower, "followed", me.URI)
		return FollowAnswered{State: domain.FollowAccepted, Changed: true}, nil
	}
	if err := d.Followers.Remove(ctx, cmd.Follower, me.URI); err != nil && !notFound(err) {
		return FollowAnswered{}, err
	}
	if err := tell("Reject"); err != nil {
		return FollowAnswered{}, err
	}
	d.Log.InfoContext(ctx, "follow request rejected", "follower", cmd.Follower, "followed", me.URI)
	return FollowAnswered{Changed: true}, nil
}
