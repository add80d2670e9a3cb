package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// ownActor finds the persona or group named name that userID owns. kind
// is persona or group, or empty for either (one username space holds
// both). An unknown name is domain.ErrNotFound, someone else's actor (or
// the instance actor) domain.ErrForbidden.
func (c *fedCore) ownActor(ctx context.Context, userID string, kind domain.NameKind, name string) (LocalActor, error) {
	n, err := domain.NormalizeName(strings.TrimSpace(name))
	if err != nil {
		return LocalActor{}, fmt.Errorf("%w: no persona or group %q", domain.ErrNotFound, clip(name))
	}
	if kind == "" {
		rn, err := c.deps.Names.Get(ctx, n)
		if err != nil {
			return LocalActor{}, fmt.Errorf("persona or group %q: %w", n, err)
		}
		kind = rn.Kind
	}
	if kind != domain.NameKindPersona && kind != domain.NameKindGroup {
		return LocalActor{}, fmt.Errorf("%w: %q is not a persona or group", domain.ErrForbidden, n)
	}
	a, err := (LocalActorsHandler{core: c}).ByName(ctx, kind, n)
	if err != nil {
		return LocalActor{}, err
	}
	if a.OwnerID == "" || a.OwnerID != userID {
		return LocalActor{}, fmt.Errorf("%w: %s %q is not yours", domain.ErrForbidden, kind, n)
	}
	return a, nil
}

// ownFollowed is the actor whose follow requests the user answers: one
// of its personas (the errors of ownPersona) or one of its groups.
func (c *fedCore) ownFollowed(ctx context.Context, userID, name string) (LocalActor, error) {
	me, err := c.ownPersona(ctx, userID, name)
	if err == nil || !errors.Is(err, domain.ErrInvalidInput) {
		return me, err
	}
	if g, gerr := c.ownActor(ctx, userID, domain.NameKindGroup, name); gerr == nil || !notFound(gerr) {
		return g, gerr
	}
	return LocalActor{}, err
}

// sendUpdate sends an Update of the actor's current document to every
// accepted follower through the streamed fan-out (Update{Person}, or
// Update{Group}), so their servers take its new state (a lock, a new key)
// at once rather than at their next refetch. The instance actor has no
// followers and sends none.
func (c *fedCore) sendUpdate(ctx context.Context, a LocalActor) (EnqueueResult, error) {
	if a.Kind == domain.NameKindInstance {
		return EnqueueResult{}, nil
	}
	doc := c.deps.URLs.Document(a)
	doc.Context = nil // the activity's context covers it
	act := Activity{Context: actorContext, ID: c.deps.URLs.Activity(a.URI, "update-"+c.deps.IDs.NewID()), Type: "Update",
		Actor: a.URI, Published: asTime(c.deps.Clock.Now()), To: []string{ASPublic}, CC: []string{c.deps.URLs.Followers(a.URI)}, Object: doc}
	return c.broadcast(ctx, a, act, nil)
}
