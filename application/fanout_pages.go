package application

import (
	"context"
	"fmt"
	"sync"

	"github.com/heraldfed/herald/domain"
)

// followerBatch is one page of a fan-out's followers, resolved to the
// actors the fan-out delivers to.
type followerBatch struct {
	actors []domain.ActorInboxes
	read   int    // followers read: fewer than followerPage on the last page
	after  string // the cursor past this page (its last follower's URI)
	err    error
}

// followerPages reads a fan-out's followers from after on, one page ahead
// of the caller: the next page is read (followers, then their actors) while
// the caller enqueues and records the current one, so the store does both
// at once instead of one after the other. At most two pages are held, the
// one being enqueued and the one read ahead, whatever the follower count.
// The pages arrive in cursor order and end after the last page or an
// error; stop ends the reader and waits for it, and must be called.
func (h FanOutHandler) followerPages(ctx context.Context, actorURI, after string) (pages <-chan followerBatch, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan followerBatch) // unbuffered: one page read ahead, no more
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		for {
			b := h.followerBatch(ctx, actorURI, after)
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
			if b.err != nil || b.read < followerPage {
				return
			}
			after = b.after
		}
	}()
	return out, func() { cancel(); wg.Wait() }
}

// followerBatch reads the page of followers after the cursor and the
// actors of the remote ones.
func (h FanOutHandler) followerBatch(ctx context.Context, actorURI, after string) followerBatch {
	d := h.deps
	page, err := d.Followers.FollowerURIs(ctx, actorURI, domain.FollowAccepted, after, followerPage)
	if err != nil {
		return followerBatch{err: fmt.Errorf("followers: %w", err)}
	}
	b := followerBatch{read: len(page), after: after}
	if len(page) > 0 {
		b.after = page[len(page)-1]
	}
	uris := page[:0] // the remote ones, in place: page is this batch's own
	for _, uri := range page {
		if !h.local(uri) {
			uris = append(uris, uri)
		}
	}
	if len(uris) > 0 {
		if b.actors, err = d.Foreign.InboxesOf(ctx, uris); err != nil {
			return followerBatch{err: fmt.Errorf("follower actors: %w", err)}
		}
	}
	return b
}
