package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// The lists of the client API's accounts graph: an account's followers,
// whom it follows, a persona's follow requests. Each is ordered by actor
// URI (the FollowerStore's order) and paged after an actor URI.

// URIOf returns the actor URI of an account id: a local persona's, or
// the remote actor's Herald gave that id; domain.ErrNotFound otherwise.
func (h AccountsHandler) URIOf(ctx context.Context, id string) (string, error) {
	a, err := h.Persona(ctx, id)
	if err == nil {
		return h.deps.URLs.Persona(a.Name), nil
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return "", err
	}
	uri, err := h.deps.AccountIDs.AccountURI(ctx, id)
	if err != nil {
		return "", fmt.Errorf("account %q: %w", clip(id), err)
	}
	return uri, nil
}

// FollowersOf lists the accepted followers of an actor that Herald
// holds: every follower of a local persona; of a remote actor, the local
// personas that follow it.
func (h AccountsHandler) FollowersOf(ctx context.Context, actorURI, after string, limit int) ([]string, error) {
	return h.deps.Followers.FollowerURIs(ctx, actorURI, domain.FollowAccepted, after, limit)
}

// RequestsOf lists the follows of an actor that wait for its approval.
func (h AccountsHandler) RequestsOf(ctx context.Context, actorURI, after string, limit int) ([]string, error) {
	return h.deps.Followers.FollowerURIs(ctx, actorURI, domain.FollowPending, after, limit)
}

// FollowingOf lists whom an actor follows, accepted follows only (a
// request still waiting is not a follow yet). The store lists follows in
// any state, so a page is read until limit accepted ones are found or the
// list ends.
func (h AccountsHandler) FollowingOf(ctx context.Context, actorURI, after string, limit int) ([]string, error) {
	out := make([]string, 0, limit)
	for len(out) < limit {
		page, err := h.deps.Followers.FollowedURIs(ctx, actorURI, after, limit)
		if err != nil {
			return nil, err
		}
		for _, uri := range page {
			f, err := h.deps.Followers.Get(ctx, actorURI, uri)
			if errors.Is(err, domain.ErrNotFound) {
				continue // unfollowed since the page was read
			}
			if err != nil {
				return nil, err
			}
			if f.State == domain.FollowAccepted && len(out) < limit {
				out = append(out, uri)
			}
		}
		if len(page) < limit {
			break
		}
		after = page[len(page)-1]
	}
	return out, nil
}
