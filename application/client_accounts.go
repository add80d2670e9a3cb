package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// AccountsHandler reads the client API's accounts: local personas by id
// and by name, with their counts.
type AccountsHandler struct{ deps Deps }

// maxCountedFollowing bounds the following count read for an account
// entity (a persona following more shows this many).
const maxCountedFollowing = 10_000

// Persona returns the live persona with this id; domain.ErrNotFound for
// anything else (a group, the instance actor, a deleted persona).
func (h AccountsHandler) Persona(ctx context.Context, id string) (domain.Avatar, error) {
	a, err := h.deps.Actors.AvatarByID(ctx, id)
	return account(a, err, id)
}

// Lookup finds a local persona by acct: "name", "@name" or
// "name@this-domain". Remote accounts are not looked up here (search
// with resolve does that); they are domain.ErrNotFound.
func (h AccountsHandler) Lookup(ctx context.Context, acct string) (domain.Avatar, error) {
	acct = strings.TrimPrefix(strings.TrimSpace(acct), "@")
	name, host, found := strings.Cut(acct, "@")
	if found && !strings.EqualFold(host, h.deps.URLs.Domain) {
		return domain.Avatar{}, fmt.Errorf("%w: no local account %q", domain.ErrNotFound, acct)
	}
	n, err := domain.NormalizeName(name)
	if err != nil {
		return domain.Avatar{}, fmt.Errorf("%w: no account %q", domain.ErrNotFound, acct)
	}
	a, err := h.deps.Actors.AvatarByName(ctx, n)
	return account(a, err, acct)
}

// account is the avatar read (a, err) when it is a live persona, else
// domain.ErrNotFound naming key.
func account(a domain.Avatar, err error, key string) (domain.Avatar, error) {
	if err != nil {
		return domain.Avatar{}, err
	}
	if !livePersona(a) {
		return domain.Avatar{}, fmt.Errorf("%w: no account %q", domain.ErrNotFound, key)
	}
	return a, nil
}

// livePersona reports whether a is a persona not deleted: what has an
// account entity (a group, the instance actor, a deleted persona or a
// retired name has none).
func livePersona(a domain.Avatar) bool { return a.RootUserID != "" && a.DeletedAt.IsZero() }

// AccountStats are an account entity's counts.
type AccountStats struct {
	Followers, Following int
}

// Stats counts a local actor's accepted followers and whom it follows
// (any state, up to maxCountedFollowing).
func (h AccountsHandler) Stats(ctx context.Context, actorURI string) (AccountStats, error) {
	followers, err := h.deps.Followers.CountFollowers(ctx, actorURI, domain.FollowAccepted)
	if err != nil {
		return AccountStats{}, err
	}
	following, after := 0, ""
	for following < maxCountedFollowing {
		page, err := h.deps.Followers.FollowedURIs(ctx, actorURI, after, 1000)
		if err != nil {
			return AccountStats{}, err
		}
		following += len(page)
		if len(page) < 1000 {
			break
		}
		after = page[len(page)-1]
	}
	return AccountStats{Followers: followers, Following: min(following, maxCountedFollowing)}, nil
}

// RemoteAccount is a remote actor as the client API shows it: from the
// cache of remote actors, with its account id.
type RemoteAccount struct {
	ID    string
	Actor domain.ForeignAvatar
}

// RemoteID returns the account id of a remote actor, giving it one (a
// fresh id, so ids sort by when Herald first showed the actor) the first
// time.
func (h AccountsHandler) RemoteID(ctx context.Context, actorURI string) (string, error) {
	return h.deps.AccountIDs.AccountID(ctx, actorURI, h.deps.IDs.NewID())
}

// Remote returns the cached remote actor of an account id;
// domain.ErrNotFound when the id is none Herald gave, or the actor is no
// longer cached.
func (h AccountsHandler) Remote(ctx context.Context, id string) (RemoteAccount, error) {
	uri, err := h.deps.AccountIDs.AccountURI(ctx, id)
	if err != nil {
		return RemoteAccount{}, err
	}
	f, err := h.deps.Foreign.ByActorURI(ctx, uri)
	if err != nil {
		return RemoteAccount{}, err
	}
	return RemoteAccount{ID: id, Actor: f}, nil
}
