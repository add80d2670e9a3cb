package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
)

// StatusView is what a status entity shows of one post for one viewer
// beside the post itself: its counts, the post it replies to (when held
// here), and what the viewer did to it.
type StatusView struct {
	Likes, Announces int
	// Parent is the post it replies to; zero when it replies to none or
	// to one not held here.
	Parent domain.Post
	// Favourited and Reblogged: the viewer liked it, boosted it.
	Favourited, Reblogged bool
	// OwnVotes are the options of its poll the viewer voted for.
	OwnVotes []string
}

// Now is the client API's clock (a poll's entity tells whether it
// expired).
func (h StatusesHandler) Now() time.Time { return h.deps.Clock.Now() }

// View reads what a status entity shows of p for the viewer (a token
// without a persona sees counts only).
func (h StatusesHandler) View(ctx context.Context, viewer Principal, p domain.Post) (StatusView, error) {
	var v StatusView
	counts, err := h.deps.Posts.CountReactions(ctx, p.ObjectURI)
	if err != nil {
		return StatusView{}, err
	}
	v.Likes, v.Announces = counts[domain.ReactionLike], counts[domain.ReactionAnnounce]
	if p.InReplyTo != "" {
		parent, err := h.deps.Posts.PostByObjectURI(ctx, p.InReplyTo)
		if err != nil && !notFound(err) {
			return StatusView{}, err
		}
		if err == nil {
			v.Parent = parent
		}
	}
	if !viewer.HasUser() {
		return v, nil
	}
	me := h.deps.URLs.Persona(viewer.Avatar.Name)
	done, err := h.deps.Posts.ReactedTo(ctx, me, []string{p.ObjectURI})
	if err != nil {
		return StatusView{}, err
	}
	for _, r := range done {
		v.Favourited = v.Favourited || r.Kind == domain.ReactionLike
		v.Reblogged = v.Reblogged || r.Kind == domain.ReactionAnnounce
	}
	if p.Poll != nil && h.deps.Polls != nil {
		if v.OwnVotes, err = h.deps.Polls.VotesOf(ctx, p.ObjectURI, me); err != nil {
			return StatusView{}, err
		}
	}
	return v, nil
}

// LocalAuthor returns the live persona that wrote a post of that author
// URI; ok is false for a remote author (or a local actor that is no
// persona any more).
func (h StatusesHandler) LocalAuthor(ctx context.Context, authorURI string) (domain.Avatar, bool, error) {
	prefix := h.deps.URLs.Persona("")
	if !strings.HasPrefix(authorURI, prefix) {
		return domain.Avatar{}, false, nil
	}
	a, err := h.deps.Actors.AvatarByName(ctx, strings.TrimPrefix(authorURI, prefix))
	if notFound(err) {
		return domain.Avatar{}, false, nil
	}
	if err != nil {
		return domain.Avatar{}, false, err
	}
	if !livePersona(a) {
		return domain.Avatar{}, false, nil
	}
	return a, true, nil
}

// ByID returns the post of that status id if the viewer may see it
// (CanSee); domain.ErrNotFound otherwise, as for a post that does not
// exist, so a hidden post's existence does not show.
func (h StatusesHandler) ByID(ctx context.Context, viewer Principal, id string) (domain.Post, error) {
	if !validPostID(id) {
		return domain.Post{}, fmt.Errorf("%w: no status %q", domain.ErrNotFound, clip(id))
	}
	p, err := h.deps.Posts.PostByID(ctx, id)
	if notFound(err) && viewer.HasUser() {
		// A direct post (no Post: this is the one way a status reads it),
		// local or received, for its participants only (SPEC §11); to
		// anyone else it does not exist.
		me := h.deps.URLs.Persona(viewer.Avatar.Name)
		d, derr := h.deps.Posts.DmByID(ctx, id)
		if derr == nil && slices.Contains(d.Participants, me) {
			return directStatus(d), nil
		}
		if derr != nil && !notFound(derr) {
			return domain.Post{}, derr
		}
	}
	if err != nil {
		return domain.Post{}, err
	}
	ok, err := h.CanSee(ctx, viewer, p)
	if err != nil {
		return domain.Post{}, err
	}
	if !ok {
		return domain.Post{}, fmt.Errorf("%w: no status %q", domain.ErrNotFound, clip(id))
	}
	return p, nil
}

// CanSee reports whether the viewer may see p (SPEC §11): a public post,
// unless its author and the viewer's persona block each other; a
// followers-only one only by its author and its accepted followers. A
// token without a persona sees public posts. (Posts of refused domains
// never reach here: the moderated store hides them.)
func (h StatusesHandler) CanSee(ctx context.Context, viewer Principal, p domain.Post) (bool, error) {
	if !viewer.HasUser() {
		return p.Visibility == domain.VisibilityPublic, nil
	}
	me := h.deps.URLs.Persona(viewer.Avatar.Name)
	if p.AuthorURI == me {
		return true, nil
	}
	if blocked, err := blockedBetween(ctx, h.deps.Blocks, me, p.AuthorURI); err != nil || blocked {
		return false, err
	}
	switch p.Visibility {
	case domain.VisibilityPublic:
		return true, nil
	case domain.VisibilityFollowers:
		f, err := h.deps.Followers.Get(ctx, me, p.AuthorURI)
		if notFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return f.State == domain.FollowAccepted, nil
	}
	return false, nil
}

// directStatus is a direct post as a status shows it: visibility direct,
// the other participants mentioned.
func directStatus(d domain.DmPost) domain.Post {
	var others []string
	for _, u := range d.Participants {
		if u != d.AuthorURI {
			others = append(others, u)
		}
	}
	return domain.Post{ID: d.ID, ObjectURI: d.ObjectURI, AuthorURI: d.AuthorURI, Content: d.Content, Visibility: domain.VisibilityDirect,
		Mentions: others, Published: d.Published, Updated: d.Updated, Local: d.Local, Extras: d.Extras}
}
