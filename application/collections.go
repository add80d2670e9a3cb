package application

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// CollectionsHandler reads what the actor documents link to: outboxes,
// followers collections and local notes. Only public posts are shown;
// followers-only posts and direct posts are not served to anonymous
// readers.
type CollectionsHandler struct{ core *fedCore }

// OutboxPage is one page of an outbox, newest first.
type OutboxPage struct {
	Items []Activity
	// Next is the Published bound of the next page; zero on the last.
	Next time.Time
}

// OutboxPageSize is how many posts one outbox page reads.
const OutboxPageSize = 20

// Outbox returns the public posts of a persona (its Creates) or of a group
// (its Announces), published before `before` (zero: the newest).
func (h CollectionsHandler) Outbox(ctx context.Context, a LocalActor, before time.Time) (OutboxPage, error) {
	d := h.core.deps
	var posts []domain.Post
	var err error
	switch a.Kind {
	case domain.NameKindPersona:
		posts, err = d.Posts.PostsByAuthor(ctx, a.URI, before, OutboxPageSize)
	case domain.NameKindGroup:
		posts, err = d.Posts.PostsByGroup(ctx, a.URI, before, OutboxPageSize)
	default:
		return OutboxPage{}, nil // the instance actor posts nothing
	}
	if err != nil {
		return OutboxPage{}, err
	}
	var page OutboxPage
	for _, p := range posts {
		if p.Visibility != domain.VisibilityPublic {
			continue
		}
		note := h.note(p)
		if a.Kind == domain.NameKindGroup {
			page.Items = append(page.Items, Activity{
				ID: d.URLs.Activity(a.URI, "announce-"+shortHash(p.ObjectURI)), Type: "Announce", Actor: a.URI,
				Published: note.Published, To: []string{ASPublic}, CC: []string{d.URLs.Followers(a.URI), p.AuthorURI}, Object: note,
			})
			continue
		}
		page.Items = append(page.Items, Activity{
			ID: d.URLs.Activity(a.URI, p.ID), Type: "Create", Actor: a.URI, Published: note.Published,
			To: note.To, CC: note.CC, Object: note,
		})
	}
	if len(posts) == OutboxPageSize {
		page.Next = posts[len(posts)-1].Published
	}
	return page, nil
}

func (h CollectionsHandler) note(p domain.Post) Note {
	to, cc := addressing(p.Visibility, h.core.deps.URLs.Followers(p.AuthorURI), nil)
	if p.GroupURI != "" {
		to = append(to, p.GroupURI)
	}
	return Note{ID: p.ObjectURI, Type: "Note", AttributedTo: p.AuthorURI, Content: p.Content,
		Published: asTime(p.Published), To: to, CC: cc, InReplyTo: p.InReplyTo}.withExtras(p.Extras, h.core.deps.URLs.Tag)
}

// Note returns a local public note by its object URI.
func (h CollectionsHandler) Note(ctx context.Context, objectURI string) (Note, error) {
	p, err := h.core.deps.Posts.PostByObjectURI(ctx, objectURI)
	if err != nil {
		return Note{}, err
	}
	if !p.Local || p.Visibility != domain.VisibilityPublic {
		return Note{}, fmt.Errorf("%w: note %s", domain.ErrNotFound, clip(objectURI))
	}
	return h.note(p), nil
}

// FollowersPageSize is how many followers one collection page lists.
const FollowersPageSize = 50

// FollowersPage is one page of a followers collection.
type FollowersPage struct {
	Total int
	Items []string // follower actor URIs
	Next  string   // the after-cursor of the next page; empty on the last
}

// Followers returns the accepted followers of a local actor, after the
// given follower URI.
func (h CollectionsHandler) Followers(ctx context.Context, a LocalActor, after string) (FollowersPage, error) {
	d := h.core.deps
	total, err := d.Followers.CountFollowers(ctx, a.URI, domain.FollowAccepted)
	if err != nil {
		return FollowersPage{}, err
	}
	rows, err := d.Followers.Followers(ctx, a.URI, domain.FollowAccepted, after, FollowersPageSize+1)
	if err != nil {
		return FollowersPage{}, err
	}
	p := FollowersPage{Total: total}
	for i, f := range rows {
		if i == FollowersPageSize {
			p.Next = p.Items[i-1]
			break
		}
		p.Items = append(p.Items, f.FollowerURI)
	}
	return p, nil
}

// PostsBy lists the public posts this instance holds by one author, local
// or remote, newest first, published before `before` (zero: the newest).
// Reactions counts the Likes and Announces of a post.
func (h CollectionsHandler) Reactions(ctx context.Context, objectURI string) (map[domain.ReactionKind]int, error) {
	return h.core.deps.Posts.CountReactions(ctx, objectURI)
}

func (h CollectionsHandler) PostsBy(ctx context.Context, authorURI string, before time.Time, limit int) ([]domain.Post, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	posts, err := h.core.deps.Posts.PostsByAuthor(ctx, authorURI, before, limit)
	if err != nil {
		return nil, err
	}
	out := posts[:0]
	for _, p := range posts {
		if p.Visibility == domain.VisibilityPublic {
			out = append(out, p)
		}
	}
	return out, nil
}

// FeedItem is one entry of an actor's posts as a client lists them: a post
// it wrote, or a post it boosted (Boost set; Post is the boosted note). It
// is a timeline's entry: one type, so one merge, for both lists.
type FeedItem = TimelineEntry

// PostsAndBoostsBy lists an actor's public posts and its boosts together,
// newest first (a boost at the time of the boost), before `before` (zero:
// the newest), at most limit. A boost whose note went meanwhile is left out.
func (h CollectionsHandler) PostsAndBoostsBy(ctx context.Context, actorURI string, before time.Time, limit int) ([]FeedItem, error) {
	d := h.core.deps
	posts, err := h.PostsBy(ctx, actorURI, before, limit)
	if err != nil {
		return nil, err
	}
	boosts, err := d.Posts.BoostsBy(ctx, actorURI, before, limit)
	if err != nil {
		return nil, err
	}
	return merge(ctx, d.Posts, posts, boosts, limit)
}

// Tagged lists the public posts held here, local or received, that carry
// the hashtag tag (normalized), newest first, published before `before`
// (zero: no bound), at most limit.
func (h CollectionsHandler) Tagged(ctx context.Context, tag string, before time.Time, limit int) ([]domain.Post, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	return h.core.deps.Posts.PostsTagged(ctx, tag, before, limit)
}
