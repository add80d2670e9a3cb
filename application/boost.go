package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// errNoteRefused marks a boosted note that cannot be kept: gone, not
// public, refused by its server, or over the remote limits. An incoming
// Announce of it is accepted and ignored; a persona's boost of it is
// domain.ErrInvalidInput.
var errNoteRefused = errors.New("note refused")

// boost stores an Announce of a remote note as a boost, when the booster
// is followed by one of our actors (a boost is shown to whoever follows
// its booster; from a stranger it would only be spam). The note is
// fetched from its server, signed as the instance actor, when we do not
// hold it: the Announce's embedded copy, if any, is not taken, as anyone
// could write one. A redelivery is a duplicate.
func (h InboxHandler) boost(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	target := act.Object.ID
	followed, err := h.core.followedHere(ctx, signer)
	if err != nil {
		return InboxResult{}, err
	}
	if !followed {
		return h.core.ignore(ctx, act, "announce by an actor no one here follows"), nil
	}
	if !httpURL(act.ID) || !sameHost(act.ID, signer) {
		return InboxResult{}, fmt.Errorf("%w: an Announce needs an http(s) id on the signer's server", domain.ErrInvalidInput)
	}
	if !httpURL(target) {
		return InboxResult{}, fmt.Errorf("%w: Announce of %q, which is not an http(s) URI", domain.ErrInvalidInput, clip(target))
	}
	p, err := h.core.boostable(ctx, target)
	if errors.Is(err, errNoteRefused) {
		return h.core.ignore(ctx, act, err.Error()), nil
	}
	if err != nil {
		return InboxResult{}, err
	}
	b, err := domain.NewBoost(act.ID, signer, p.ObjectURI, d.Clock.Now())
	if err != nil {
		return InboxResult{}, err
	}
	created, err := d.Posts.AddBoost(ctx, b)
	if notFound(err) {
		return h.core.ignore(ctx, act, "announce of a note deleted meanwhile"), nil
	}
	if err != nil {
		return InboxResult{}, err
	}
	if !created {
		return InboxResult{Duplicate: true}, nil
	}
	d.Log.InfoContext(ctx, "boost recorded", "object", p.ObjectURI, "actor", signer, "activity", act.ID)
	return InboxResult{}, nil
}

// undoBoost handles Undo{Announce} of a remote note: the booster's boost
// named by the Announce's object, else by its id, goes.
func (h InboxHandler) undoBoost(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	for _, key := range []string{o.Object, o.ID} {
		if key == "" {
			continue
		}
		b, err := d.Posts.RemoveBoost(ctx, signer, key)
		if notFound(err) {
			continue
		}
		if err != nil {
			return InboxResult{}, err
		}
		d.Log.InfoContext(ctx, "boost undone", "object", b.ObjectURI, "actor", signer, "activity", b.ActivityURI)
		return InboxResult{}, nil
	}
	return h.core.ignore(ctx, act, "undo of an unknown announce"), nil
}

// followedHere reports whether one of our actors follows the remote actor
// (accepted). Every follow of a remote actor stored here is one of ours.
func (c *fedCore) followedHere(ctx context.Context, actorURI string) (bool, error) {
	fs, err := c.deps.Followers.Followers(ctx, actorURI, domain.FollowAccepted, "", 1)
	if err != nil {
		return false, err
	}
	return len(fs) > 0, nil
}

// boostable returns the public post a boost is of: held here already,
// else fetched from its server and stored. Errors wrapping errNoteRefused
// say why a note cannot be boosted; others are worth a retry.
func (c *fedCore) boostable(ctx context.Context, uri string) (domain.Post, error) {
	d := c.deps
	p, err := d.Posts.PostByObjectURI(ctx, uri)
	if err == nil {
		if p.Visibility != domain.VisibilityPublic {
			return domain.Post{}, fmt.Errorf("%w: %s is not public", errNoteRefused, clip(uri))
		}
		return p, nil
	}
	if !notFound(err) {
		return domain.Post{}, err
	}
	if c.local(uri) {
		return domain.Post{}, fmt.Errorf("%w: no note %s here", errNoteRefused, clip(uri))
	}
	return c.fetchNote(ctx, uri)
}

// fetchNote GETs a remote note through the Dereferencer (so the note is
// its origin's own) and stores it as a remote public post, within the
// remote content limits. The note must be attributed to an actor of its
// server, be public, and not have been deleted.
func (c *fedCore) fetchNote(ctx context.Context, uri string) (domain.Post, error) {
	d := c.deps
	doc, err := Dereferencer{core: c}.fetch(ctx, uri)
	if errors.Is(err, domain.ErrUnavailable) || isCacheError(err) {
		// Their server, or our network or store, now: the sender may retry.
		return domain.Post{}, fmt.Errorf("fetch note %s: %w", clip(uri), err)
	}
	if err != nil {
		return domain.Post{}, fmt.Errorf("%w: fetch %s: %v", errNoteRefused, clip(uri), err)
	}
	o, err := decodeIncomingObject(doc.Body)
	if err != nil {
		return domain.Post{}, fmt.Errorf("%w: %s: %v", errNoteRefused, clip(uri), err)
	}
	switch {
	case !noteTypes[o.Type]:
		return domain.Post{}, fmt.Errorf("%w: %s is a %q, not a note", errNoteRefused, clip(uri), clip(o.Type))
	case !httpURL(o.Author) || !sameHost(o.Author, o.ID):
		return domain.Post{}, fmt.Errorf("%w: note %s is not attributed to an actor of its server", errNoteRefused, clip(o.ID))
	case !isPublic(o.Audience):
		return domain.Post{}, fmt.Errorf("%w: note %s is not public", errNoteRefused, clip(o.ID))
	}
	if err := c.deleted(ctx, o.ID, o.Author); err != nil {
		if isCacheError(err) {
			return domain.Post{}, err
		}
		return domain.Post{}, fmt.Errorf("%w: %v", errNoteRefused, err)
	}
	if o.ID != uri {
		// The note's own id is its key here: a copy may already be held.
		if p, err := d.Posts.PostByObjectURI(ctx, o.ID); err == nil {
			return p, nil
		}
	}
	published := o.Publish
	if published.IsZero() {
		published = d.Clock.Now()
	}
	p, err := domain.NewRemotePost(d.IDs.NewID(), o.ID, o.Author, o.Content, domain.VisibilityPublic, published)
	if err != nil {
		return domain.Post{}, fmt.Errorf("%w: note %s: %v", errNoteRefused, clip(o.ID), err)
	}
	p.InReplyTo = o.Reply
	p.Mentions = o.Mentions
	if o.Updated.After(p.Published) {
		p.Updated = o.Updated // edited before we fetched it
	}
	if _, err := d.Posts.CreatePost(ctx, p); err != nil {
		return domain.Post{}, err
	}
	d.Log.InfoContext(ctx, "boosted note fetched", "object", p.ObjectURI, "author", p.AuthorURI)
	return d.Posts.PostByObjectURI(ctx, p.ObjectURI)
}

// Boost asks that a persona boost a note (a local one, or a remote one by
// its URI).
type Boost struct {
	UserID string
	As     string // persona name
	Object string // the note's object URI
}

// Boosted says what became of a boost.
type Boosted struct {
	ObjectURI  string
	ActivityID string // the Announce (or its Undo)
	Created    bool   // false: the persona had already boosted it (or, for an undo, had not)
	EnqueueResult
}

// BoostHandler makes a persona boost a note or take its boost back: the
// boost is stored (it shows among the persona's posts) and its Announce,
// or the Undo of it, goes to the persona's followers and the note's author.
type BoostHandler struct{ core *fedCore }

// Handle boosts. Boosting a note twice sends nothing the second time.
func (h BoostHandler) Handle(ctx context.Context, cmd Boost) (Boosted, error) {
	d := h.core.deps
	me, err := h.core.ownPersona(ctx, cmd.UserID, cmd.As)
	if err != nil {
		return Boosted{}, err
	}
	if !httpURL(cmd.Object) {
		return Boosted{}, fmt.Errorf("%w: object %q is not an http(s) URI", domain.ErrInvalidInput, clip(cmd.Object))
	}
	p, err := h.core.boostable(ctx, cmd.Object)
	if errors.Is(err, errNoteRefused) {
		return Boosted{}, fmt.Errorf("%w: %v", domain.ErrInvalidInput, err)
	}
	if err != nil {
		return Boosted{}, err
	}
	now := d.Clock.Now()
	b, err := domain.NewBoost(d.URLs.Activity(me.URI, d.IDs.NewID()), me.URI, p.ObjectURI, now)
	if err != nil {
		return Boosted{}, err
	}
	created, err := d.Posts.AddBoost(ctx, b)
	if err != nil {
		return Boosted{}, err
	}
	if !created {
		return Boosted{ObjectURI: p.ObjectURI}, nil
	}
	act := h.announce(me, b, p)
	res, err := h.send(ctx, me, p, act)
	if err != nil {
		// Nothing was sent: the boost is not kept, so a retry sends it.
		if _, rerr := d.Posts.RemoveBoost(context.WithoutCancel(ctx), me.URI, p.ObjectURI); rerr != nil {
			d.Log.ErrorContext(ctx, "could not undo a boost whose Announce failed", "object", p.ObjectURI, "err", rerr)
		}
		return Boosted{}, err
	}
	d.Log.InfoContext(ctx, "note boosted", "object", p.ObjectURI, "actor", me.URI, "queued", res.Queued)
	return Boosted{ObjectURI: p.ObjectURI, ActivityID: b.ActivityURI, Created: true, EnqueueResult: res}, nil
}

// Undo takes a persona's boost back and sends the Undo of its Announce.
func (h BoostHandler) Undo(ctx context.Context, cmd Boost) (Boosted, error) {
	d := h.core.deps
	me, err := h.core.ownPersona(ctx, cmd.UserID, cmd.As)
	if err != nil {
		return Boosted{}, err
	}
	b, err := d.Posts.RemoveBoost(ctx, me.URI, cmd.Object)
	if notFound(err) {
		return Boosted{ObjectURI: cmd.Object}, nil
	}
	if err != nil {
		return Boosted{}, err
	}
	p, err := d.Posts.PostByObjectURI(ctx, b.ObjectURI)
	if notFound(err) {
		return Boosted{ObjectURI: b.ObjectURI}, nil // the note went, and its boosts with it
	}
	if err != nil {
		return Boosted{}, err
	}
	announce := h.announce(me, b, p)
	announce.Object = p.ObjectURI
	undo := Activity{ID: b.ActivityURI + "/undo", Type: "Undo", Actor: me.URI, To: announce.To, CC: announce.CC, Object: announce}
	res, err := h.send(ctx, me, p, undo)
	if err != nil {
		if _, aerr := d.Posts.AddBoost(context.WithoutCancel(ctx), b); aerr != nil {
			d.Log.ErrorContext(ctx, "could not restore a boost whose Undo failed", "object", p.ObjectURI, "err", aerr)
		}
		return Boosted{}, err
	}
	d.Log.InfoContext(ctx, "boost undone by its persona", "object", p.ObjectURI, "actor", me.URI, "queued", res.Queued)
	return Boosted{ObjectURI: p.ObjectURI, ActivityID: undo.ID, Created: true, EnqueueResult: res}, nil
}

// announce is the persona's Announce of a note, public as Mastodon sends
// it: to Public, cc the persona's followers and the note's author.
func (h BoostHandler) announce(me LocalActor, b domain.Boost, p domain.Post) Activity {
	u := h.core.deps.URLs
	return Activity{ID: b.ActivityURI, Type: "Announce", Actor: me.URI, Published: asTime(b.CreatedAt),
		To: []string{ASPublic}, CC: []string{u.Followers(me.URI), p.AuthorURI}, Object: p.ObjectURI}
}

// send delivers a boost's activity to the persona's followers and to the
// note's author (who counts it), when remote.
func (h BoostHandler) send(ctx context.Context, me LocalActor, p domain.Post, act Activity) (EnqueueResult, error) {
	pub := h.core.pub
	var inboxes []string
	if !h.core.local(p.AuthorURI) {
		fa, err := pub.Resolver.Resolve(ctx, p.AuthorURI)
		if err != nil && !notFound(err) {
			return EnqueueResult{}, err
		}
		if err == nil {
			// Not to an author blocked either way (SPEC §11 "Personas").
			if blocked, err := h.core.blocked(ctx, me.URI, fa.ActorURI); err != nil {
				return EnqueueResult{}, err
			} else if !blocked {
				inboxes = append(inboxes, fa.DeliveryInbox())
			}
		}
	}
	return h.core.broadcast(ctx, me, act, inboxes)
}

// ownPersona is the signed-in account's persona of that name.
func (c *fedCore) ownPersona(ctx context.Context, userID, name string) (LocalActor, error) {
	a, err := c.deps.Actors.AvatarByName(ctx, strings.ToLower(strings.TrimSpace(name)))
	if notFound(err) {
		return LocalActor{}, fmt.Errorf("%w: no persona %q", domain.ErrInvalidInput, clip(name))
	}
	if err != nil {
		return LocalActor{}, err
	}
	if a.RootUserID == "" || a.RootUserID != userID {
		return LocalActor{}, fmt.Errorf("%w: persona %q is not yours", domain.ErrForbidden, clip(name))
	}
	return LocalActor{Kind: domain.NameKindPersona, ID: a.ID, Name: a.Name, DisplayName: a.DisplayName,
		URI: c.deps.URLs.Persona(a.Name), PublicKeyPEM: a.Keys.PublicPEM, OwnerID: a.RootUserID, Locked: a.Locked,
		Summary: bioHTML(c.deps.HTML, a.Note)}, nil
}
