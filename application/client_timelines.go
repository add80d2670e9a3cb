package application

import (
	"context"
	"slices"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// TimelineEntry is one status of a timeline: a post, or a boost of it.
type TimelineEntry struct {
	Post domain.Post
	// Boost is set when the entry is Boost.ActorURI's boost of Post.
	Boost *domain.Boost
}

// At is when the entry happened: the post's publication, or the boost.
func (e TimelineEntry) At() time.Time {
	if e.Boost != nil {
		return e.Boost.CreatedAt
	}
	return e.Post.Published
}

// Page is where a timeline page starts and how long it is: entries
// before Before (zero: the newest), at most Limit; After, when set, keeps
// only entries after it (since_id, min_id).
type Page struct {
	Before, After time.Time
	Limit         int
	// Oldest asks for the entries right after After (min_id), where
	// by default a page is the newest ones (since_id).
	Oldest bool
	// origin keeps the posts of one origin (a read that cannot select
	// them itself).
	origin ports.Origin
}

func (p Page) keep(e TimelineEntry) bool {
	at := e.At()
	return (p.Before.IsZero() || at.Before(p.Before)) && (p.After.IsZero() || at.After(p.After)) &&
		(p.origin == ports.OriginAll || e.Post.Local == (p.origin == ports.OriginLocal))
}

// timelineReads bounds the store reads one timeline page makes to make up
// for entries the viewer may not see; a page after it may come back
// short (clients ask for the next one by the Link header).
const timelineReads = 4

// Home is a persona's home timeline, newest first: its own posts and
// boosts, and the posts and boosts of the actors it follows (the first
// ports.MaxAuthors of them by URI), each one it may see (CanSee), none of
// an author or booster it mutes or blocks.
func (h StatusesHandler) Home(ctx context.Context, viewer Principal, page Page) ([]TimelineEntry, error) {
	me := h.deps.URLs.Persona(viewer.Avatar.Name)
	followed, err := h.deps.Followers.FollowedURIs(ctx, me, "", ports.MaxAuthors-1)
	if err != nil {
		return nil, err
	}
	actors := append([]string{me}, followed...)
	return h.timeline(ctx, viewer, page, func(before time.Time, limit int) ([]TimelineEntry, error) {
		posts, err := h.deps.Posts.PostsByAuthors(ctx, actors, before, limit)
		if err != nil {
			return nil, err
		}
		boosts, err := h.deps.Posts.BoostsByActors(ctx, actors, before, limit)
		if err != nil {
			return nil, err
		}
		return merge(ctx, h.deps.Posts, posts, boosts, limit)
	})
}

// Public is the public timeline: the public posts of every origin, or
// of one (local, remote), as the viewer may see them.
func (h StatusesHandler) Public(ctx context.Context, viewer Principal, origin ports.Origin, page Page) ([]TimelineEntry, error) {
	return h.timeline(ctx, viewer, page, func(before time.Time, limit int) ([]TimelineEntry, error) {
		posts, err := h.deps.Posts.PublicPosts(ctx, origin, before, limit)
		return entries(posts), err
	})
}

// Tagged is a hashtag's timeline: its public posts, as Public.
func (h StatusesHandler) Tagged(ctx context.Context, viewer Principal, tag string, origin ports.Origin, page Page) ([]TimelineEntry, error) {
	tag = domain.NormalizeHashtag(tag)
	if tag == "" {
		return nil, nil
	}
	page.origin = origin
	return h.timeline(ctx, viewer, page, func(before time.Time, limit int) ([]TimelineEntry, error) {
		posts, err := h.deps.Posts.PostsTagged(ctx, tag, before, limit)
		return entries(posts), err
	})
}

func entries(posts []domain.Post) []TimelineEntry {
	out := make([]TimelineEntry, 0, len(posts))
	for _, p := range posts {
		out = append(out, TimelineEntry{Post: p})
	}
	return out
}

// merge puts posts and boosts (each newest first) together, newest
// first, at most limit; a boost's post is read (one left out when it
// went meanwhile).
func merge(ctx context.Context, store ports.PostStore, posts []domain.Post, boosts []domain.Boost, limit int) ([]TimelineEntry, error) {
	out := entries(posts)
	for _, b := range boosts {
		p, err := store.PostByObjectURI(ctx, b.ObjectURI)
		if notFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, TimelineEntry{Post: p, Boost: &b})
	}
	slices.SortStableFunc(out, func(a, b TimelineEntry) int { return b.At().Compare(a.At()) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// timeline reads pages (read: newest first, before a time) until it has
// page.Limit entries the viewer may see or the reads run out, leaving out
// what the viewer may not see and, for a persona, the posts and boosts
// of whom it mutes or blocks. With page.Oldest it keeps reading down to
// page.After and answers the oldest page.Limit entries after it (the
// newest first, as every page): within timelineReads reads; past them,
// the oldest it read.
func (h StatusesHandler) timeline(ctx context.Context, viewer Principal, page Page, read func(before time.Time, limit int) ([]TimelineEntry, error)) ([]TimelineEntry, error) {
	var out []TimelineEntry
	want := page.Limit
	if page.Oldest && !page.After.IsZero() {
		want = timelineReads * page.Limit
	}
	before := page.Before
	for range timelineReads {
		got, err := read(before, page.Limit)
		if err != nil {
			return nil, err
		}
		hidden, err := h.hiddenActors(ctx, viewer, got)
		if err != nil {
			return nil, err
		}
		for _, e := range got {
			if !page.keep(e) || hidden[e.Post.AuthorURI] || e.Boost != nil && hidden[e.Boost.ActorURI] {
				continue
			}
			ok, err := h.CanSee(ctx, viewer, e.Post)
			if err != nil {
				return nil, err
			}
			if ok && len(out) < want {
				out = append(out, e)
			}
		}
		if len(got) < page.Limit || len(out) >= want {
			break
		}
		before = got[len(got)-1].At()
		if !page.After.IsZero() && !before.After(page.After) {
			break
		}
	}
	if len(out) > page.Limit {
		out = out[len(out)-page.Limit:]
	}
	return out, nil
}

// hiddenActors are the authors and boosters of entries the viewer's
// persona blocks or mutes: one BlockStore read for the page.
func (h StatusesHandler) hiddenActors(ctx context.Context, viewer Principal, es []TimelineEntry) (map[string]bool, error) {
	if !viewer.HasUser() || h.deps.Blocks == nil || len(es) == 0 {
		return nil, nil
	}
	var actors []string
	for _, e := range es {
		actors = append(actors, e.Post.AuthorURI)
		if e.Boost != nil {
			actors = append(actors, e.Boost.ActorURI)
		}
	}
	bs, err := h.deps.Blocks.OfTargets(ctx, h.deps.URLs.Persona(viewer.Avatar.Name), distinct(actors))
	if err != nil {
		return nil, err
	}
	hidden := make(map[string]bool, len(bs))
	for _, b := range bs {
		hidden[b.TargetURI] = true
	}
	return hidden, nil
}

// Published is when the post of that status id was published, for
// paging by it (max_id, since_id, min_id); domain.ErrNotFound when no
// post has that id.
func (h StatusesHandler) Published(ctx context.Context, id string) (time.Time, error) {
	if !validPostID(id) {
		return time.Time{}, domain.ErrNotFound
	}
	p, err := h.deps.Posts.PostByID(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	return p.Published, nil
}
