package application

import (
	"context"

	"github.com/heraldfed/herald/domain"
)

// Bounds of a status's context, as Mastodon's (40 ancestors, 60
// descendants for a signed-in reader).
const (
	maxAncestors   = 40
	maxDescendants = 60
)

// Context is p's thread as the viewer may see it (CanSee), from the posts
// held here: its ancestors, oldest first, up to the first one not held
// here; and its descendants depth first, each level oldest first (a reply
// the viewer may not see is left out with its own replies).
func (h StatusesHandler) Context(ctx context.Context, viewer Principal, p domain.Post) (ancestors, descendants []domain.Post, err error) {
	seen := map[string]bool{p.ObjectURI: true}
	for uri := p.InReplyTo; uri != "" && !seen[uri] && len(seen) <= maxAncestors; {
		seen[uri] = true
		parent, err := h.deps.Posts.PostByObjectURI(ctx, uri)
		if notFound(err) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		ok, err := h.CanSee(ctx, viewer, parent)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			ancestors = append([]domain.Post{parent}, ancestors...)
		}
		uri = parent.InReplyTo
	}
	// Depth first: a stack of the replies still to show, the next on top.
	stack := []domain.Post{p}
	for len(stack) > 0 && len(descendants) < maxDescendants {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if top.ObjectURI != p.ObjectURI {
			descendants = append(descendants, top)
		}
		replies, err := h.deps.Posts.Replies(ctx, top.ObjectURI, maxDescendants)
		if err != nil {
			return nil, nil, err
		}
		for i := len(replies) - 1; i >= 0; i-- {
			r := replies[i]
			if seen[r.ObjectURI] {
				continue
			}
			seen[r.ObjectURI] = true
			ok, err := h.CanSee(ctx, viewer, r)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				stack = append(stack, r)
			}
		}
	}
	return ancestors, descendants, nil
}
