package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// FollowRemote asks for one of the account's personas to follow an actor,
// given by its URI or as user@host (resolved by WebFinger).
type FollowRemote struct {
	UserID string
	As     string // persona name
	Target string
}

// Followed says where the follow stands.
type Followed struct {
	Target     string // the followed actor's URI
	State      domain.FollowState
	ActivityID string // the Follow sent; empty for a local follow
	Created    bool   // false: the persona already followed (or asked to follow) the target
	EnqueueResult
}

// FollowRemoteHandler stores the follow as pending and sends a signed
// Follow to the remote actor's inbox; the remote's Accept (see
// InboxHandler) makes it accepted, its Reject removes it. Following a
// local actor needs no round trip: it is accepted at once, as the inbox
// would have done.
type FollowRemoteHandler struct{ core *fedCore }

// Handle follows cmd.Target as cmd.As.
func (h FollowRemoteHandler) Handle(ctx context.Context, cmd FollowRemote) (Followed, error) {
	d := h.core.deps
	name, err := domain.NormalizeName(cmd.As)
	if err != nil {
		return Followed{}, fmt.Errorf("%w: no persona %q", domain.ErrInvalidInput, clip(cmd.As))
	}
	a, err := d.Actors.AvatarByName(ctx, name)
	if notFound(err) {
		return Followed{}, fmt.Errorf("%w: no persona %q", domain.ErrInvalidInput, name)
	}
	if err != nil {
		return Followed{}, err
	}
	if a.RootUserID == "" || a.RootUserID != cmd.UserID {
		return Followed{}, fmt.Errorf("%w: persona %q is not yours", domain.ErrForbidden, name)
	}
	me := LocalActor{Kind: domain.NameKindPersona, ID: a.ID, Name: a.Name, URI: d.URLs.Persona(a.Name), OwnerID: a.RootUserID}

	n, err := parseActorName(cmd.Target)
	if err != nil {
		return Followed{}, err
	}
	if h.core.localName(n) {
		la, err := (LocalActorsHandler{core: h.core}).byName(ctx, n)
		if err != nil {
			return Followed{}, err
		}
		return h.followLocal(ctx, me, la)
	}
	fa, err := h.core.resolveName(ctx, n)
	if err != nil {
		return Followed{}, err
	}
	return h.followRemote(ctx, me, fa)
}

// targetError keeps what a client can act on (not found, unreachable,
// refused) and turns a remote's untrustworthy answer into invalid input:
// it is not the client's credentials that failed.
func targetError(target string, err error) error {
	for _, keep := range []error{domain.ErrNotFound, domain.ErrUnavailable, domain.ErrForbidden, domain.ErrInvalidInput} {
		if errors.Is(err, keep) {
			return fmt.Errorf("target %s: %w", clip(target), err)
		}
	}
	if errors.Is(err, domain.ErrUnauthorized) {
		return fmt.Errorf("%w: target %s: %v", domain.ErrInvalidInput, clip(target), err)
	}
	return fmt.Errorf("target %s: %w", clip(target), err)
}

func (h FollowRemoteHandler) followLocal(ctx context.Context, me, target LocalActor) (Followed, error) {
	d := h.core.deps
	if target.Kind == domain.NameKindInstance {
		return Followed{}, fmt.Errorf("%w: the instance actor cannot be followed", domain.ErrInvalidInput)
	}
	// A locked persona or group approves local followers by hand too.
	state := domain.FollowAccepted
	if target.Locked {
		state = domain.FollowPending
	}
	cur, created, err := addFollow(ctx, d.Followers, me.URI, target.URI, "", state, d.Clock.Now())
	if err != nil {
		return Followed{}, err
	}
	return Followed{Target: target.URI, State: cur.State, Created: created}, nil
}

func (h FollowRemoteHandler) followRemote(ctx context.Context, me LocalActor, fa domain.ForeignAvatar) (Followed, error) {
	d := h.core.deps
	// A cached actor of a domain blocked since is refused here; an
	// uncached one was already, by the fetch.
	if err := d.Moderation.Refuse(ctx, hostOf(fa.ActorURI), RefusedFollow); err != nil {
		return Followed{}, err
	}
	actID := d.URLs.Activity(me.URI, d.IDs.NewID())
	cur, created, err := addFollow(ctx, d.Followers, me.URI, fa.ActorURI, actID, domain.FollowPending, d.Clock.Now())
	if err != nil {
		return Followed{}, err
	}
	if !created {
		if cur.State == domain.FollowAccepted {
			return Followed{Target: fa.ActorURI, State: cur.State, ActivityID: cur.ActivityID}, nil
		}
		// Still pending: send the same Follow again (it is queued once
		// while the first is still in the queue).
		if cur.ActivityID != "" {
			actID = cur.ActivityID
		}
	}
	follow := Activity{ID: actID, Type: "Follow", Actor: me.URI, To: []string{fa.ActorURI}, Object: fa.ActorURI}
	res, err := h.core.send(ctx, me, follow, []string{fa.OwnInbox()})
	if err != nil {
		if created {
			if rerr := d.Followers.Remove(context.WithoutCancel(ctx), me.URI, fa.ActorURI); rerr != nil {
				d.Log.ErrorContext(ctx, "could not undo a follow whose Follow was not queued", "follower", me.URI, "followed", fa.ActorURI, "err", rerr)
			}
		}
		return Followed{}, err
	}
	d.Log.InfoContext(ctx, "follow sent", "follower", me.URI, "followed", fa.ActorURI, "activity", actID)
	return Followed{Target: fa.ActorURI, State: domain.FollowPending, ActivityID: actID, Created: created, EnqueueResult: res}, nil
}

// addFollow stores a follow of followed by follower unless one of the pair
// is stored already, and returns the stored one: the new follow when it
// created it, else the one it found.
func addFollow(ctx context.Context, followers ports.FollowerStore, follower, followed, activityID string, state domain.FollowState, now time.Time) (domain.Follower, bool, error) {
	f, err := domain.NewFollower(follower, followed, activityID, state, now)
	if err != nil {
		return domain.Follower{}, false, err
	}
	created, err := followers.Add(ctx, f)
	if err != nil || created {
		return f, created, err
	}
	cur, err := followers.Get(ctx, follower, followed)
	return cur, false, err
}
