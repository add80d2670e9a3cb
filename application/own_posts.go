package application

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/heraldfed/herald/domain"
)

// EditPost asks to replace the content of one of the account's posts (or
// direct posts), by the id publishing returned. Content is plain text, as
// at publishing.
type EditPost struct {
	UserID  string
	ID      string
	Content string
}

// DeletePost asks to delete one of the account's posts or direct posts.
type DeletePost struct {
	UserID string
	ID     string
}

// OwnPost is a post of the account after an edit, or the one deleted,
// with the deliveries its Update or Delete queued.
type OwnPost struct {
	ObjectURI  string
	ActivityID string
	Content    string // the post's HTML after an edit (its text rendered)
	Updated    time.Time
	EnqueueResult
}

// OwnPostsHandler edits and deletes the account's own posts, and tells the
// servers that received them (Update{Note}, Delete{Tombstone}). Only the
// account of the author may: a post is looked up under the account's own
// personas, so anyone else's is domain.ErrNotFound (its existence is not
// told).
type OwnPostsHandler struct{ core *fedCore }

// ownPost is what own found: the author and one of post or dm.
type ownPost struct {
	me   LocalActor
	post *domain.Post
	dm   *domain.DmPost
}

func (o ownPost) uri() string {
	if o.post != nil {
		return o.post.ObjectURI
	}
	return o.dm.ObjectURI
}

// addressed are the actors the post named when it was published: whom it
// mentioned and the group it went to, or a direct post's participants.
func (o ownPost) addressed() []string {
	if o.post != nil {
		return append(slices.Clone(o.post.Mentions), o.post.GroupURI)
	}
	return o.dm.Participants
}

func (o ownPost) extras() domain.Extras {
	if o.post != nil {
		return o.post.Extras.Clone()
	}
	return o.dm.Extras.Clone()
}

func (o ownPost) lastEdit() time.Time {
	if o.post != nil {
		return laterOf(o.post.Published, o.post.Updated)
	}
	return laterOf(o.dm.Published, o.dm.Updated)
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// validPostID is what an id publishing hands out can look like (a UUID);
// anything else cannot name a post and is not looked up.
func validPostID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// own finds the post of that id among the account's personas' posts.
func (h OwnPostsHandler) own(ctx context.Context, userID, id string) (ownPost, error) {
	d := h.core.deps
	if !validPostID(id) {
		return ownPost{}, fmt.Errorf("%w: no post %q of yours", domain.ErrNotFound, clip(id))
	}
	personas, err := d.Actors.AvatarsOf(ctx, userID)
	if err != nil {
		return ownPost{}, err
	}
	for _, a := range personas {
		me, err := h.core.ownPersona(ctx, userID, a.Name)
		if err != nil {
			return ownPost{}, err
		}
		uri := d.URLs.Note(me.URI, id)
		if p, err := d.Posts.PostByObjectURI(ctx, uri); err == nil {
			return ownPost{me: me, post: &p}, nil
		} else if !notFound(err) {
			return ownPost{}, err
		}
		if dm, err := d.Posts.DmByObjectURI(ctx, uri); err == nil {
			return ownPost{me: me, dm: &dm}, nil
		} else if !notFound(err) {
			return ownPost{}, err
		}
	}
	return ownPost{}, fmt.Errorf("%w: no post %q of yours", domain.ErrNotFound, clip(id))
}

// Edit replaces the post's content and sends Update{Note} with it to the
// inboxes the post went to: the persona's followers (and those of the
// group it was addressed to), the author of the note it replies to, or the
// participants of a direct post.
func (h OwnPostsHandler) Edit(ctx context.Context, cmd EditPost) (OwnPost, error) {
	d := h.core.deps
	o, err := h.own(ctx, cmd.UserID, cmd.ID)
	if err != nil {
		return OwnPost{}, err
	}
	// What the post carries beside its text stays; its hashtags are the
	// new text's.
	extras := o.extras()
	extras.Hashtags = domain.Hashtags(cmd.Content)
	if err := domain.CheckLocalBody(cmd.Content, extras); err != nil {
		return OwnPost{}, err
	}
	note, inboxes, followers, err := h.audience(ctx, o)
	if err != nil {
		return OwnPost{}, err
	}
	// The new text is rendered as at publishing, its @-mentions of the
	// actors the post addressed and its hashtags linked.
	content := domain.RenderPost(cmd.Content, h.core.pub.mentionLinks(note.Tag, o.addressed()), d.URLs.Tag)
	// Edits are ordered by their time, which must pass the last edit's
	// (UpdateContent applies only later ones): a clock that did not move
	// (or moved back) still gives a later instant, by a millisecond, the
	// finest step every store keeps.
	updated := d.Clock.Now().UTC()
	if last := o.lastEdit(); !updated.After(last) {
		updated = last.Add(time.Millisecond)
	}
	changed, err := d.Posts.UpdateContent(ctx, o.uri(), content, extras, updated)
	if err != nil {
		return OwnPost{}, err
	}
	if !changed {
		return OwnPost{}, fmt.Errorf("%w: the post was edited at the same time; try again", domain.ErrAlreadyExists)
	}
	if extras.Poll != nil {
		// The counts as they are now: an edit resets no poll.
		if p, err := d.Posts.PostByObjectURI(ctx, o.uri()); err == nil && p.Poll != nil {
			extras.Poll = p.Poll
		}
	}
	note.Content, note.Updated = content, asTime(updated)
	note = note.withExtras(extras, d.URLs.Tag)
	act := noteActivity(Activity{ID: d.URLs.Activity(o.me.URI, d.IDs.NewID()), Type: "Update", Actor: o.me.URI,
		Published: asTime(updated), To: note.To, CC: note.CC}, note)
	res, err := h.send(ctx, o.me, act, inboxes, followers)
	if err != nil {
		return OwnPost{}, err
	}
	touch(ctx, h.core.pub.deps, o.me.ID)
	d.Log.InfoContext(ctx, "post edited", "object", note.ID, "inboxes", len(inboxes), "queued", res.Queued)
	return OwnPost{ObjectURI: note.ID, ActivityID: act.ID, Content: content, Updated: updated, EnqueueResult: res}, nil
}

// Delete sends Delete{Tombstone} of the post to the inboxes an edit would
// go to, then deletes it here (with its likes, announces and boosts). The
// Delete is queued first: if deleting here then fails, a retry sends it
// again, which the receivers take as the same deletion.
func (h OwnPostsHandler) Delete(ctx context.Context, cmd DeletePost) (OwnPost, error) {
	d := h.core.deps
	o, err := h.own(ctx, cmd.UserID, cmd.ID)
	if err != nil {
		return OwnPost{}, err
	}
	note, inboxes, followers, err := h.audience(ctx, o)
	if err != nil {
		return OwnPost{}, err
	}
	act := Activity{ID: d.URLs.Activity(o.me.URI, d.IDs.NewID()), Type: "Delete", Actor: o.me.URI,
		Published: asTime(d.Clock.Now()), To: note.To, CC: note.CC, Object: Tombstone{ID: note.ID, Type: "Tombstone"}}
	res, err := h.send(ctx, o.me, act, inboxes, followers)
	if err != nil {
		return OwnPost{}, err
	}
	if err := d.Posts.DeletePost(ctx, note.ID); err != nil && !notFound(err) {
		return OwnPost{}, err
	}
	d.Log.InfoContext(ctx, "post deleted", "object", note.ID, "inboxes", len(inboxes), "queued", res.Queued)
	return OwnPost{ObjectURI: note.ID, ActivityID: act.ID, EnqueueResult: res}, nil
}

// Tombstone is what a Delete of a note carries.
type Tombstone struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// audience is the post as a Note (addressed as it was published), the
// inboxes its Update or Delete goes to besides the persona's followers,
// and whether it goes to those followers too (all but a direct post),
// the actors the post mentioned included.
func (h OwnPostsHandler) audience(ctx context.Context, o ownPost) (Note, []string, bool, error) {
	d, pub := h.core.deps, h.core.pub
	if o.dm != nil {
		var to []string
		for _, p := range o.dm.Participants {
			if p != o.me.URI {
				to = append(to, p)
			}
		}
		inboxes, tags, err := pub.recipientInboxes(ctx, o.me.URI, to)
		if err != nil {
			return Note{}, nil, false, err
		}
		return Note{ID: o.dm.ObjectURI, Type: "Note", AttributedTo: o.me.URI, Content: o.dm.Content,
			Published: asTime(o.dm.Published), To: to, Tag: tags}, inboxes, false, nil
	}
	p := o.post
	to, cc := addressing(p.Visibility, d.URLs.Followers(o.me.URI), nil)
	var inboxes []string
	if p.GroupURI != "" {
		to = append(to, p.GroupURI)
		members, err := pub.memberInboxes(ctx, p.GroupURI)
		if err != nil {
			return Note{}, nil, false, err
		}
		inboxes = append(inboxes, members...)
	}
	var tags []Tag
	// Whom the post mentioned (the actors it addressed, the author it
	// replied to) hear of the edit too, followers or not; a post stored
	// before its mentions were kept falls back to the author replied to.
	mentioned := p.Mentions
	if author, ok := pub.replyAuthor(ctx, p.InReplyTo); ok && !slices.Contains(mentioned, author) {
		mentioned = append(slices.Clone(mentioned), author)
	}
	for _, m := range mentioned {
		if pub.local(m) {
			continue
		}
		extra, mention, err := pub.recipientInboxes(ctx, o.me.URI, []string{m})
		if err != nil {
			// Best effort, as at publishing: one that is gone or cannot
			// be resolved now must not stop the edit reaching the others.
			d.Log.WarnContext(ctx, "an actor the post mentioned is not told", "post", p.ObjectURI, "actor", m, "err", err)
			continue
		}
		inboxes, tags, cc = append(inboxes, extra...), append(tags, mention...), append(cc, m)
	}
	return Note{ID: p.ObjectURI, Type: "Note", AttributedTo: o.me.URI, Content: p.Content, Published: asTime(p.Published),
		To: to, CC: cc, InReplyTo: p.InReplyTo, Tag: tags}, distinct(inboxes), true, nil
}

// send queues act to the inboxes and, when followers, to every follower
// of the persona, streamed.
func (h OwnPostsHandler) send(ctx context.Context, me LocalActor, act Activity, inboxes []string, followers bool) (EnqueueResult, error) {
	if followers {
		return h.core.broadcast(ctx, me, act, inboxes)
	}
	return h.core.send(ctx, me, act, inboxes)
}

// replyAuthor is the remote author of the note a post replies to, when we
// hold that note.
func (h PublishHandler) replyAuthor(ctx context.Context, inReplyTo string) (string, bool) {
	if inReplyTo == "" {
		return "", false
	}
	author := ""
	if p, err := h.deps.Posts.PostByObjectURI(ctx, inReplyTo); err == nil {
		author = p.AuthorURI
	} else if m, err := h.deps.Posts.DmByObjectURI(ctx, inReplyTo); err == nil {
		author = m.AuthorURI
	}
	return author, author != "" && !h.local(author)
}
