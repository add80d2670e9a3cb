package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// What the inbox and the polls tell the personas (the client API's
// notifications, issue 34). A notification is recorded where the
// activity first takes effect (the note stored, the follow or the
// reaction added, the poll closed), never on a redelivery, so one the
// persona dismissed does not come back; and each is keyed, so two
// processes handling one activity at once record it once: a mention by
// its note, a follow by its Follow's id, a favourite or a reblog by its
// actor and post (a Like undone and sent again tells once), a poll by the
// poll, an edit by its post and time. A failure to record is logged, not the activity's: the activity
// took effect, and its redelivery would record nothing.

// followersPage is how many followers of an edited post's author are read
// at once.
const followersPage = 1000

// maxNoticeKey bounds a key as stored: a longer one (built of remote
// URIs) is stored as its hash, so every key fits the stores' indexes.
const maxNoticeKey = 512

// notice is one notification to record.
type notice struct {
	recipient string // a local persona's actor URI
	kind      domain.NotificationKind
	actor     string // who did it
	post      string // the post's object URI; empty for follows
	key       string
}

// notify records n unless its recipient is no live persona of ours, or
// does not want to hear of its actor: the actor is the persona itself
// (but for its own poll's end), the persona blocks or mutes it, or it is
// on a silenced domain and the persona does not follow it (as Mastodon
// filters a limited domain's notifications; a follow request is told).
// Domains the operator suspended never reach the inbox
// (Federation.Admit).
func (c *fedCore) notify(ctx context.Context, n notice) {
	if err := c.record(ctx, n); err != nil {
		c.deps.Log.WarnContext(ctx, "notification not recorded", "recipient", n.recipient, "kind", n.kind, "actor", n.actor, "err", err)
	}
}

func (c *fedCore) record(ctx context.Context, n notice) error {
	d := c.deps
	if d.Notifications == nil {
		return nil
	}
	if kind, _, ok := c.parseLocal(n.recipient); !ok || kind != domain.NameKindPersona {
		return nil
	}
	if n.recipient == n.actor && n.kind != domain.NotifyPoll {
		return nil
	}
	if _, err := (LocalActorsHandler{core: c}).ByURI(ctx, n.recipient); notFound(err) || errors.Is(err, domain.ErrGone) {
		return nil
	} else if err != nil {
		return err
	}
	if n.recipient != n.actor {
		if quiet, err := c.unwanted(ctx, n.recipient, n.actor, n.kind); err != nil || quiet {
			return err
		}
	}
	key := n.key
	if len(key) > maxNoticeKey {
		key = "sha256 " + shortHash(key)
	}
	note, err := domain.NewNotification(d.IDs.NewID(), n.recipient, n.kind, n.actor, n.post, key, d.Clock.Now())
	if err != nil {
		return err
	}
	created, err := d.Notifications.AddNotification(ctx, note)
	if err != nil {
		return fmt.Errorf("notification of %s: %w", n.recipient, err)
	}
	if created {
		d.Log.DebugContext(ctx, "notification recorded", "recipient", n.recipient, "kind", n.kind, "actor", n.actor)
	}
	return nil
}

// unwanted reports whether persona blocks or mutes actor, or actor is on
// a silenced domain and persona does not follow it (but for a follow
// request: the persona must hear of what waits for its answer).
func (c *fedCore) unwanted(ctx context.Context, persona, actor string, kind domain.NotificationKind) (bool, error) {
	d := c.deps
	if d.Blocks != nil {
		bs, err := d.Blocks.Between(ctx, persona, actor)
		if err != nil {
			return false, err
		}
		for _, b := range bs {
			if b.ActorURI == persona {
				return true, nil // a block or a mute of the actor
			}
		}
	}
	if kind == domain.NotifyFollowRequest || c.local(actor) || !d.Moderation.Silenced(ctx, hostOf(actor)) {
		return false, nil
	}
	f, err := d.Followers.Get(ctx, persona, actor)
	if notFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return f.State != domain.FollowAccepted, nil
}

// notifyMentions tells the local personas among uris (a note's mentions,
// a direct note's participants) that author's note mentions them.
func (c *fedCore) notifyMentions(ctx context.Context, author, noteURI string, uris []string) {
	for _, u := range distinct(append([]string(nil), uris...)) {
		c.notify(ctx, notice{recipient: u, kind: domain.NotifyMention, actor: author, post: noteURI, key: "mention " + noteURI})
	}
}

// addToConversations is conversations.add of the inbox.
func (c *fedCore) addToConversations(ctx context.Context, d domain.DmPost) {
	conversations{store: c.deps.Notifications, actors: c.deps.Actors, urls: c.deps.URLs, log: c.deps.Log}.add(ctx, d)
}

// notifyPollEnded tells the local voters of the poll of post that it ended
// (actor: its author); the author too when it is ours.
func (c *fedCore) notifyPollEnded(ctx context.Context, author, post string) {
	d := c.deps
	if d.Notifications == nil || d.Polls == nil {
		return
	}
	key := "poll " + post
	if c.local(author) {
		c.notify(ctx, notice{recipient: author, kind: domain.NotifyPoll, actor: author, post: post, key: key})
	}
	after := ""
	for {
		voters, err := d.Polls.Voters(ctx, post, after, votersPage)
		if err != nil {
			d.Log.WarnContext(ctx, "poll's voters not notified", "poll", post, "err", err)
			return
		}
		for _, v := range voters {
			if v != author && c.local(v) {
				c.notify(ctx, notice{recipient: v, kind: domain.NotifyPoll, actor: author, post: post, key: key})
			}
		}
		if len(voters) < votersPage {
			return
		}
		after = voters[len(voters)-1]
	}
}

// notifyEdited tells the local personas that boosted author's post that
// its author edited it (once per edit: the key holds its time). They are
// found among the author's followers here, the personas its posts reach
// (a boost of a post of an author the persona does not follow tells
// nothing: no index lists a post's boosters), one ReactedTo each.
func (c *fedCore) notifyEdited(ctx context.Context, author, post string, edited time.Time) {
	d := c.deps
	if d.Notifications == nil {
		return
	}
	key := "update " + post + " " + edited.UTC().Format(time.RFC3339Nano)
	after := ""
	for {
		followers, err := d.Followers.FollowerURIs(ctx, author, domain.FollowAccepted, after, followersPage)
		if err != nil {
			d.Log.WarnContext(ctx, "boosters of an edited post not notified", "object", post, "err", err)
			return
		}
		for _, f := range followers {
			if kind, _, ok := c.parseLocal(f); !ok || kind != domain.NameKindPersona {
				continue
			}
			done, err := d.Posts.ReactedTo(ctx, f, []string{post})
			if err != nil {
				d.Log.WarnContext(ctx, "boosters of an edited post not notified", "object", post, "err", err)
				return
			}
			for _, r := range done {
				if r.Kind == domain.ReactionAnnounce {
					c.notify(ctx, notice{recipient: f, kind: domain.NotifyUpdate, actor: author, post: post, key: key})
				}
			}
		}
		if len(followers) < followersPage {
			return
		}
		after = followers[len(followers)-1]
	}
}
