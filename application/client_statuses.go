package application

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// StatusesHandler reads posts for the client API, scoped to what the
// token's persona may see.
type StatusesHandler struct{ deps Deps }

// Own returns the post of that id written by the token's persona;
// domain.ErrNotFound otherwise. Direct posts are not statuses yet.
func (h StatusesHandler) Own(ctx context.Context, p Principal, id string) (domain.Post, error) {
	if !p.HasUser() || !validPostID(id) {
		return domain.Post{}, fmt.Errorf("%w: no status %q", domain.ErrNotFound, clip(id))
	}
	return h.deps.Posts.PostByObjectURI(ctx, h.deps.URLs.Note(h.deps.URLs.Persona(p.Avatar.Name), id))
}

// ByAuthor lists a local persona's posts newest first, published before
// `before` (zero: no bound), at most limit: its public posts, and its
// followers-only ones when the persona reads its own.
func (h StatusesHandler) ByAuthor(ctx context.Context, p Principal, author domain.Avatar, before time.Time, limit int) ([]domain.Post, error) {
	uri := h.deps.URLs.Persona(author.Name)
	posts, err := h.deps.Posts.PostsByAuthor(ctx, uri, before, limit)
	if err != nil {
		return nil, err
	}
	self := p.HasUser() && p.Avatar.ID == author.ID
	out := posts[:0]
	for _, post := range posts {
		if post.Visibility == domain.VisibilityPublic || self {
			out = append(out, post)
		}
	}
	return out, nil
}

// Reactions counts a post's likes and announces.
func (h StatusesHandler) Reactions(ctx context.Context, objectURI string) (map[domain.ReactionKind]int, error) {
	return h.deps.Posts.CountReactions(ctx, objectURI)
}
