package application

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// DirectThread asks for a persona's direct conversation with other actors:
// the direct posts whose participants are exactly the persona and With,
// whoever wrote them (the persona's own, and the ones received).
type DirectThread struct {
	UserID string
	As     string   // persona name; must be the user's
	With   []string // the other participants' actor URIs
	Before time.Time
	Limit  int
}

// DirectThreadHandler reads direct conversations. Only the persona's owner
// may: a direct post is private to its participants.
type DirectThreadHandler struct{ core *fedCore }

// Handle lists the thread newest first, published before q.Before (zero:
// the newest), at most q.Limit (1 to MaxFollowerPage).
func (h DirectThreadHandler) Handle(ctx context.Context, q DirectThread) ([]domain.DmPost, error) {
	me, err := h.core.ownPersonaPage(ctx, q.UserID, q.As, q.Limit)
	if err != nil {
		return nil, err
	}
	var with []string
	for _, w := range q.With {
		if w != me.URI {
			with = append(with, w)
		}
	}
	if len(with) == 0 {
		return nil, fmt.Errorf("%w: a direct thread needs another participant", domain.ErrInvalidInput)
	}
	for _, w := range with {
		if !httpURL(w) {
			return nil, fmt.Errorf("%w: participant %q is not an http(s) actor URI", domain.ErrInvalidInput, clip(w))
		}
	}
	return h.core.deps.Posts.DmThread(ctx, domain.ParticipantsKey(append(with, me.URI)), q.Before, q.Limit)
}
