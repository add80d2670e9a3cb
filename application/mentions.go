package application

import (
	"context"
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
	me, err := h.core.ownPersonaPage(ctx, q.UserID, q.As, q.Limit)
	if err != nil {
		return nil, err
	}
	return h.core.unmuted(ctx, me.URI, q.Before, q.Limit, func(before time.Time, limit int) ([]domain.Post, error) {
		return h.core.deps.Posts.PostsMentioning(ctx, me.URI, before, limit)
	})
}

// mutedPages bounds how many pages a read fetches to make up for the
// posts of blocked and muted authors it leaves out; a page after it may
// come back short.
const mutedPages = 4

// unmuted reads a list of posts for the actor me a page at a time (read,
// newest first, before a time), leaving out the posts of the authors me
// blocks or mutes: one BlockStore lookup per page read, for the page's
// authors at once.
func (c *fedCore) unmuted(ctx context.Context, me string, before time.Time, limit int, read func(before time.Time, limit int) ([]domain.Post, error)) ([]domain.Post, error) {
	if c.deps.Blocks == nil {
		return read(before, limit)
	}
	var out []domain.Post
	for range mutedPages {
		page, err := read(before, limit)
		if err != nil {
			return nil, err
		}
		authors := make([]string, 0, len(page))
		for _, p := range page {
			authors = append(authors, p.AuthorURI)
		}
		bs, err := c.deps.Blocks.OfTargets(ctx, me, distinct(authors))
		if err != nil {
			return nil, err
		}
		hidden := make(map[string]bool, len(bs))
		for _, b := range bs {
			hidden[b.TargetURI] = true
		}
		for _, p := range page {
			if !hidden[p.AuthorURI] && len(out) < limit {
				out = append(out, p)
			}
		}
		if len(page) < limit || len(out) == limit {
			break
		}
		before = page[len(page)-1].Published
	}
	return out, nil
}

// ownPersonaPage is ownPersona for reading a page of at most limit of the
// persona's posts.
func (c *fedCore) ownPersonaPage(ctx context.Context, userID, name string, limit int) (LocalActor, error) {
	if err := checkPageLimit(limit); err != nil {
		return LocalActor{}, err
	}
	return c.ownPersona(ctx, userID, name)
}
