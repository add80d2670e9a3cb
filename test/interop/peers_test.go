package interop_test

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
)

// peer is a fediverse server the suite federates with, one process per
// test serving every store's run. Each peer has a driver (gotosocial_test.go,
// snac_test.go); the scenarios (sharedScenarios) are written once against
// it.
type peer interface {
	// name is what scenario names call it ("GoToSocial", "snac").
	name() string
	// hostport is its host, as in its accounts' user@host.
	hostport() string
	// use makes t the test its calls fail.
	use(t *testing.T)
	// newUser creates an account that accepts every follow.
	newUser(name string) user
	// lacks says why the peer cannot drive a feature; "" when it can.
	lacks(f feature) string
	// checkLog fails t on what its log shows went wrong with Herald.
	checkLog(t *testing.T, h *herald)
}

// feature is something a scenario needs that not every peer can do.
type feature string

// textMention: the peer links @user@host written in a post's text and
// addresses that account (a Mention in tag).
const textMention feature = "text mention"

// refollow: the peer accepts a Follow from an actor it already holds as
// a follower (as after a suspension it was not told of).
const refollow feature = "second Follow"

// status is a post on a peer: its id in the peer's client API and its
// object URI.
type status struct{ ID, URI string }

// note is a post as a peer kept it for one of its accounts.
type note struct {
	ID, URI, Content string
	// Booster is the peer's id of the account whose boost brought it into
	// the timeline; "" when none did.
	Booster string
}

// user is one account on a peer, driven through the peer's client API
// (and its own tools where that API cannot tell).
type user interface {
	actor() string
	acct() string
	// resolve finds an account by user@host (WebFinger, then its actor);
	// "" when not found.
	resolve(acct string) string
	follow(id string)
	unfollow(id string)
	// follows: its follow of the account id (actor URI actor) is accepted.
	follows(id, actor string) bool
	// followedBy: the account acct (actor URI actor) follows it.
	followedBy(acct, actor string) bool
	// post publishes text with a visibility (public, direct), in reply to
	// a status id on the peer when replyTo is not "".
	post(text, visibility, replyTo string) status
	// mention publishes a public post naming acct in its text.
	mention(acct, text string) status
	// direct sends a direct note to acct (actor URI actor); inThread is
	// the URI of a direct note acct sent this account, for a peer that
	// can address acct only by answering it.
	direct(acct, actor, text, inThread string) status
	// find is the peer's id of a status by URI, fetched if needed; "" when
	// not found.
	find(uri string) string
	edit(id, text string)
	remove(id string)
	// act likes or boosts a status, or takes that back: favourite,
	// reblog, unfavourite, unreblog.
	act(id, action string)
	// reblogs counts a status's boosts as the peer holds them; -1 when it
	// cannot be read.
	reblogs(id string) int
	// unboosted: the peer took the Undo of the one boost of its status st.
	unboosted(st status) bool
	// home finds a post with text that the peer kept for this account and
	// shows in its home timeline, having received it (not merely fetched).
	home(text string) *note
	// reread is that post as the peer holds it now; nil once deleted.
	reread(n note) *note
	// replied: a reply holding text is threaded under the status parent.
	replied(parent status, text string) bool
	// notified: a mention notification of a post holding text, of that
	// visibility.
	notified(text, visibility string) bool
	rename(display string)
}

// run is one store's run against one peer: the accounts on both sides
// and what earlier scenarios made for later ones.
type run struct {
	store string
	p     peer
	h     *herald

	ann, bea    user
	carolTok    string
	carolAcct   string
	carolURI    string
	carolID     string // carol's account on the peer, as ann resolved it
	carolPost   string // carol's first public post: URI
	carolPostID string // … and id on Herald
	carolDirect string // carol's direct note to ann: URI
	annPost     status // ann's first public post
}

// scenario is one named step. Later ones build on earlier ones.
type scenario struct {
	name string // %s is the peer's name
	run  func(t *testing.T, r *run)
}

// newRun signs up carol on Herald and ann and bea on the peer.
func newRun(t *testing.T, store string, p peer, h *herald) *run {
	p.use(t)
	r := &run{store: store, p: p, h: h}
	r.ann = p.newUser(store + "_ann")
	r.bea = p.newUser(store + "_bea")
	r.carolTok = h.signUp("carol")
	r.carolAcct = "carol@" + h.host
	r.carolURI = h.base + "/users/carol"
	return r
}

// step runs one scenario as a subtest named after it; a failure stops the
// run, as later scenarios build on it.
func (r *run) step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(strings.ReplaceAll(name, "%s", r.p.name()), func(t *testing.T) {
		r.p.use(t)
		r.h.t = t
		f(t)
	}) {
		t.FailNow()
	}
	r.p.use(t)
	r.h.t = t
}

// play runs the scenarios in order.
func (r *run) play(t *testing.T, scs []scenario) {
	t.Helper()
	for _, sc := range scs {
		r.step(t, sc.name, func(t *testing.T) { sc.run(t, r) })
	}
}

// skipLacking skips the scenario, by the peer's reason, when the peer
// cannot drive f.
func (r *run) skipLacking(t *testing.T, f feature) {
	t.Helper()
	if why := r.p.lacks(f); why != "" {
		t.Skipf("%s cannot write a %s here: %s", r.p.name(), f, why)
	}
}

// counts are the likes and boosts Herald counts on carol's first post.
func (r *run) counts() (int, int) {
	for _, p := range r.h.postsBy(r.carolTok, r.carolURI) {
		if p.URI == r.carolPost {
			return p.Likes, p.Announces
		}
	}
	return -1, -1
}

// sharedScenarios are the scenarios every peer runs, in order; a peer
// that cannot drive one skips it by name with its reason (peer.lacks).
var sharedScenarios = []scenario{
	{"resolve Herald account from %s", func(t *testing.T, r *run) {
		eventually(t, r.p.name()+" to resolve "+r.carolAcct, func() bool {
			r.carolID = r.ann.resolve(r.carolAcct)
			return r.carolID != ""
		})
	}},

	{"first-contact follow %s to Herald", func(t *testing.T, r *run) {
		// Herald has never fetched ann: the Follow is her first contact.
		r.ann.follow(r.carolID)
		eventually(t, r.p.name()+" to see the follow accepted", func() bool { return r.ann.follows(r.carolID, r.carolURI) })
		if st := r.h.followers(r.carolTok, "carol")[r.ann.actor()]; st != "accepted" {
			t.Fatalf("Herald lists ann as %q", st)
		}
	}},

	{"first-contact follow Herald to %s by user@host (WebFinger)", func(t *testing.T, r *run) {
		h, tok := r.h, r.carolTok
		bAcct := r.bea.acct()
		if st := h.follow(tok, "carol", bAcct); st != "pending" && st != "accepted" {
			t.Fatalf("state %q", st)
		}
		eventually(t, "the follow of "+bAcct+" accepted", func() bool { return h.follow(tok, "carol", bAcct) == "accepted" })
		eventually(t, r.p.name()+" to list carol as bea's follower", func() bool { return r.bea.followedBy(r.carolAcct, r.carolURI) })
		if st := h.follow(tok, "carol", r.ann.actor()); st == "" {
			t.Fatal("follow of ann by URI")
		}
		eventually(t, "the follow of ann accepted", func() bool { return h.follow(tok, "carol", r.ann.actor()) == "accepted" })
	}},

	{"public post Herald to %s", func(t *testing.T, r *run) {
		r.carolPostID, r.carolPost = r.h.publishID(r.carolTok, map[string]any{"as": "carol", "content": "hello from Herald on " + r.store})
		eventually(t, "the post in ann's home timeline", func() bool { return r.ann.home("hello from Herald on "+r.store) != nil })
	}},

	{"mention Herald to %s", func(t *testing.T, r *run) {
		// A public post to bea's address: the peer notifies her only if
		// the note carries a Mention of her in tag. The text names her as
		// @user@host, which Herald links to her actor.
		r.h.publish(r.carolTok, map[string]any{"as": "carol", "content": "@" + r.bea.acct() + " look, a mention on " + r.store, "to": []string{r.bea.actor()}})
		eventually(t, "a mention notification for bea", func() bool { return r.bea.notified("a mention on "+r.store, "public") })
	}},

	{"direct post Herald to %s", func(t *testing.T, r *run) {
		r.carolDirect = r.h.publish(r.carolTok, map[string]any{"as": "carol", "content": "a direct word on " + r.store, "visibility": "direct", "to": []string{r.ann.actor()}})
		eventually(t, "the direct note in ann's notifications", func() bool { return r.ann.notified("a direct word on "+r.store, "direct") })
	}},

	{"public post %s to Herald", func(t *testing.T, r *run) {
		text := "hello from " + r.p.name() + " to " + r.store
		r.annPost = r.ann.post(text, "public", "")
		eventually(t, "the post on Herald", func() bool { return r.h.postBy(r.carolTok, r.ann.actor(), text) != nil })
		if p := r.h.postBy(r.carolTok, r.ann.actor(), text); p.URI != r.annPost.URI || p.Local || p.Visibility != "public" {
			t.Fatalf("stored %+v, want %s", p, r.annPost.URI)
		}
	}},

	{"mention %s to Herald", func(t *testing.T, r *run) {
		r.skipLacking(t, textMention)
		text := "a mention from " + r.p.name() + " on " + r.store
		r.ann.mention(r.carolAcct, text)
		eventually(t, "the post among carol's mentions", func() bool { return r.h.mentioned(r.carolTok, "carol", text) != nil })
		if p := r.h.mentioned(r.carolTok, "carol", text); p.Author != r.ann.actor() || p.Local || p.Visibility != "public" {
			t.Fatalf("stored %+v, want a public note by %s", p, r.ann.actor())
		}
	}},

	{"reply %s to Herald", func(t *testing.T, r *run) {
		id := r.ann.find(r.carolPost)
		if id == "" {
			t.Fatalf("%s cannot find carol's post %s", r.p.name(), r.carolPost)
		}
		text := "a reply on " + r.store
		if r.p.lacks(textMention) == "" {
			text = "@" + r.carolAcct + " " + text
		}
		r.ann.post(text, "public", id)
		eventually(t, "the reply on Herald", func() bool { return r.h.postBy(r.carolTok, r.ann.actor(), "a reply on "+r.store) != nil })
		if p := r.h.postBy(r.carolTok, r.ann.actor(), "a reply on "+r.store); p.InReplyTo != r.carolPost {
			t.Fatalf("reply stored in reply to %q, want %q", p.InReplyTo, r.carolPost)
		}
		// The replied author is mentioned (a Mention in tag), also by a
		// peer that writes no mention in the text.
		if r.h.mentioned(r.carolTok, "carol", "a reply on "+r.store) == nil {
			t.Fatal("the reply is not among carol's mentions")
		}
	}},

	{"boosts and likes of our posts, and their Undo", func(t *testing.T, r *run) {
		id := r.ann.find(r.carolPost)
		if id == "" {
			t.Fatalf("%s cannot find carol's post %s", r.p.name(), r.carolPost)
		}
		for _, act := range []string{"favourite", "reblog"} {
			r.ann.act(id, act)
		}
		eventually(t, "one like and one boost counted on Herald", func() bool { l, a := r.counts(); return l == 1 && a == 1 })
		for _, act := range []string{"unfavourite", "unreblog"} {
			r.ann.act(id, act)
		}
		eventually(t, "the like and the boost undone on Herald", func() bool { l, a := r.counts(); return l == 0 && a == 0 })
	}},

	{"reply Herald to %s", func(t *testing.T, r *run) {
		text := "a reply from Herald on " + r.store
		r.h.publish(r.carolTok, map[string]any{"as": "carol", "content": text, "in_reply_to": r.annPost.URI})
		eventually(t, "the reply threaded under ann's post", func() bool { return r.ann.replied(r.annPost, text) })
	}},

	{"long post Herald to %s", func(t *testing.T, r *run) {
		// Near our own 5000-byte limit, in two-byte characters.
		text := strings.Repeat("é", 2450)
		mark := "long from Herald on " + r.store + " "
		content := mark + text
		if len(content) > 5000 || len(content) < 4900 {
			t.Fatalf("the test's post is %d bytes", len(content))
		}
		r.h.publish(r.carolTok, map[string]any{"as": "carol", "content": content})
		eventually(t, "the long post in ann's home timeline", func() bool { return r.ann.home(mark) != nil })
		if n := r.ann.home(mark); !strings.Contains(n.Content, text) {
			t.Fatalf("%s shows the long post cut: %d bytes", r.p.name(), len(n.Content))
		}
	}},

	{"edit Herald to %s", func(t *testing.T, r *run) {
		h := r.h
		n := r.ann.home("hello from Herald on " + r.store)
		if n == nil {
			t.Fatal("carol's post is not in ann's home timeline")
		}
		edited := "hello from Herald on " + r.store + ", edited"
		if s := h.api("PATCH", "/api/v1/posts/"+r.carolPostID, r.carolTok, map[string]string{"content": edited}, nil); s != 200 {
			t.Fatalf("edit: %d", s)
		}
		eventually(t, r.p.name()+" to show the edited text", func() bool {
			n := r.ann.reread(*n)
			return n != nil && strings.Contains(n.Content, "edited")
		})
		// Only the author's account edits or deletes.
		other := h.signUp("dora")
		if s := h.api("PATCH", "/api/v1/posts/"+r.carolPostID, other, map[string]string{"content": "not mine"}, nil); s != 404 {
			t.Fatalf("edit by another account: %d, want 404", s)
		}
		if s := h.api("DELETE", "/api/v1/posts/"+r.carolPostID, other, nil, nil); s != 404 {
			t.Fatalf("delete by another account: %d, want 404", s)
		}
	}},

	{"delete Herald to %s", func(t *testing.T, r *run) {
		text := "short-lived on " + r.store
		id, _ := r.h.publishID(r.carolTok, map[string]any{"as": "carol", "content": text})
		var n *note
		eventually(t, "the post in ann's home timeline", func() bool { n = r.ann.home(text); return n != nil })
		if s := r.h.api("DELETE", "/api/v1/posts/"+id, r.carolTok, nil, nil); s != 200 {
			t.Fatalf("delete: %d", s)
		}
		eventually(t, r.p.name()+" to remove the post", func() bool { return r.ann.reread(*n) == nil })
	}},

	{"boost Herald to %s", func(t *testing.T, r *run) {
		// carol boosts ann's post; the peer counts the boost, and the Undo
		// takes it back.
		h := r.h
		if s := h.api("POST", "/api/v1/boosts", r.carolTok, map[string]string{"as": "carol", "object": r.annPost.URI}, nil); s != 201 {
			t.Fatalf("boost: %d", s)
		}
		eventually(t, r.p.name()+" to count carol's boost", func() bool { return r.ann.reblogs(r.annPost.ID) == 1 })
		if p := h.postBy(r.carolTok, r.carolURI, "hello from "+r.p.name()+" to "+r.store); p == nil || p.Boost == nil {
			t.Fatalf("carol's boost not listed among her posts: %+v", p)
		}
		q := url.Values{"as": {"carol"}, "object": {r.annPost.URI}}
		if s := h.api("DELETE", "/api/v1/boosts?"+q.Encode(), r.carolTok, nil, nil); s != 200 {
			t.Fatalf("unboost: %d", s)
		}
		eventually(t, r.p.name()+" to take carol's Undo", func() bool { return r.ann.unboosted(r.annPost) })
	}},

	{"boost %s to Herald of a note Herald never saw", func(t *testing.T, r *run) {
		// cid is followed by no one on Herald: ann (whom carol follows)
		// boosts cid's post, and Herald fetches it from the peer.
		cid := r.p.newUser(r.store + "_cid")
		text := "a note worth boosting on " + r.store
		st := cid.post(text, "public", "")
		r.ann.act(st.ID, "reblog")
		eventually(t, "ann's boost among ann's posts on Herald", func() bool {
			p := r.h.postBy(r.carolTok, r.ann.actor(), text)
			return p != nil && p.Boost != nil && p.Boost.By == r.ann.actor() && p.URI == st.URI && p.Author == cid.actor()
		})
		r.ann.act(st.ID, "unreblog")
		eventually(t, "the boost undone on Herald", func() bool { return r.h.postBy(r.carolTok, r.ann.actor(), text) == nil })
	}},

	{"long posts %s to Herald", func(t *testing.T, r *run) {
		// Within the peers' 5000 characters, over 5000 bytes as HTML.
		for i, text := range []string{strings.Repeat("a", 4980), strings.Repeat("é", 2600)} {
			mark := fmt.Sprintf("long%d on %s ", i, r.store)
			r.ann.post(mark+text, "public", "")
			eventually(t, "the long post on Herald", func() bool { return r.h.postBy(r.carolTok, r.ann.actor(), mark) != nil })
			if p := r.h.postBy(r.carolTok, r.ann.actor(), mark); !strings.Contains(p.Content, text) {
				t.Fatalf("long post %d stored cut: %d bytes", i, len(p.Content))
			}
		}
	}},

	{"direct post %s to Herald", func(t *testing.T, r *run) {
		h, tok, ann := r.h, r.carolTok, r.ann.actor()
		text := "a secret on " + r.store
		r.ann.direct(r.carolAcct, r.carolURI, text, r.carolDirect)
		eventually(t, "the direct note in carol's thread with ann", func() bool { return h.direct(tok, "carol", ann, text) != nil })
		if d := h.direct(tok, "carol", ann, text); d.Author != ann || d.Local {
			t.Fatalf("stored %+v, want a remote note by %s", d, ann)
		}
		if d := h.direct(tok, "carol", ann, "a direct word on "+r.store); d == nil || !d.Local {
			t.Fatalf("carol's own direct note is not in her thread with ann: %+v", d)
		}
		if h.postBy(tok, ann, "a secret on") != nil {
			t.Fatal("a direct note is listed with the public posts")
		}
	}},

	{"edit %s to Herald", func(t *testing.T, r *run) {
		text := "hello from " + r.p.name() + " to " + r.store
		r.ann.edit(r.annPost.ID, text+", edited")
		eventually(t, "the edit on Herald", func() bool {
			p := r.h.postBy(r.carolTok, r.ann.actor(), text)
			return p != nil && strings.Contains(p.Content, "edited") && p.Updated != ""
		})
	}},

	{"delete %s to Herald", func(t *testing.T, r *run) {
		r.ann.remove(r.annPost.ID)
		eventually(t, "the post gone from Herald", func() bool {
			return r.h.postBy(r.carolTok, r.ann.actor(), "hello from "+r.p.name()+" to "+r.store) == nil
		})
	}},

	{"profile update %s to Herald", func(t *testing.T, r *run) {
		r.ann.rename("Ann on " + r.store)
		eventually(t, "Herald to apply the Update{Person}", func() bool { return r.h.logged("remote actor updated", r.ann.actor()) })
	}},

	{"group follow and announce", func(t *testing.T, r *run) {
		r.skipLacking(t, textMention) // a post reaches the group by naming it
		if s := r.h.api("POST", "/api/v1/groups", r.carolTok, map[string]any{"name": "club", "locked": false}, nil); s != 201 {
			t.Fatalf("create group: %d", s)
		}
		clubAcct, clubURI := "club@"+r.h.host, r.h.base+"/groups/club"
		var clubID string
		eventually(t, r.p.name()+" to resolve "+clubAcct, func() bool {
			clubID = r.ann.resolve(clubAcct)
			return clubID != ""
		})
		for _, u := range []user{r.ann, r.bea} {
			u.follow(clubID)
			eventually(t, u.acct()+" following the group", func() bool { return u.follows(clubID, clubURI) })
		}
		r.ann.mention(clubAcct, "news for the club on "+r.store)
		eventually(t, "the group's boost in bea's home timeline", func() bool {
			n := r.bea.home("news for the club on " + r.store)
			return n != nil && n.Booster == clubID
		})
	}},

	{"Undo of a follow %s to Herald", func(t *testing.T, r *run) {
		r.ann.unfollow(r.carolID)
		eventually(t, "Herald to drop the follow", func() bool { _, ok := r.h.followers(r.carolTok, "carol")[r.ann.actor()]; return !ok })
		r.ann.follow(r.carolID)
		eventually(t, "the second follow accepted", func() bool { return r.h.followers(r.carolTok, "carol")[r.ann.actor()] == "accepted" })
	}},
}

// lastScenarios end every run: a restart, a domain suspension (which
// leaves the follows to be made again), then the logs.
var lastScenarios = []scenario{
	{"Herald restart keeps its key and %s keeps verifying", func(t *testing.T, r *run) {
		if r.store == "memory" {
			t.Skip("the memory store keeps nothing over a restart (no accounts, no keys): restart verified on sqlite and postgres only")
		}
		r.h.stop()
		r.h.start()
		r.h.publish(r.carolTok, map[string]any{"as": "carol", "content": "after the restart on " + r.store})
		eventually(t, "the post after the restart in ann's home timeline", func() bool { return r.ann.home("after the restart on "+r.store) != nil })
		r.ann.post("still here on "+r.store, "public", "")
		eventually(t, "ann's post on the restarted Herald", func() bool { return r.h.postBy(r.carolTok, r.ann.actor(), "still here on "+r.store) != nil })
	}},

	// The peer's domain suspended, then the suspension lifted.
	{"domain suspension of %s and its lift", func(t *testing.T, r *run) {
		h, tok, ann, host := r.h, r.carolTok, r.ann, r.p.hostport()
		// Suspended: nothing more is delivered there, its activities are
		// refused, and the follows both ways go (SPEC §11).
		var block map[string]any
		if s := h.api("POST", "/admin/api/domain-blocks", adminToken, map[string]string{"domain": host, "severity": "suspend", "reason": "interop"}, &block); s != 201 {
			t.Fatalf("suspend %s: %d %v", host, s, block)
		}
		if st := h.followers(tok, "carol")[ann.actor()]; st != "" {
			t.Fatalf("ann still follows carol after the suspension: %q", st)
		}
		// Its followers are gone, so a public post queues nothing for it; a
		// direct note to ann is queued and ends without a request.
		h.publish(tok, map[string]any{"as": "carol", "content": "during the suspension on " + r.store, "visibility": "direct", "to": []string{ann.actor()}})
		eventually(t, "the delivery to the suspended server to end as suspended", func() bool {
			var dead struct {
				Jobs []struct {
					Inbox     string `json:"inbox"`
					LastError string `json:"last_error"`
				} `json:"jobs"`
			}
			h.api("GET", "/admin/api/jobs?state=dead", adminToken, nil, &dead)
			for _, j := range dead.Jobs {
				if strings.Contains(j.Inbox, host) && j.LastError == "suspended" {
					return true
				}
			}
			return false
		})
		ann.post("while suspended on "+r.store, "public", "")
		eventually(t, "Herald to refuse the suspended server's delivery", func() bool {
			return h.logged("refused by the federation policy", host)
		})
		if h.postBy(tok, ann.actor(), "while suspended on "+r.store) != nil {
			t.Fatal("a post of the suspended server was stored")
		}
		if ann.notified("during the suspension on "+r.store, "direct") {
			t.Fatal("the suspended server got carol's note")
		}
		// Lifted: federation resumes once the follows are made again.
		if s := h.api("DELETE", "/admin/api/domain-blocks/"+url.PathEscape(host), adminToken, nil, nil); s != 204 {
			t.Fatalf("lift: %d", s)
		}
		// The peer was not told of the follows the suspension removed (no
		// more than Mastodon tells a server it suspends): ann unfollows and
		// follows again. Herald answers the Undo first: the peer may deliver
		// the two out of order, and an Undo taken after the new Follow would
		// undo it.
		ann.unfollow(r.carolID)
		eventually(t, "Herald to take ann's Undo of the follow it no longer holds", func() bool {
			return h.logged("activity ignored", ann.actor(), "no such follow")
		})
		ann.follow(r.carolID)
		eventually(t, "ann's new follow accepted", func() bool { return h.followers(tok, "carol")[ann.actor()] == "accepted" })
		h.publish(tok, map[string]any{"as": "carol", "content": "after the lift on " + r.store})
		eventually(t, "the post after the lift in ann's home timeline", func() bool { return ann.home("after the lift on "+r.store) != nil })
		if why := r.p.lacks(refollow); why != "" {
			t.Skipf("verified up to carol's post after the lift; carol's new follow of ann and ann's posts on Herald after it stay unverified against %s: %s", r.p.name(), why)
		}
		h.follow(tok, "carol", ann.actor())
		eventually(t, "carol's new follow of ann accepted", func() bool { return h.follow(tok, "carol", ann.actor()) == "accepted" })
		ann.post("back after the lift on "+r.store, "public", "")
		eventually(t, "ann's post after the lift on Herald", func() bool { return h.postBy(tok, ann.actor(), "back after the lift on "+r.store) != nil })
	}},
	{"no 5xx from Herald and no panic in either log", func(t *testing.T, r *run) {
		checkHeraldLog(t, r.h)
		r.p.checkLog(t, r.h)
	}},
}

// stores are the Herald stores the suite runs on, by HERALD_STORE value:
// memory, PostgreSQL (the two) and SQLite (the default store).
func stores() []string {
	if s := os.Getenv("HERALD_INTEROP_STORES"); s != "" {
		return strings.Split(s, ",")
	}
	return []string{"memory", "sqlite", "postgres"}
}

// eachStore runs f once per store, on a fresh Herald each time.
func eachStore(t *testing.T, f func(t *testing.T, store string, h *herald)) {
	for _, store := range stores() {
		t.Run(store, func(t *testing.T) {
			env := map[string]string{"HERALD_STORE": store}
			switch store {
			case "sqlite":
				env["HERALD_DATA_DIR"] = t.TempDir()
			case "postgres":
				env["DATABASE_URL"] = postgresDatabase(t)
			case "memory":
			default:
				t.Fatalf("store %q: want memory, sqlite or postgres", store)
			}
			f(t, store, newHerald(t, env))
		})
	}
}

// masto is the Mastodon client API as both peers serve it.
type masto struct {
	t      func() *testing.T // the test its calls fail
	call   func(method, path string, form url.Values, out any) int
	uri    string
	handle string
}

func (m masto) actor() string { return m.uri }
func (m masto) acct() string  { return m.handle }

func (m masto) resolve(acct string) string {
	var res struct {
		Accounts []gtsAccount `json:"accounts"`
	}
	q := url.Values{"q": {"@" + acct}, "resolve": {"true"}, "type": {"accounts"}}
	if s := m.call("GET", "/api/v2/search?"+q.Encode(), nil, &res); s != 200 || len(res.Accounts) == 0 {
		return ""
	}
	return res.Accounts[0].ID
}

func (m masto) must(method, path string, form url.Values, out any) {
	m.t().Helper()
	if s := m.call(method, path, form, out); s != 200 {
		m.t().Fatalf("%s %s: %d", method, path, s)
	}
}

func (m masto) follow(id string) { m.must("POST", "/api/v1/accounts/"+id+"/follow", url.Values{}, nil) }
func (m masto) unfollow(id string) {
	m.must("POST", "/api/v1/accounts/"+id+"/unfollow", url.Values{}, nil)
}

func (m masto) post(text, visibility, replyTo string) status {
	form := url.Values{"status": {text}, "visibility": {visibility}}
	if replyTo != "" {
		form.Set("in_reply_to_id", replyTo)
	}
	var st gtsStatus
	m.must("POST", "/api/v1/statuses", form, &st)
	if st.ID == "" || st.URI == "" {
		m.t().Fatalf("posting %q: no id or uri in the answer", clip([]byte(text)))
	}
	return status{ID: st.ID, URI: st.URI}
}

func (m masto) mention(acct, text string) status { return m.post("@"+acct+" "+text, "public", "") }

func (m masto) find(uri string) string {
	var res struct {
		Statuses []gtsStatus `json:"statuses"`
	}
	q := url.Values{"q": {uri}, "resolve": {"true"}, "type": {"statuses"}}
	if s := m.call("GET", "/api/v2/search?"+q.Encode(), nil, &res); s != 200 || len(res.Statuses) == 0 {
		return ""
	}
	return res.Statuses[0].ID
}

func (m masto) edit(id, text string) {
	m.must("PUT", "/api/v1/statuses/"+id, url.Values{"status": {text}}, nil)
}

func (m masto) remove(id string) { m.must("DELETE", "/api/v1/statuses/"+id, nil, nil) }

func (m masto) act(id, action string) {
	m.must("POST", "/api/v1/statuses/"+id+"/"+action, url.Values{}, nil)
}

func (m masto) reblogs(id string) int {
	var st gtsStatus
	if s := m.call("GET", "/api/v1/statuses/"+id, nil, &st); s != 200 {
		return -1
	}
	return st.ReblogsCnt
}

func (m masto) notified(text, visibility string) bool {
	var ns []gtsNotification
	m.call("GET", "/api/v1/notifications?limit=40", nil, &ns)
	return hasMention(ns, text, visibility)
}

func (m masto) rename(display string) {
	m.must("PATCH", "/api/v1/accounts/update_credentials", url.Values{"display_name": {display}}, nil)
}
