package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// SetLocked asks that a persona or group of the account approve its
// followers by hand (Locked), or stop doing so.
type SetLocked struct {
	UserID string
	Kind   domain.NameKind // persona or group
	Name   string
	Locked bool
}

// LockSet says what became of it.
type LockSet struct {
	Actor LocalActor
	// Changed is false when the actor was in that state already: nothing
	// was sent.
	Changed bool
	// Accepted counts the requests an unlock accepted (Mastodon's
	// unlocking accepts the pending requests too).
	Accepted int
	// Queued counts the jobs of the Update sent to the followers.
	Queued int
}

// SetLockedHandler locks or unlocks a persona or group. The actor
// document then says manuallyApprovesFollowers, and an Update{Person}
// (Update{Group}) tells the followers' servers at once. Unlocking accepts
// the requests waiting, except those of silenced domains, which always
// need approval (SPEC §11).
type SetLockedHandler struct{ core *fedCore }

// pendingPage is how many pending requests an unlock reads at a time.
const pendingPage = 200

// Handle applies it. An unknown name is domain.ErrNotFound, another
// account's actor domain.ErrForbidden.
func (h SetLockedHandler) Handle(ctx context.Context, cmd SetLocked) (LockSet, error) {
	d := h.core.deps
	a, err := h.core.ownActor(ctx, cmd.UserID, cmd.Kind, cmd.Name)
	if err != nil {
		return LockSet{}, err
	}
	if a.Locked == cmd.Locked {
		return LockSet{Actor: a}, nil
	}
	if a.Kind == domain.NameKindGroup {
		err = d.Actors.SetGroupLocked(ctx, a.ID, cmd.Locked)
	} else {
		err = d.Actors.SetAvatarLocked(ctx, a.ID, cmd.Locked)
	}
	if err != nil {
		return LockSet{}, err
	}
	a.Locked = cmd.Locked
	out := LockSet{Actor: a, Changed: true}
	d.Log.InfoContext(ctx, "actor lock changed", "actor", a.URI, "locked", a.Locked)
	if !a.Locked {
		if out.Accepted, err = h.acceptPending(ctx, a); err != nil {
			return out, err
		}
	}
	res, err := h.core.sendUpdate(ctx, a)
	out.Queued = res.Queued
	if err != nil {
		return out, fmt.Errorf("update of %s to its followers: %w", a.URI, err)
	}
	return out, nil
}

// acceptPending accepts every pending follow of a that no policy holds
// back, sending each follower its Accept.
func (h SetLockedHandler) acceptPending(ctx context.Context, a LocalActor) (int, error) {
	d := h.core.deps
	n, after := 0, ""
	for {
		page, err := d.Followers.Followers(ctx, a.URI, domain.FollowPending, after, pendingPage)
		if err != nil {
			return n, err
		}
		for _, f := range page {
			after = f.FollowerURI
			host := hostOf(f.FollowerURI)
			if d.Moderation.Silenced(ctx, host) {
				continue
			}
			if err := d.Moderation.Refuse(ctx, host, RefusedFollow); RefusedByPolicy(err) {
				continue
			} else if err != nil {
				return n, err
			}
			if h.core.local(f.FollowerURI) {
				// One of our actors: accepted, nothing to send.
				if err := d.Followers.SetState(ctx, f.FollowerURI, a.URI, domain.FollowAccepted, d.Clock.Now()); err != nil && !notFound(err) {
					return n, err
				}
				n++
				continue
			}
			fa, err := d.Foreign.ByActorURI(ctx, f.FollowerURI)
			if notFound(err) {
				continue // no inbox to answer: the request stays
			}
			if err != nil {
				return n, err
			}
			if err := d.Followers.SetState(ctx, f.FollowerURI, a.URI, domain.FollowAccepted, d.Clock.Now()); err != nil {
				if notFound(err) {
					continue // withdrawn meanwhile
				}
				return n, err
			}
			if err := h.core.answerFollow(ctx, a, fa, f.ActivityID, "Accept"); err != nil {
				return n, err
			}
			n++
		}
		if len(page) < pendingPage {
			return n, nil
		}
	}
}
