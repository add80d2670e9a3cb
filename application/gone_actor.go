package application

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
)

// GoneActor is the error of a local actor that was deleted: what its
// actor URL answers instead of its document (410 with an ActivityStreams
// Tombstone, as Mastodon answers for a deleted account). It wraps
// domain.ErrGone, and domain.ErrNotFound too: a use case that passes over
// a missing actor (a note addressed to it among others) passes over a
// deleted one alike, while the HTTP edge, which tries ErrGone first,
// answers 410.
type GoneActor struct {
	Kind      domain.NameKind // what it was: a persona
	Name      string
	URI       string
	DeletedAt time.Time
}

func (e *GoneActor) Error() string { return string(e.Kind) + " " + e.Name + " was deleted" }

// Unwrap makes errors.Is hold for domain.ErrGone and domain.ErrNotFound.
func (e *GoneActor) Unwrap() []error { return []error{domain.ErrGone, domain.ErrNotFound} }

// gone returns a *GoneActor when the name's reservation says its actor of
// that kind was deleted, nil otherwise (also when the registry cannot
// answer: the caller's own error stands then).
func (h LocalActorsHandler) gone(ctx context.Context, kind domain.NameKind, name string) error {
	rn, err := h.core.deps.Names.Get(ctx, name)
	if err != nil || !rn.Deleted() || rn.Kind != kind {
		return nil
	}
	return h.goneOf(rn)
}

func (h LocalActorsHandler) goneOf(rn domain.ReservedName) error {
	uri := h.core.deps.URLs.Persona(rn.Name)
	if rn.Kind == domain.NameKindGroup {
		uri = h.core.deps.URLs.Group(rn.Name)
	}
	return &GoneActor{Kind: rn.Kind, Name: rn.Name, URI: uri, DeletedAt: rn.DeletedAt}
}
