package application

import (
	"context"
	"errors"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// sanitizedPosts is the PostStore every use case sees (SPEC §10: no API
// ever returns unsanitized content). It sanitizes a post's content on each
// write, so remote HTML is clean when it arrives, and again on each read,
// so rows stored before Herald sanitized (or by an older allowlist) are
// clean whatever reads them: the client API, the ActivityPub collections,
// a group's Announce. The sanitizer is idempotent, so content written here
// reads back unchanged. New wraps the store in it, so no caller can
// leave it out.
//
// Every method is written out here or in passingPosts (no embedded
// PostStore): a method added to the port does not compile here until
// someone decides whether it reads or writes content.
type sanitizedPosts struct {
	passingPosts
	html ports.HTMLSanitizer
}

var _ ports.PostStore = sanitizedPosts{}

// errNoSanitizer fails every read and write of content when the deps hold
// no sanitizer: closed, rather than content served raw.
var errNoSanitizer = errors.New("application: the deps hold no HTMLSanitizer; content is neither stored nor shown")

// sanitizePosts wraps posts, once.
func sanitizePosts(posts ports.PostStore, html ports.HTMLSanitizer) ports.PostStore {
	if _, ok := posts.(sanitizedPosts); ok || posts == nil {
		return posts
	}
	return sanitizedPosts{passingPosts: passingPosts{posts}, html: html}
}

func (s sanitizedPosts) clean(content string) (string, error) {
	if s.html == nil {
		return "", errNoSanitizer
	}
	return s.html.SanitizeHTML(content), nil
}

// cleanExtras is what a post carries as a reader may see it: its
// plain-text fields (content warning, alt texts, poll options) stripped of
// markup, and within the limits of SPEC §12 (URLs http(s) only, lengths
// and counts cut) whatever a store holds.
func (s sanitizedPosts) cleanExtras(e domain.Extras) (domain.Extras, error) {
	if s.html == nil {
		return domain.Extras{}, errNoSanitizer
	}
	return cleanExtras(s.html, e), nil
}

func cleanExtras(html ports.HTMLSanitizer, e domain.Extras) domain.Extras {
	if e.Empty() {
		return e
	}
	e = e.Clone()
	e.Summary = html.SanitizeText(e.Summary)
	for i := range e.Attachments {
		e.Attachments[i].Name = html.SanitizeText(e.Attachments[i].Name)
	}
	if e.Poll != nil {
		for i := range e.Poll.Options {
			e.Poll.Options[i].Name = html.SanitizeText(e.Poll.Options[i].Name)
		}
	}
	return domain.NormalizeRemoteExtras(e)
}

func (s sanitizedPosts) cleanPost(p domain.Post, err error) (domain.Post, error) {
	if err != nil {
		return p, err
	}
	p.Content, p.Extras, err = s.cleanBody(p.Content, p.Extras)
	return p, err
}

func (s sanitizedPosts) cleanPosts(ps []domain.Post, err error) ([]domain.Post, error) {
	return cleanEach(ps, err, s.cleanPost)
}

// cleanEach cleans every item of a list read (err: the read's error).
func cleanEach[T any](items []T, err error, clean func(T, error) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	for i := range items {
		if items[i], err = clean(items[i], nil); err != nil {
			return nil, err
		}
	}
	return items, nil
}

func (s sanitizedPosts) cleanDm(d domain.DmPost, err error) (domain.DmPost, error) {
	if err != nil {
		return d, err
	}
	d.Content, d.Extras, err = s.cleanBody(d.Content, d.Extras)
	return d, err
}

// cleanBody cleans what a post and a direct post both carry: the content,
// and then the extras (left as they were when the content fails).
func (s sanitizedPosts) cleanBody(content string, e domain.Extras) (string, domain.Extras, error) {
	content, err := s.clean(content)
	if err != nil {
		return content, e, err
	}
	e, err = s.cleanExtras(e)
	return content, e, err
}

// CreatePost stores the post with its content sanitized. Sanitizing may
// leave nothing (a note that was only a script): it is stored empty
// rather than refused, since a 4xx is final for the sender.
func (s sanitizedPosts) CreatePost(ctx context.Context, p domain.Post) (bool, error) {
	p, err := s.cleanPost(p, nil)
	if err != nil {
		return false, err
	}
	return s.posts.CreatePost(ctx, p)
}

// CreateDm is CreatePost for direct posts.
func (s sanitizedPosts) CreateDm(ctx context.Context, d domain.DmPost) (bool, error) {
	d, err := s.cleanDm(d, nil)
	if err != nil {
		return false, err
	}
	return s.posts.CreateDm(ctx, d)
}

// UpdateContent stores the new content and extras sanitized.
func (s sanitizedPosts) UpdateContent(ctx context.Context, objectURI, content string, e domain.Extras, updated time.Time) (bool, error) {
	content, err := s.clean(content)
	if err != nil {
		return false, err
	}
	if e, err = s.cleanExtras(e); err != nil {
		return false, err
	}
	return s.posts.UpdateContent(ctx, objectURI, content, e, updated)
}

func (s sanitizedPosts) PostByObjectURI(ctx context.Context, objectURI string) (domain.Post, error) {
	return s.cleanPost(s.posts.PostByObjectURI(ctx, objectURI))
}

func (s sanitizedPosts) PostByID(ctx context.Context, id string) (domain.Post, error) {
	return s.cleanPost(s.posts.PostByID(ctx, id))
}

func (s sanitizedPosts) PostsByAuthors(ctx context.Context, authorURIs []string, before time.Time, limit int) ([]domain.Post, error) {
	return s.cleanPosts(s.posts.PostsByAuthors(ctx, authorURIs, before, limit))
}

func (s sanitizedPosts) PublicPosts(ctx context.Context, origin ports.Origin, before time.Time, limit int) ([]domain.Post, error) {
	return s.cleanPosts(s.posts.PublicPosts(ctx, origin, before, limit))
}

func (s sanitizedPosts) BoostsByActors(ctx context.Context, actorURIs []string, before time.Time, limit int) ([]domain.Boost, error) {
	return s.posts.BoostsByActors(ctx, actorURIs, before, limit)
}

func (s sanitizedPosts) Replies(ctx context.Context, objectURI string, limit int) ([]domain.Post, error) {
	return s.cleanPosts(s.posts.Replies(ctx, objectURI, limit))
}

func (s sanitizedPosts) PostsByAuthor(ctx context.Context, authorURI string, before time.Time, limit int) ([]domain.Post, error) {
	return s.cleanPosts(s.posts.PostsByAuthor(ctx, authorURI, before, limit))
}

func (s sanitizedPosts) PostsByGroup(ctx context.Context, groupURI string, before time.Time, limit int) ([]domain.Post, error) {
	return s.cleanPosts(s.posts.PostsByGroup(ctx, groupURI, before, limit))
}

func (s sanitizedPosts) PostsMentioning(ctx context.Context, actorURI string, before time.Time, limit int) ([]domain.Post, error) {
	return s.cleanPosts(s.posts.PostsMentioning(ctx, actorURI, before, limit))
}

func (s sanitizedPosts) DmByObjectURI(ctx context.Context, objectURI string) (domain.DmPost, error) {
	return s.cleanDm(s.posts.DmByObjectURI(ctx, objectURI))
}

func (s sanitizedPosts) DmByID(ctx context.Context, id string) (domain.DmPost, error) {
	return s.cleanDm(s.posts.DmByID(ctx, id))
}

func (s sanitizedPosts) DmThread(ctx context.Context, participantsKey string, before time.Time, limit int) ([]domain.DmPost, error) {
	ds, err := s.posts.DmThread(ctx, participantsKey, before, limit)
	return cleanEach(ds, err, s.cleanDm)
}

func (s sanitizedPosts) PostsTagged(ctx context.Context, tag string, before time.Time, limit int) ([]domain.Post, error) {
	return s.cleanPosts(s.posts.PostsTagged(ctx, tag, before, limit))
}

// Boosts hold no content and pass through; so does what passingPosts
// holds.

func (s sanitizedPosts) BoostsBy(ctx context.Context, actorURI string, before time.Time, limit int) ([]domain.Boost, error) {
	return s.posts.BoostsBy(ctx, actorURI, before, limit)
}
