package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// Favourite asks that a persona like a note held here (a local one, or a
// remote one by its URI), or take its like back.
type Favourite struct {
	UserID string
	As     string // persona name
	Object string // the note's object URI
}

// Favourited says what became of a like.
type Favourited struct {
	ObjectURI  string
	ActivityID string // the Like (or its Undo); "" when nothing was sent
	Created    bool   // false: the persona had already liked it (or, for an undo, had not)
	EnqueueResult
}

// FavouriteHandler makes a persona like a note or unlike it: the like is
// recorded as the persona's reaction (the note's count has it, and the
// client API says the persona favourited it), and the Like, or its Undo,
// goes to the note's author when remote. A like is not announced to the
// persona's followers (Mastodon sends it to the author alone).
type FavouriteHandler struct{ core *fedCore }

// Handle likes. Liking a note twice sends nothing the second time.
func (h FavouriteHandler) Handle(ctx context.Context, cmd Favourite) (Favourited, error) {
	d := h.core.deps
	me, p, err := h.target(ctx, cmd)
	if err != nil {
		return Favourited{}, err
	}
	r, err := domain.NewReaction(p.ObjectURI, me.URI, domain.ReactionLike, d.Clock.Now())
	if err != nil {
		return Favourited{}, err
	}
	created, err := d.Posts.AddReaction(ctx, r)
	if err != nil {
		return Favourited{}, err
	}
	if !created {
		return Favourited{ObjectURI: p.ObjectURI}, nil
	}
	like := h.like(me, p)
	res, err := h.send(ctx, me, p, like)
	if err != nil {
		// Nothing was sent: the like is not kept, so a retry sends it.
		if rerr := d.Posts.RemoveReaction(context.WithoutCancel(ctx), p.ObjectURI, me.URI, domain.ReactionLike); rerr != nil {
			d.Log.ErrorContext(ctx, "could not undo a like whose Like failed", "object", p.ObjectURI, "err", rerr)
		}
		return Favourited{}, err
	}
	d.Log.InfoContext(ctx, "note liked", "object", p.ObjectURI, "actor", me.URI, "queued", res.Queued)
	return Favourited{ObjectURI: p.ObjectURI, ActivityID: like.ID, Created: true, EnqueueResult: res}, nil
}

// Undo takes a persona's like back and sends the Undo of its Like.
func (h FavouriteHandler) Undo(ctx context.Context, cmd Favourite) (Favourited, error) {
	d := h.core.deps
	me, p, err := h.target(ctx, cmd)
	if err != nil {
		return Favourited{}, err
	}
	err = d.Posts.RemoveReaction(ctx, p.ObjectURI, me.URI, domain.ReactionLike)
	if notFound(err) {
		return Favourited{ObjectURI: p.ObjectURI}, nil
	}
	if err != nil {
		return Favourited{}, err
	}
	like := h.like(me, p)
	undo := Activity{ID: like.ID + "/undo", Type: "Undo", Actor: me.URI, To: like.To, Object: like}
	res, err := h.send(ctx, me, p, undo)
	if err != nil {
		r, _ := domain.NewReaction(p.ObjectURI, me.URI, domain.ReactionLike, d.Clock.Now())
		if _, aerr := d.Posts.AddReaction(context.WithoutCancel(ctx), r); aerr != nil {
			d.Log.ErrorContext(ctx, "could not restore a like whose Undo failed", "object", p.ObjectURI, "err", aerr)
		}
		return Favourited{}, err
	}
	d.Log.InfoContext(ctx, "like undone by its persona", "object", p.ObjectURI, "actor", me.URI, "queued", res.Queued)
	return Favourited{ObjectURI: p.ObjectURI, ActivityID: undo.ID, Created: true, EnqueueResult: res}, nil
}

// target is the signed-in account's persona and the note it likes: a
// post held here (not a direct post: Herald keeps no reactions of those).
func (h FavouriteHandler) target(ctx context.Context, cmd Favourite) (LocalActor, domain.Post, error) {
	me, err := h.core.ownPersona(ctx, cmd.UserID, cmd.As)
	if err != nil {
		return LocalActor{}, domain.Post{}, err
	}
	if !httpURL(cmd.Object) {
		return LocalActor{}, domain.Post{}, fmt.Errorf("%w: object %q is not an http(s) URI", domain.ErrInvalidInput, clip(cmd.Object))
	}
	p, err := h.core.deps.Posts.PostByObjectURI(ctx, cmd.Object)
	if err != nil {
		return LocalActor{}, domain.Post{}, err
	}
	return me, p, nil
}

// like is the persona's Like of a note. Its id is derived from the note,
// so the Undo names the same Like without a stored id (receivers match an
// Undo{Like} by its actor and object; a like again after an undo reuses
// it, as its Undo removed it there).
func (h FavouriteHandler) like(me LocalActor, p domain.Post) Activity {
	return Activity{ID: h.core.deps.URLs.Activity(me.URI, "like-"+shortHash(p.ObjectURI)), Type: "Like", Actor: me.URI,
		To: []string{p.AuthorURI}, Object: p.ObjectURI}
}

// send delivers a like's activity to the note's author, when remote and
// not blocked either way (SPEC §11 "Personas"); a like of a local note
// goes nowhere.
func (h FavouriteHandler) send(ctx context.Context, me LocalActor, p domain.Post, act Activity) (EnqueueResult, error) {
	if h.core.local(p.AuthorURI) {
		return EnqueueResult{}, nil
	}
	fa, err := h.core.pub.Resolver.Resolve(ctx, p.AuthorURI)
	if notFound(err) {
		return EnqueueResult{}, nil
	}
	if err != nil {
		return EnqueueResult{}, err
	}
	if blocked, err := h.core.blocked(ctx, me.URI, fa.ActorURI); err != nil || blocked {
		return EnqueueResult{}, err
	}
	return h.core.send(ctx, me, act, []string{personalInbox(fa)})
}
