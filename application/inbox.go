package application

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// InboxRequest is one activity that arrived at an inbox, after the
// ActivityPub adapter verified its HTTP Signature.
type InboxRequest struct {
	// Recipient is the actor URI of the personal inbox it was posted to;
	// empty for the shared inbox.
	Recipient string
	// Signer is the remote actor whose key signed the request.
	Signer   domain.ForeignAvatar
	Activity Incoming
}

// InboxResult says what became of an activity that was accepted.
type InboxResult struct {
	Ignored   bool   // accepted and dropped: unknown type, nothing to act on
	Duplicate bool   // already had it (a redelivery)
	Reason    string // why it was ignored
}

// FollowObject is an embedded Follow, as Accepts and Undos carry it.
type FollowObject struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Actor  string `json:"actor"`
	Object string `json:"object"`
}

// InboxHandler acts on verified incoming activities: Follow, Undo{Follow},
// Accept and Reject of our follows, Create{Note}, Delete, Update{actor}.
// Other types are accepted and ignored. Each activity either takes full
// effect or none: a failure half way undoes what was written.
type InboxHandler struct{ core *fedCore }

// Handle acts on one activity. The activity's actor must be the signer.
func (h InboxHandler) Handle(ctx context.Context, req InboxRequest) (InboxResult, error) {
	act := req.Activity
	if act.Actor == "" || act.Actor != req.Signer.ActorURI {
		return InboxResult{}, fmt.Errorf("%w: activity actor %q is not the signer %q", domain.ErrUnauthorized, clip(act.Actor), req.Signer.ActorURI)
	}
	switch act.Type {
	case "Follow":
		return h.follow(ctx, req)
	case "Undo":
		return h.undo(ctx, req)
	case "Accept", "Reject":
		return h.answer(ctx, req)
	case "Create":
		return h.create(ctx, req)
	case "Delete":
		return h.delete(ctx, req)
	case "Update":
		return h.update(ctx, req)
	case "Like":
		return h.react(ctx, req, domain.ReactionLike)
	case "Announce":
		return h.react(ctx, req, domain.ReactionAnnounce)
	case "Flag":
		return h.flag(ctx, req)
	case "Block":
		return h.block(ctx, req)
	}
	return h.core.ignore(ctx, act, "unsupported activity type"), nil
}

// addFollower stores f unless the pair is stored already, and says
// whether it created it and the state the pair had before (pending when
// created). A pair found and then gone before it could be read was
// removed by a concurrent Undo of an earlier Follow (GoToSocial sends the
// Undo and a new Follow back to back): the add is tried again, since a 4xx
// would make the sender drop the newer Follow for good.
func addFollower(ctx context.Context, followers ports.FollowerStore, f domain.Follower) (created bool, prev domain.FollowState, err error) {
	for try := 0; ; try++ {
		created, err := followers.Add(ctx, f)
		if err != nil || created {
			return created, f.State, err
		}
		cur, err := followers.Get(ctx, f.FollowerURI, f.FollowedURI)
		if errors.Is(err, domain.ErrNotFound) && try < 2 {
			continue
		}
		if err != nil {
			return false, "", err
		}
		return false, cur.State, nil
	}
}

// follow stores the follower and, unless the actor is locked or the
// follower's domain silenced (the follow then waits, pending), accepts at
// once and sends the Accept to the follower's inbox.
func (h InboxHandler) follow(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	if !httpURL(act.ID) {
		return InboxResult{}, fmt.Errorf("%w: a Follow needs an http(s) id", domain.ErrInvalidInput)
	}
	if !h.core.local(act.Object.ID) {
		return InboxResult{}, fmt.Errorf("%w: Follow of %q, which is not an actor of this server", domain.ErrInvalidInput, clip(act.Object.ID))
	}
	target, err := (LocalActorsHandler{core: h.core}).ByURI(ctx, act.Object.ID)
	if err != nil {
		return InboxResult{}, err
	}
	if target.Kind == domain.NameKindInstance {
		return h.core.ignore(ctx, act, "the instance actor takes no followers"), nil
	}
	if res, refused, err := h.refuseBlockedFollow(ctx, req, target); refused || err != nil {
		return res, err
	}
	now := d.Clock.Now()
	f, err := domain.NewFollower(signer, target.URI, act.ID, domain.FollowPending, now)
	if err != nil {
		return InboxResult{}, err
	}
	created, prev, err := addFollower(ctx, d.Followers, f)
	if err != nil {
		return InboxResult{}, err
	}
	undo := func(cause error) error {
		c := context.WithoutCancel(ctx)
		var uerr error
		if created {
			uerr = d.Followers.Remove(c, signer, target.URI)
		} else if prev != domain.FollowAccepted {
			uerr = d.Followers.SetState(c, signer, target.URI, prev, now)
		}
		if uerr != nil {
			d.Log.ErrorContext(ctx, "could not undo a follow that failed half way", "follower", signer, "followed", target.URI, "err", uerr)
		}
		return cause
	}
	if prev != domain.FollowAccepted && target.Locked {
		// A locked persona or group approves its followers by hand
		// (manuallyApprovesFollowers, SPEC §11): the request waits for
		// its owner's Accept or Reject (AnswerFollowRequestHandler).
		d.Log.InfoContext(ctx, "follow kept pending the owner's approval", "follower", signer, "followed", target.URI)
		if created {
			h.core.notify(ctx, notice{recipient: target.URI, kind: domain.NotifyFollowRequest, actor: signer, key: act.ID})
		}
		return InboxResult{Reason: "pending approval: the actor approves its followers"}, nil
	}
	if prev != domain.FollowAccepted && d.Moderation.Silenced(ctx, hostOf(signer)) {
		// A silenced domain's follows need approval (SPEC §11): the
		// request stays pending until the persona accepts it.
		d.Log.InfoContext(ctx, "follow from a silenced domain kept pending approval", "follower", signer, "followed", target.URI)
		if created {
			h.core.notify(ctx, notice{recipient: target.URI, kind: domain.NotifyFollowRequest, actor: signer, key: act.ID})
		}
		return InboxResult{Reason: "pending approval: the follower's domain is silenced"}, nil
	}
	if prev != domain.FollowAccepted {
		err := d.Followers.SetState(ctx, signer, target.URI, domain.FollowAccepted, now)
		if errors.Is(err, domain.ErrNotFound) {
			// An Undo of the follower's previous Follow, handled at the
			// same moment, removed the row this Follow found: this Follow
			// is the newer, so it stands.
			f.State = domain.FollowAccepted
			created, err = d.Followers.Add(ctx, f)
		}
		if err != nil {
			return InboxResult{}, undo(err)
		}
	}
	if err := h.core.answerFollow(ctx, target, req.Signer, act.ID, "Accept"); err != nil {
		return InboxResult{}, undo(err)
	}
	d.Log.InfoContext(ctx, "follow accepted", "follower", signer, "followed", target.URI, "new", created)
	if created {
		h.core.notify(ctx, notice{recipient: target.URI, kind: domain.NotifyFollow, actor: signer, key: act.ID})
	}
	return InboxResult{Duplicate: !created && prev == domain.FollowAccepted}, nil
}

// answerFollow queues an Accept or a Reject of a follower's Follow to
// its inbox, signed by the followed actor. Its id derives from the
// Follow's, so answering one Follow twice queues one answer.
func (c *fedCore) answerFollow(ctx context.Context, target LocalActor, follower domain.ForeignAvatar, followID, kind string) error {
	answer := Activity{
		ID: c.deps.URLs.Activity(target.URI, strings.ToLower(kind)+"-"+shortHash(followID)), Type: kind, Actor: target.URI,
		To: []string{follower.ActorURI}, Object: FollowObject{ID: followID, Type: "Follow", Actor: follower.ActorURI, Object: target.URI},
	}
	_, err := c.send(ctx, target, answer, []string{follower.OwnInbox()})
	return err
}

// undo handles Undo{Follow}: the follower stops following.
func (h InboxHandler) undo(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	var followed string
	switch {
	case o.Type == "Follow":
		if o.Actor != "" && o.Actor != signer {
			return InboxResult{}, fmt.Errorf("%w: Undo of a Follow by %q, not by the signer", domain.ErrForbidden, clip(o.Actor))
		}
		followed = o.Object
	case o.Type == "" && o.ID != "" && req.Recipient != "":
		// Only the Follow's id: match it against the follow of the inbox's
		// owner.
		f, err := d.Followers.Get(ctx, signer, req.Recipient)
		if notFound(err) || (err == nil && f.ActivityID != o.ID) {
			// Not that follow: maybe an Announce named by its id.
			return h.undoBoost(ctx, req)
		}
		if err != nil {
			return InboxResult{}, err
		}
		followed = req.Recipient
	case o.Type == "Like" || o.Type == "Announce":
		return h.undoReaction(ctx, req)
	case o.Type == "Block":
		return h.undoBlock(ctx, req)
	case o.Type == "" && o.ID != "":
		return h.undoBoost(ctx, req)
	default:
		return h.core.ignore(ctx, act, "undo of something other than a follow, a like or an announce"), nil
	}
	if !h.core.local(followed) {
		return h.core.ignore(ctx, act, "undo of a follow of a non-local actor"), nil
	}
	if err := d.Followers.Remove(ctx, signer, followed); notFound(err) {
		return h.core.ignore(ctx, act, "no such follow"), nil
	} else if err != nil {
		return InboxResult{}, err
	}
	d.Log.InfoContext(ctx, "follow undone", "follower", signer, "followed", followed)
	return InboxResult{}, nil
}

// answer handles Accept and Reject of a follow one of our actors sent.
// Only the followed actor can answer: the relation looked up is the one
// from our actor to the signer.
func (h InboxHandler) answer(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	var follower string
	switch {
	case o.Type == "Follow":
		if o.Object != "" && o.Object != signer {
			return InboxResult{}, fmt.Errorf("%w: %s of a follow of %q, not of the signer", domain.ErrForbidden, act.Type, clip(o.Object))
		}
		follower = o.Actor
		if follower == "" {
			follower, _ = h.core.localActivityActor(o.ID)
		}
	case o.Type == "" && o.ID != "":
		follower, _ = h.core.localActivityActor(o.ID)
	default:
		return h.core.ignore(ctx, act, "answer to something other than a follow"), nil
	}
	if follower == "" || !h.core.local(follower) {
		return h.core.ignore(ctx, act, "answer to a follow that is not ours"), nil
	}
	f, err := d.Followers.Get(ctx, follower, signer)
	if notFound(err) {
		return h.core.ignore(ctx, act, "no follow of ours to answer"), nil
	}
	if err != nil {
		return InboxResult{}, err
	}
	if o.ID != "" && f.ActivityID != "" && o.ID != f.ActivityID {
		return h.core.ignore(ctx, act, "answer to another follow than the one we sent"), nil
	}
	if act.Type == "Reject" {
		if err := d.Followers.Remove(ctx, follower, signer); err != nil && !notFound(err) {
			return InboxResult{}, err
		}
		d.Log.InfoContext(ctx, "follow rejected", "follower", follower, "followed", signer)
		return InboxResult{}, nil
	}
	if f.State == domain.FollowAccepted {
		return InboxResult{Duplicate: true}, nil
	}
	if err := d.Followers.SetState(ctx, follower, signer, domain.FollowAccepted, d.Clock.Now()); err != nil {
		return InboxResult{}, err
	}
	d.Log.InfoContext(ctx, "follow accepted by remote", "follower", follower, "followed", signer)
	return InboxResult{}, nil
}

// noteTypes are the object types stored as posts.
var noteTypes = map[string]bool{"Note": true, "Article": true, "Page": true, "Question": true}

// create stores a remote note, once per ObjectURI: a post when it is
// public, to followers, or to one of our groups (which then announces it
// to its followers), else a direct post among the listed actors.
func (h InboxHandler) create(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	if !o.Embedded() {
		return h.core.ignore(ctx, act, "Create of an object given by URI only"), nil
	}
	if !noteTypes[o.Type] {
		return h.core.ignore(ctx, act, "Create of a "+clip(o.Type)), nil
	}
	if !httpURL(o.ID) {
		return InboxResult{}, fmt.Errorf("%w: the note needs an http(s) id", domain.ErrInvalidInput)
	}
	if !sameHost(o.ID, signer) {
		return InboxResult{}, fmt.Errorf("%w: note %s is not on the signer's server", domain.ErrForbidden, clip(o.ID))
	}
	if o.Author != "" && o.Author != signer {
		return InboxResult{}, fmt.Errorf("%w: note attributed to %q, not to the signer", domain.ErrForbidden, clip(o.Author))
	}
	if isVote(o) && h.core.local(o.Reply) {
		return h.vote(ctx, req)
	}
	aud := distinct(append(append([]string(nil), act.Audience...), o.Audience...))
	silenced := h.core.deps.Moderation.Silenced(ctx, hostOf(signer))
	if silenced {
		// A silenced domain's posts reach only the personas that follow
		// their author (SPEC §11): not whom they address or mention, and
		// no group boosts them.
		if followed, err := h.core.followedHere(ctx, signer); err != nil {
			return InboxResult{}, err
		} else if !followed {
			return h.core.ignore(ctx, act, "a note from a silenced domain whose author no one here follows"), nil
		}
	}
	if ok, err := h.concerns(ctx, signer, o, aud); err != nil {
		return InboxResult{}, err
	} else if !ok {
		return h.core.ignore(ctx, act, "a note that concerns no one here"), nil
	}
	published := o.Publish
	if published.IsZero() {
		published = d.Clock.Now()
	}
	var groups []LocalActor
	if !silenced {
		var err error
		if groups, err = h.memberGroups(ctx, signer, aud); err != nil {
			return InboxResult{}, err
		}
	}
	public := isPublic(aud)
	toCollection := false
	for _, a := range aud {
		toCollection = toCollection || isCollection(a)
	}
	id := d.IDs.NewID()
	if !public && !toCollection && len(groups) == 0 {
		return h.createDm(ctx, req, id, aud, published)
	}
	vis := domain.VisibilityFollowers
	if public {
		vis = domain.VisibilityPublic
	}
	p, err := domain.NewRemoteNote(id, o.ID, signer, o.Content, vis, published, cleanExtras(d.HTML, o.Extras))
	if err != nil {
		return InboxResult{}, err
	}
	p.InReplyTo = o.Reply
	p.Mentions = o.Mentions
	if len(groups) > 0 {
		p.GroupURI = groups[0].URI
	}
	created, err := d.Posts.CreatePost(ctx, p)
	if err != nil {
		return InboxResult{}, err
	}
	if !created {
		return InboxResult{Duplicate: true}, nil
	}
	if res, gone := h.deletedMeanwhile(ctx, act, o.ID, signer); gone {
		return res, nil
	}
	h.core.notifyMentions(ctx, signer, o.ID, o.Mentions)
	if len(groups) == 0 {
		d.Log.InfoContext(ctx, "remote note stored", "object", o.ID, "author", signer, "visibility", vis)
		return InboxResult{}, nil
	}
	// The group announces the content as stored: sanitized (CreatePost
	// went through the sanitizing store, and sanitizing is idempotent).
	note := Note{ID: o.ID, Type: "Note", AttributedTo: signer, Content: d.HTML.SanitizeHTML(o.Content), Published: asTime(published), To: aud, InReplyTo: o.Reply}.
		withExtras(cleanExtras(d.HTML, p.Extras), d.URLs.Tag)
	for _, g := range groups {
		if _, err := h.core.pub.announce(ctx, g, note, public); err != nil {
			// Undo the post: the sender retries and we announce then.
			if derr := d.Posts.DeletePost(context.WithoutCancel(ctx), o.ID); derr != nil {
				d.Log.ErrorContext(ctx, "could not undo a post whose announce failed", "object", o.ID, "err", derr)
			}
			return InboxResult{}, fmt.Errorf("announce in %s: %w", g.URI, err)
		}
	}
	d.Log.InfoContext(ctx, "remote note stored", "object", o.ID, "author", signer, "visibility", vis, "groups", len(groups))
	return InboxResult{}, nil
}

// concerns reports whether a remote note concerns this instance (SPEC
// §10 "Relevance", as GoToSocial keeps only what its users can see): it
// addresses or mentions one of our actors (a group included), its author
// is followed here, or it replies to a note of ours. Anything else from a
// stranger would only fill the store. The cheap tests come first.
func (h InboxHandler) concerns(ctx context.Context, author string, o IncomingObject, aud []string) (bool, error) {
	for _, uris := range [][]string{aud, o.Mentions} {
		for _, u := range uris {
			if _, _, ok := h.core.parseLocal(u); ok {
				// One of ours that blocks the author is not concerned.
				if blocked, err := h.core.blocks(ctx, u, author); err != nil || !blocked {
					return err == nil, err
				}
			}
		}
	}
	if followed, err := h.core.followedHere(ctx, author); err != nil || followed {
		return followed, err
	}
	if o.Reply == "" || !h.core.local(o.Reply) {
		return false, nil
	}
	if owner, ok := h.core.localNoteAuthor(o.Reply); ok {
		if blocked, err := h.core.blocks(ctx, owner, author); err != nil || blocked {
			return false, err
		}
	}
	if _, err := h.core.deps.Posts.PostByObjectURI(ctx, o.Reply); err == nil || !notFound(err) {
		return err == nil, err
	}
	if _, err := h.core.deps.Posts.DmByObjectURI(ctx, o.Reply); err == nil || !notFound(err) {
		return err == nil, err
	}
	return false, nil
}

// deletedMeanwhile removes a note just stored if its author's tombstone of
// it exists: a Create replayed after its Delete, one that arrives after a
// Delete that came first, or one handled while its Delete was (the Delete
// found no note to remove). Checked after the insert, not before, so that
// either order of a Create and its Delete ends with the note deleted, for
// one tombstone lookup per new note; a redelivered Create (not created
// again) costs none.
func (h InboxHandler) deletedMeanwhile(ctx context.Context, act Incoming, uri, author string) (InboxResult, bool) {
	d := h.core.deps
	if err := h.core.deleted(ctx, uri, author); err == nil || isCacheError(err) {
		return InboxResult{}, false
	}
	if err := d.Posts.DeletePost(context.WithoutCancel(ctx), uri); err != nil && !notFound(err) {
		d.Log.ErrorContext(ctx, "could not remove a note deleted while it was stored", "object", uri, "err", err)
	}
	return h.core.ignore(ctx, act, "Create of a note its author deleted"), true
}

// memberGroups are the local groups among the addressees that the author
// follows (accepted): those announce the post. A group does not boost
// strangers, so it cannot be used to amplify anyone's spam.
func (h InboxHandler) memberGroups(ctx context.Context, author string, aud []string) ([]LocalActor, error) {
	var out []LocalActor
	for _, a := range aud {
		kind, _, ok := h.core.parseLocal(a)
		if !ok || kind != domain.NameKindGroup {
			continue
		}
		g, err := (LocalActorsHandler{core: h.core}).ByURI(ctx, a)
		if notFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		f, err := h.core.deps.Followers.Get(ctx, author, g.URI)
		if notFound(err) || (err == nil && f.State != domain.FollowAccepted) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func (h InboxHandler) createDm(ctx context.Context, req InboxRequest, id string, aud []string, published time.Time) (InboxResult, error) {
	d, o, signer := h.core.deps, req.Activity.Object, req.Signer.ActorURI
	var to []string
	for _, a := range aud {
		if !isCollection(a) && httpURL(a) {
			to = append(to, a)
		}
	}
	if req.Recipient != "" {
		to = append(to, req.Recipient)
	}
	// Our actors mentioned in the note are in the conversation even when a
	// server addresses them only by tag.
	for _, m := range o.Mentions {
		if h.core.local(m) {
			to = append(to, m)
		}
	}
	// Our actors that block the author are not in it.
	to, err := h.core.notBlocking(ctx, signer, to)
	if err != nil {
		return InboxResult{}, err
	}
	if !slices.ContainsFunc(to, h.core.local) {
		return h.core.ignore(ctx, req.Activity, "a direct note to actors that block its author"), nil
	}
	dm, err := domain.NewRemoteDmNote(id, o.ID, signer, o.Content, to, published, cleanExtras(d.HTML, o.Extras))
	if err != nil {
		return InboxResult{}, err
	}
	created, err := d.Posts.CreateDm(ctx, dm)
	if err != nil {
		return InboxResult{}, err
	}
	if !created {
		return InboxResult{Duplicate: true}, nil
	}
	if res, gone := h.deletedMeanwhile(ctx, req.Activity, o.ID, signer); gone {
		return res, nil
	}
	// A direct note tells each of our participants, as a mention.
	h.core.notifyMentions(ctx, signer, o.ID, dm.Participants)
	h.core.addToConversations(ctx, dm)
	d.Log.InfoContext(ctx, "remote direct note stored", "object", o.ID, "author", signer, "participants", len(dm.Participants))
	return InboxResult{}, nil
}

// delete handles Delete of a note (by its author only) or of the actor
// itself. The note's URI is tombstoned first, also when we do not hold it
// (the Delete may arrive before its Create), so that the author's Create
// of it, replayed or late, is ignored; a Delete of another server's URI
// leaves nothing.
func (h InboxHandler) delete(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	target := act.Object.ID
	if target == "" {
		return InboxResult{}, fmt.Errorf("%w: Delete of nothing", domain.ErrInvalidInput)
	}
	if target == signer {
		return h.deleteActor(ctx, req)
	}
	author := ""
	if p, err := d.Posts.PostByObjectURI(ctx, target); err == nil {
		author = p.AuthorURI
	} else if !notFound(err) {
		return InboxResult{}, err
	} else if dm, err := d.Posts.DmByObjectURI(ctx, target); err == nil {
		author = dm.AuthorURI
	} else if !notFound(err) {
		return InboxResult{}, err
	}
	if author != "" && author != signer {
		return InboxResult{}, fmt.Errorf("%w: only its author can delete %s", domain.ErrForbidden, clip(target))
	}
	if author == "" && (!httpURL(target) || !sameHost(target, signer)) {
		return h.core.ignore(ctx, act, "Delete of an object of another server"), nil
	}
	t, err := domain.NewTombstone(target, signer, d.Clock.Now())
	if err != nil {
		return InboxResult{}, err
	}
	if err := d.Tombstones.AddTombstone(ctx, t); err != nil {
		return InboxResult{}, err
	}
	if author == "" {
		return h.core.ignore(ctx, act, "Delete of an object we do not have (tombstoned)"), nil
	}
	if err := d.Posts.DeletePost(ctx, target); err != nil && !notFound(err) {
		return InboxResult{}, err
	}
	d.Log.InfoContext(ctx, "remote note deleted", "object", target, "author", signer)
	return InboxResult{}, nil
}

// deleteActor handles an actor's Delete of itself (SPEC §10
// "Tombstones"): its URI and its key id are tombstoned first, so its key
// is refused from then on, then everything it left here goes (removeActor).
func (h InboxHandler) deleteActor(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, signer := h.core.deps, req.Signer.ActorURI
	now := d.Clock.Now()
	for _, uri := range []string{signer, req.Signer.PublicKeyID} {
		if uri == "" {
			continue
		}
		t, err := domain.NewTombstone(uri, uri, now)
		if err != nil {
			return InboxResult{}, err
		}
		if err := d.Tombstones.AddTombstone(ctx, t); err != nil {
			return InboxResult{}, err
		}
	}
	return InboxResult{}, h.removeActor(ctx, signer)
}

// DeletedAgain handles a Delete of itself by an actor whose key is
// refused because it deleted itself before: a redelivery, maybe because
// removing its things failed half way, so they are removed again (every
// step is safe to repeat). The Delete cannot be verified any more, and
// need not be: the actor's own tombstone already says it is gone. For an
// actor without one it does nothing.
func (h InboxHandler) DeletedAgain(ctx context.Context, actorURI string) error {
	err := h.core.deleted(ctx, actorURI, actorURI)
	if err == nil || isCacheError(err) {
		return err
	}
	return h.removeActor(ctx, actorURI)
}

// removeActor removes everything a deleted actor left here: its posts,
// boosts and reactions, its follows both ways, what our personas were
// told of it (notifications), its cached copy.
func (h InboxHandler) removeActor(ctx context.Context, actor string) error {
	d := h.core.deps
	posts, err := d.Posts.DeleteActorContent(ctx, actor)
	if err != nil {
		return err
	}
	follows, err := d.Followers.RemoveActor(ctx, actor)
	if err != nil {
		return err
	}
	notes := 0
	if d.Notifications != nil {
		if notes, err = d.Notifications.DeleteActorNotifications(ctx, actor); err != nil {
			return err
		}
	}
	if err := d.Foreign.Delete(ctx, actor); err != nil && !notFound(err) {
		return err
	}
	d.Log.InfoContext(ctx, "remote actor deleted", "actor", actor, "posts_removed", posts, "follows_removed", follows, "notifications_removed", notes)
	return nil
}

// update handles Update of the signer's own actor document: the cached
// copy is replaced by the embedded one, or fetched again when the embedded
// one is incomplete.
func (h InboxHandler) update(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	if noteTypes[o.Type] {
		return h.updateNote(ctx, req)
	}
	if !actorTypes[o.Type] {
		return h.core.ignore(ctx, act, "Update of something other than an actor or a note"), nil
	}
	if o.ID != signer {
		return InboxResult{}, fmt.Errorf("%w: Update of actor %q by another actor", domain.ErrForbidden, clip(o.ID))
	}
	if _, err := h.core.resolver.Update(ctx, signer, o.Raw); err != nil {
		return InboxResult{}, err
	}
	d.Log.InfoContext(ctx, "remote actor updated", "actor", signer)
	return InboxResult{}, nil
}

// updateNote applies an edit of a note we hold: only its author may edit
// it, and an Update applies only when its "updated" is later than the last
// edit applied, so a redelivered or out-of-order Update changes nothing.
func (h InboxHandler) updateNote(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	if !httpURL(o.ID) {
		return InboxResult{}, fmt.Errorf("%w: the note needs an http(s) id", domain.ErrInvalidInput)
	}
	if o.Author != "" && o.Author != signer {
		return InboxResult{}, fmt.Errorf("%w: note attributed to %q, not to the signer", domain.ErrForbidden, clip(o.Author))
	}
	author := ""
	if p, err := d.Posts.PostByObjectURI(ctx, o.ID); err == nil {
		author = p.AuthorURI
	} else if !notFound(err) {
		return InboxResult{}, err
	} else if dm, err := d.Posts.DmByObjectURI(ctx, o.ID); err == nil {
		author = dm.AuthorURI
	} else if !notFound(err) {
		return InboxResult{}, err
	}
	if author == "" {
		return h.core.ignore(ctx, act, "Update of a note we do not have"), nil
	}
	if author != signer {
		return InboxResult{}, fmt.Errorf("%w: only its author can update %s", domain.ErrForbidden, clip(o.ID))
	}
	e := domain.NormalizeRemoteExtras(cleanExtras(d.HTML, o.Extras))
	if err := domain.CheckRemoteBody(o.Content, e); err != nil {
		return InboxResult{}, err
	}
	// A Question's poll changes without an edit (its counts, its close):
	// its author's Update says so, "updated" or not.
	pollChanged := false
	if e.Poll != nil {
		changed, err := h.core.deps.Polls.SetPoll(ctx, o.ID, *e.Poll)
		if err != nil && !notFound(err) {
			return InboxResult{}, err
		}
		pollChanged = changed
		if changed && !e.Poll.Closed.IsZero() {
			// Its author closed it: our voters hear of it (once: the key).
			h.core.notifyPollEnded(ctx, signer, o.ID)
		}
	}
	updated := o.Updated
	if updated.IsZero() {
		if pollChanged {
			// A poll's Update without "updated" is not an edit.
			d.Log.InfoContext(ctx, "remote poll updated", "object", o.ID, "author", signer)
			return InboxResult{}, nil
		}
		// No "updated": the edit is as new as its arrival.
		updated = d.Clock.Now()
	}
	changed, err := d.Posts.UpdateContent(ctx, o.ID, o.Content, e, updated)
	if notFound(err) {
		return h.core.ignore(ctx, act, "Update of a note deleted meanwhile"), nil
	}
	if err != nil {
		return InboxResult{}, err
	}
	if !changed {
		if pollChanged {
			d.Log.InfoContext(ctx, "remote poll updated", "object", o.ID, "author", signer)
			return InboxResult{}, nil
		}
		return InboxResult{Duplicate: true}, nil
	}
	d.Log.InfoContext(ctx, "remote note updated", "object", o.ID, "author", signer)
	h.core.notifyEdited(ctx, signer, o.ID, updated)
	return InboxResult{}, nil
}

// reactionKinds maps the embedded activity of an Undo to what it undoes.
var reactionKinds = map[string]domain.ReactionKind{"Like": domain.ReactionLike, "Announce": domain.ReactionAnnounce}

// react records a Like or an Announce of one of our posts, once per actor
// and kind (a redelivery is a duplicate). An Announce of a remote note is
// a boost (see boost); Likes of remote notes, and reactions to notes we do
// not have, are ignored.
func (h InboxHandler) react(ctx context.Context, req InboxRequest, kind domain.ReactionKind) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	target := act.Object.ID
	if !h.core.local(target) {
		if kind == domain.ReactionAnnounce {
			return h.boost(ctx, req)
		}
		return h.core.ignore(ctx, act, string(kind)+" of a note that is not ours"), nil
	}
	if owner, ok := h.core.localNoteAuthor(target); ok {
		if blocked, err := h.core.blocks(ctx, owner, signer); err != nil {
			return InboxResult{}, err
		} else if blocked {
			return h.core.ignore(ctx, act, string(kind)+" by an actor the author blocks"), nil
		}
	}
	r, err := domain.NewReaction(target, signer, kind, d.Clock.Now())
	if err != nil {
		return InboxResult{}, err
	}
	created, err := d.Posts.AddReaction(ctx, r)
	if notFound(err) {
		return h.core.ignore(ctx, act, string(kind)+" of a post we do not have"), nil
	}
	if err != nil {
		return InboxResult{}, err
	}
	if !created {
		return InboxResult{Duplicate: true}, nil
	}
	d.Log.InfoContext(ctx, "reaction recorded", "kind", kind, "object", target, "actor", signer)
	if owner, ok := h.core.localNoteAuthor(target); ok {
		nk := domain.NotifyFavourite
		if kind == domain.ReactionAnnounce {
			nk = domain.NotifyReblog
		}
		h.core.notify(ctx, notice{recipient: owner, kind: nk, actor: signer, post: target, key: string(nk) + " " + signer + " " + target})
	}
	return InboxResult{}, nil
}

// undoReaction handles Undo{Like} and Undo{Announce} by their actor.
func (h InboxHandler) undoReaction(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	o := act.Object
	if o.Actor != "" && o.Actor != signer {
		return InboxResult{}, fmt.Errorf("%w: Undo of a %s by %q, not by the signer", domain.ErrForbidden, o.Type, clip(o.Actor))
	}
	kind := reactionKinds[o.Type]
	if kind == domain.ReactionAnnounce && !h.core.local(o.Object) {
		return h.undoBoost(ctx, req)
	}
	if o.Object == "" || !h.core.local(o.Object) {
		return h.core.ignore(ctx, act, "undo of a "+string(kind)+" of a note that is not ours"), nil
	}
	if err := d.Posts.RemoveReaction(ctx, o.Object, signer, kind); notFound(err) {
		return h.core.ignore(ctx, act, "undo of an unknown "+string(kind)), nil
	} else if err != nil {
		return InboxResult{}, err
	}
	d.Log.InfoContext(ctx, "reaction undone", "kind", kind, "object", o.Object, "actor", signer)
	return InboxResult{}, nil
}

// shortHash names derived activities (an Accept of a Follow, a group's
// Announce of a note) so the same input always gives the same id.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
