package application

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// Mentions asks for the posts that mention one of the user's personas.
type Mentions struct {
	UserID string
	As     string // persona name; must be the user's
	Before time.Time
	Limit  int
}

// MentionsHandler lists a persona's mentions: the posts held here, local
// or received, whose Mention tags name it, whoever wrote them (a stranger
// who mentions a persona is how a conversation starts) and whatever their
// visibility (a followers-only post that names the persona is addressed
// to it). Only the persona's owner may read them.
type MentionsHandler struct{ core *fedCore }

// Handle lists newest first, published before q.Before (zero: the
// newest), at most q.Limit (1 to MaxFollowerPage).
func (h MentionsHandler) Handle(ctx context.Context, q Mentions) ([]domain.Post, error) {
	if q.Limit <= 0 || q.Limit > MaxFollowerPage {
		return nil, fmt.Errorf("%w: limit must be from 1 to %d", domain.ErrInvalidInput, MaxFollowerPage)
	}
	me, err := h.core.ownPersona(ctx, q.UserID, q.As)
	if err != nil {
		return nil, err
	}
	return h.core.deps.Posts.PostsMentioning(ctx, me.URI, q.Before, q.Limit)
}
