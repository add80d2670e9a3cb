package application

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// moderatedPosts is the PostStore every use case reads through (SPEC §11):
// the posts, direct posts and boosts of actors on a domain the federation
// policy refuses (suspended, or not allowed in allowlist mode) are hidden
// from every read, so no API and no collection shows them, while they stay
// stored: lifting the block shows them again. Writes pass through (a
// refused domain's writes never get past the inbox's gate).
//
// Every read is written out (no embedded PostStore), as in
// sanitizedPosts: a method added to the port must decide here whether it
// reads what a block hides. passingPosts holds the methods that read
// neither.
type moderatedPosts struct {
	passingPosts
	m *Moderation
}

var _ ports.PostStore = moderatedPosts{}

// moderatePosts wraps posts, once; without a policy there is nothing to
// hide.
func moderatePosts(posts ports.PostStore, m *Moderation) ports.PostStore {
	if _, ok := posts.(moderatedPosts); ok || posts == nil || m == nil {
		return posts
	}
	return moderatedPosts{passingPosts: passingPosts{posts}, m: m}
}

// hidden returns a function telling whether an actor's things are hidden
// now; the policy cannot be read → the error (the read fails rather than
// show what may be hidden).
func (s moderatedPosts) hidden(ctx context.Context) (func(actorURI string) bool, error) {
	p, err := s.m.Policy(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: the federation policy cannot be read: %v", domain.ErrUnavailable, err)
	}
	return func(actor string) bool { return p.Of(hostOf(actor)).Refused() }, nil
}

func keep[T any](ctx context.Context, s moderatedPosts, items []T, err error, author func(T) string) ([]T, error) {
	if err != nil {
		return nil, err
	}
	hide, err := s.hidden(ctx)
	if err != nil {
		return nil, err
	}
	out := items[:0]
	for _, it := range items {
		if !hide(author(it)) {
			out = append(out, it)
		}
	}
	return out, nil
}

// keepOne is keep for one item, at uri by author: domain.ErrNotFound when
// the author is hidden.
func keepOne[T any](ctx context.Context, s moderatedPosts, item T, err error, uri, author string) (T, error) {
	if err != nil {
		return item, err
	}
	if err := s.one(ctx, uri, author); err != nil {
		var zero T
		return zero, err
	}
	return item, nil
}

func (s moderatedPosts) one(ctx context.Context, uri, author string) error {
	hide, err := s.hidden(ctx)
	if err != nil {
		return err
	}
	if hide(author) {
		return fmt.Errorf("post %q: %w", uri, domain.ErrNotFound)
	}
	return nil
}

func postAuthor(p domain.Post) string  { return p.AuthorURI }
func dmAuthor(d domain.DmPost) string  { return d.AuthorURI }
func boostActor(b domain.Boost) string { return b.ActorURI }

func (s moderatedPosts) PostByObjectURI(ctx context.Context, objectURI string) (domain.Post, error) {
	p, err := s.posts.PostByObjectURI(ctx, objectURI)
	return keepOne(ctx, s, p, err, objectURI, p.AuthorURI)
}

func (s moderatedPosts) PostsByAuthor(ctx context.Context, authorURI string, before time.Time, limit int) ([]domain.Post, error) {
	ps, err := s.posts.PostsByAuthor(ctx, authorURI, before, limit)
	return keep(ctx, s, ps, err, postAuthor)
}

func (s moderatedPosts) PostsByGroup(ctx context.Context, groupURI string, before time.Time, limit int) ([]domain.Post, error) {
	ps, err := s.posts.PostsByGroup(ctx, groupURI, before, limit)
	return keep(ctx, s, ps, err, postAuthor)
}

func (s moderatedPosts) PostsMentioning(ctx context.Context, actorURI string, before time.Time, limit int) ([]domain.Post, error) {
	ps, err := s.posts.PostsMentioning(ctx, actorURI, before, limit)
	return keep(ctx, s, ps, err, postAuthor)
}

func (s moderatedPosts) PostsTagged(ctx context.Context, tag string, before time.Time, limit int) ([]domain.Post, error) {
	ps, err := s.posts.PostsTagged(ctx, tag, before, limit)
	return keep(ctx, s, ps, err, postAuthor)
}

func (s moderatedPosts) DmByObjectURI(ctx context.Context, objectURI string) (domain.DmPost, error) {
	d, err := s.posts.DmByObjectURI(ctx, objectURI)
	return keepOne(ctx, s, d, err, objectURI, d.AuthorURI)
}

func (s moderatedPosts) DmByID(ctx context.Context, id string) (domain.DmPost, error) {
	d, err := s.posts.DmByID(ctx, id)
	return keepOne(ctx, s, d, err, d.ObjectURI, d.AuthorURI)
}

func (s moderatedPosts) DmThread(ctx context.Context, participantsKey string, before time.Time, limit int) ([]domain.DmPost, error) {
	ds, err := s.posts.DmThread(ctx, participantsKey, before, limit)
	return keep(ctx, s, ds, err, dmAuthor)
}

func (s moderatedPosts) PostByID(ctx context.Context, id string) (domain.Post, error) {
	p, err := s.posts.PostByID(ctx, id)
	return keepOne(ctx, s, p, err, p.ObjectURI, p.AuthorURI)
}

func (s moderatedPosts) PostsByAuthors(ctx context.Context, authorURIs []string, before time.Time, limit int) ([]domain.Post, error) {
	ps, err := s.posts.PostsByAuthors(ctx, authorURIs, before, limit)
	return keep(ctx, s, ps, err, postAuthor)
}

func (s moderatedPosts) PublicPosts(ctx context.Context, origin ports.Origin, before time.Time, limit int) ([]domain.Post, error) {
	ps, err := s.posts.PublicPosts(ctx, origin, before, limit)
	return keep(ctx, s, ps, err, postAuthor)
}

func (s moderatedPosts) BoostsByActors(ctx context.Context, actorURIs []string, before time.Time, limit int) ([]domain.Boost, error) {
	bs, err := s.posts.BoostsByActors(ctx, actorURIs, before, limit)
	return keep(ctx, s, bs, err, boostActor)
}

func (s moderatedPosts) Replies(ctx context.Context, objectURI string, limit int) ([]domain.Post, error) {
	ps, err := s.posts.Replies(ctx, objectURI, limit)
	return keep(ctx, s, ps, err, postAuthor)
}

func (s moderatedPosts) BoostsBy(ctx context.Context, actorURI string, before time.Time, limit int) ([]domain.Boost, error) {
	bs, err := s.posts.BoostsBy(ctx, actorURI, before, limit)
	return keep(ctx, s, bs, err, boostActor)
}

// Writes read nothing a block hides, and pass through; so does what
// passingPosts holds.

func (s moderatedPosts) CreatePost(ctx context.Context, p domain.Post) (bool, error) {
	return s.posts.CreatePost(ctx, p)
}

func (s moderatedPosts) CreateDm(ctx context.Context, d domain.DmPost) (bool, error) {
	return s.posts.CreateDm(ctx, d)
}

func (s moderatedPosts) UpdateContent(ctx context.Context, objectURI, content string, e domain.Extras, updated time.Time) (bool, error) {
	return s.posts.UpdateContent(ctx, objectURI, content, e, updated)
}
