package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// Relationships asks how one of the account's personas stands with other
// actors (Mastodon's Relationship entity).
type Relationships struct {
	UserID  string
	As      string   // persona name; must be the user's
	Targets []string // actor URIs, local or remote
}

// Relationship is how the persona stands with one actor.
type Relationship struct {
	Target string
	// Following and Requested are the persona's follow of the target,
	// accepted or waiting for its approval; FollowedBy and RequestedBy
	// the target's follow of the persona.
	Following, Requested    bool
	FollowedBy, RequestedBy bool
	Blocking, BlockedBy     bool
	Muting                  bool
}

// MaxRelationships bounds the targets of one question: each costs three
// indexed reads.
const MaxRelationships = 80

// RelationshipsHandler reads the follows, blocks and mutes between a
// persona and each target: two lookups of the FollowerStore's key and one
// BlockStore.Between per target.
type RelationshipsHandler struct{ core *fedCore }

// Handle answers one Relationship per target, in order.
func (h RelationshipsHandler) Handle(ctx context.Context, q Relationships) ([]Relationship, error) {
	d := h.core.deps
	if len(q.Targets) > MaxRelationships {
		return nil, fmt.Errorf("%w: at most %d accounts at once", domain.ErrInvalidInput, MaxRelationships)
	}
	me, err := h.core.ownPersona(ctx, q.UserID, q.As)
	if err != nil {
		return nil, err
	}
	out := make([]Relationship, 0, len(q.Targets))
	for _, t := range q.Targets {
		r := Relationship{Target: t}
		if f, err := d.Followers.Get(ctx, me.URI, t); err == nil {
			r.Following, r.Requested = f.State == domain.FollowAccepted, f.State == domain.FollowPending
		} else if !notFound(err) {
			return nil, err
		}
		if f, err := d.Followers.Get(ctx, t, me.URI); err == nil {
			r.FollowedBy, r.RequestedBy = f.State == domain.FollowAccepted, f.State == domain.FollowPending
		} else if !notFound(err) {
			return nil, err
		}
		if d.Blocks != nil {
			bs, err := d.Blocks.Between(ctx, me.URI, t)
			if err != nil {
				return nil, err
			}
			for _, b := range bs {
				switch {
				case b.ActorURI == me.URI && b.Kind == domain.BlockKindBlock:
					r.Blocking = true
				case b.ActorURI == me.URI && b.Kind == domain.BlockKindMute:
					r.Muting = true
				case b.ActorURI == t && b.Kind == domain.BlockKindBlock:
					r.BlockedBy = true
				}
			}
		}
		out = append(out, r)
	}
	return out, nil
}
