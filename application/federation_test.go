package application_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/fake"
)

// A Follow racing the Undo of the follower's previous Follow (GoToSocial
// sends them back to back) finds the old pair, which the Undo then
// removes: the newer Follow stands, accepted, not a 404 the sender would
// take as final.
func TestInboxFollowRacingTheUndoOfAnEarlierOne(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	mustDeliver(t, b, bob, follow("https://remote.example/f/1", bob, alice))
	b.racing = func() {
		if err := b.follows.Remove(t.Context(), bob, alice); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.deliver("", bob, follow("https://remote.example/f/2", bob, alice)); err != nil {
		t.Fatalf("the newer Follow: %v", err)
	}
	if b.racing != nil {
		t.Fatal("the race was not played")
	}
	if f, ok := b.follower(bob, alice); !ok || f.State != domain.FollowAccepted || f.ActivityID != "https://remote.example/f/2" {
		t.Fatalf("follower %+v %v, want the newer Follow accepted", f, ok)
	}
}

func TestInboxFollowIsAcceptedAndAnswered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, object, senderName string
	}{
		{"persona", alice, "alice"},
		{"group", club, "club"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			for range 2 { // a redelivered Follow changes nothing and queues no second Accept
				mustDeliver(t, b, bob, follow("https://remote.example/f/1", bob, tt.object))
			}
			f, ok := b.follower(bob, tt.object)
			if !ok || f.State != domain.FollowAccepted || f.ActivityID != "https://remote.example/f/1" {
				t.Fatalf("follower %+v %v", f, ok)
			}
			jobs := b.allJobs()
			if len(jobs) != 1 {
				t.Fatalf("%d jobs, want one Accept", len(jobs))
			}
			j := jobs[0]
			local, _ := b.fed.Actors.ByURI(t.Context(), tt.object)
			if j.Inbox != bob+"/inbox" || j.SenderID != local.ID || j.KeyID != tt.object+"#main-key" {
				t.Fatalf("job %+v", j)
			}
			p := payload(t, j)
			obj, _ := p["object"].(map[string]any)
			if p["type"] != "Accept" || p["actor"] != tt.object || obj["id"] != "https://remote.example/f/1" || obj["actor"] != bob || obj["object"] != tt.object {
				t.Fatalf("accept %s", j.Payload)
			}
		})
	}
}

func TestInboxRefusalsLeaveNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, actor, activity string
		want                  error
	}{
		{"actor is not the signer", bob, follow("https://remote.example/f/1", carol, alice), domain.ErrUnauthorized},
		{"follow of an unknown persona", bob, follow("https://remote.example/f/1", bob, local+"/users/nobody"), domain.ErrNotFound},
		{"follow of a remote actor", bob, follow("https://remote.example/f/1", bob, dave), domain.ErrInvalidInput},
		{"follow without id", bob, `{"type":"Follow","actor":"` + bob + `","object":"` + alice + `"}`, domain.ErrInvalidInput},
		{"note on another host", bob, `{"type":"Create","actor":"` + bob + `","to":["` + application.ASPublic + `"],"object":{"id":"https://other.example/n/1","type":"Note","content":"x"}}`, domain.ErrForbidden},
		{"note by someone else", bob, `{"type":"Create","actor":"` + bob + `","to":["` + application.ASPublic + `"],"object":{"id":"https://remote.example/n/1","type":"Note","attributedTo":"` + carol + `","content":"x"}}`, domain.ErrForbidden},
		{"empty note", bob, `{"type":"Create","actor":"` + bob + `","to":["` + application.ASPublic + `","` + alice + `"],"object":{"id":"https://remote.example/n/1","type":"Note","content":" "}}`, domain.ErrInvalidInput},
		{"undo of someone else's follow", bob, `{"type":"Undo","actor":"` + bob + `","object":{"type":"Follow","actor":"` + carol + `","object":"` + alice + `"}}`, domain.ErrForbidden},
		{"update of another actor", bob, `{"type":"Update","actor":"` + bob + `","object":{"id":"` + carol + `","type":"Person"}}`, domain.ErrForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			before, _ := b.content.ByActorURI(t.Context(), carol)
			_, err := b.deliver("", tt.actor, tt.activity)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if n, _ := b.follows.CountFollowers(t.Context(), alice, domain.FollowAccepted); n != 0 {
				t.Errorf("%d followers stored", n)
			}
			if _, err := b.content.PostByObjectURI(t.Context(), "https://remote.example/n/1"); err == nil {
				t.Error("post stored")
			}
			if _, err := b.content.PostByObjectURI(t.Context(), "https://other.example/n/1"); err == nil {
				t.Error("post stored")
			}
			if len(b.allJobs()) != 0 {
				t.Error("jobs queued")
			}
			if after, _ := b.content.ByActorURI(t.Context(), carol); after != before {
				t.Error("foreign actor changed")
			}
		})
	}
}

// A Follow whose Accept cannot be queued is undone, so the remote's retry
// finds a clean slate.
func TestInboxFollowUndoneWhenTheAcceptIsNotQueued(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	b.signer(bob)
	b.enqueue.ok = 0
	if _, err := b.deliver("", bob, follow("https://remote.example/f/1", bob, alice)); !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("err %v", err)
	}
	b.wantFollows(bob, alice, false)
}

func TestInboxUndoFollow(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, recipient, undo string }{
		{"embedded follow", "", `{"type":"Undo","actor":"` + bob + `","object":{"id":"https://remote.example/f/1","type":"Follow","actor":"` + bob + `","object":"` + alice + `"}}`},
		{"follow by id at the personal inbox", alice, `{"type":"Undo","actor":"` + bob + `","object":"https://remote.example/f/1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			mustDeliver(t, b, bob, follow("https://remote.example/f/1", bob, alice))
			if _, err := b.deliver(tt.recipient, bob, tt.undo); err != nil {
				t.Fatal(err)
			}
			b.wantFollows(bob, alice, false)
			res, err := b.deliver(tt.recipient, bob, tt.undo)
			if err != nil || !res.Ignored {
				t.Fatalf("second undo: %+v %v", res, err)
			}
		})
	}
}

func TestFollowRemoteThenAcceptOrReject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, target, answer string
		accepted             bool
	}{
		{"user@host, Accept with the embedded follow", "bob@remote.example", `{"type":"Accept","actor":"` + bob + `","object":{"id":"%s","type":"Follow","actor":"` + alice + `","object":"` + bob + `"}}`, true},
		{"URI, Accept of the follow's id", bob, `{"type":"Accept","actor":"` + bob + `","object":"%s"}`, true},
		{"@user@host, Reject", "@bob@remote.example", `{"type":"Reject","actor":"` + bob + `","object":{"id":"%s","type":"Follow","actor":"` + alice + `","object":"` + bob + `"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			b.webfinger("bob@remote.example", bob)
			ctx := t.Context()
			res, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: tt.target})
			if err != nil {
				t.Fatal(err)
			}
			if res.Target != bob || res.State != domain.FollowPending || !res.Created || res.Queued != 1 {
				t.Fatalf("followed %+v", res)
			}
			jobs := b.allJobs()
			if len(jobs) != 1 || jobs[0].Inbox != bob+"/inbox" || jobs[0].KeyID != alice+"#main-key" {
				t.Fatalf("jobs %+v", jobs)
			}
			if p := payload(t, jobs[0]); p["type"] != "Follow" || p["actor"] != alice || p["object"] != bob || p["id"] != res.ActivityID {
				t.Fatalf("follow %s", jobs[0].Payload)
			}
			// Asking again while pending queues nothing new.
			again, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: bob})
			if err != nil || again.Created || again.ActivityID != res.ActivityID || len(b.allJobs()) != 1 {
				t.Fatalf("again %+v %v, %d jobs", again, err, len(b.allJobs()))
			}
			// Bob cannot answer a follow of someone else.
			other := strings.Replace(fmt.Sprintf(tt.answer, res.ActivityID), `"object":"`+bob+`"`, `"object":"`+carol+`"`, 1)
			if other != fmt.Sprintf(tt.answer, res.ActivityID) {
				if _, err := b.deliver("", bob, other); !errors.Is(err, domain.ErrForbidden) {
					t.Fatalf("answer of a follow of carol: %v", err)
				}
			}
			// The answer must come from the followed actor: carol's is ignored.
			if r, err := b.deliver("", carol, strings.ReplaceAll(fmt.Sprintf(tt.answer, res.ActivityID), bob, carol)); err != nil || !r.Ignored {
				t.Fatalf("carol's answer: %+v %v", r, err)
			}
			if _, err := b.deliver(alice, bob, fmt.Sprintf(tt.answer, res.ActivityID)); err != nil {
				t.Fatal(err)
			}
			f, ok := b.follower(alice, bob)
			if tt.accepted != (ok && f.State == domain.FollowAccepted) || (!tt.accepted && ok) {
				t.Fatalf("after the answer: %+v %v", f, ok)
			}
		})
	}
}

func TestFollowRemoteRefusals(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	other := signUp(t, b.app.SignUp, "mallory")
	tests := []struct {
		name, user, as, target string
		want                   error
	}{
		{"someone else's persona", other.User.ID, "alice", bob, domain.ErrForbidden},
		{"unknown persona", b.userID, "nobody", bob, domain.ErrInvalidInput},
		{"empty target", b.userID, "alice", " ", domain.ErrInvalidInput},
		{"not a URI nor an account", b.userID, "alice", "bob", domain.ErrInvalidInput},
		{"ftp URI", b.userID, "alice", "ftp://remote.example/bob", domain.ErrInvalidInput},
		{"unknown account", b.userID, "alice", "nobody@remote.example", domain.ErrNotFound},
		{"remote down", b.userID, "alice", "https://down.example/users/x", domain.ErrUnavailable},
		{"itself", b.userID, "alice", "alice@local.example", domain.ErrInvalidInput},
		{"the instance actor", b.userID, "alice", local + "/actor", domain.ErrInvalidInput},
	}
	b.fetcher.errs["https://down.example/users/x"] = fmt.Errorf("%w: connection refused", domain.ErrUnavailable)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: tt.user, As: tt.as, Target: tt.target})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if len(b.allJobs()) != 0 {
				t.Fatal("a Follow was queued")
			}
			if n, _ := b.follows.CountFollowers(ctx, bob, domain.FollowPending); n != 0 {
				t.Fatal("a follow was stored")
			}
		})
	}
	t.Run("Follow not queued: no follow stored", func(t *testing.T) {
		b.enqueue.ok = 0
		defer func() { b.enqueue.ok = 1 << 30 }()
		if _, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: bob}); !errors.Is(err, fake.ErrInjected) {
			t.Fatalf("err %v", err)
		}
		if _, ok := b.follower(alice, bob); ok {
			t.Fatal("follow stored without its Follow queued")
		}
	})
	t.Run("local target: accepted at once, nothing sent", func(t *testing.T) {
		res, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: "club@LOCAL.example"})
		if err != nil || res.State != domain.FollowAccepted || res.Target != club || len(b.allJobs()) != 0 {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

// A remote note within its server's own character limit is stored however
// many bytes its HTML takes (GoToSocial allows 5000 characters).
func TestInboxCreateOfALongRemoteNote(t *testing.T) {
	t.Parallel()
	b := setupFollowing(t)
	ctx := t.Context()
	for i, text := range []string{strings.Repeat("a", 4995), strings.Repeat("é", 2600)} {
		obj := fmt.Sprintf("https://remote.example/users/bob/statuses/long%d", i)
		for _, to := range [][]string{{application.ASPublic}, {alice}} {
			if _, err := b.deliver("", bob, note(obj+to[0][len(to[0])-3:], bob, "<p>"+text+"</p>", to...)); err != nil {
				t.Fatalf("%d characters (%d bytes) to %v: %v", len([]rune(text)), len(text), to, err)
			}
		}
		if p, err := b.content.PostByObjectURI(ctx, obj+"lic"); err != nil || p.Content != "<p>"+text+"</p>" {
			t.Fatalf("post: %v", err)
		}
	}
	_, err := b.deliver("", bob, note("https://remote.example/users/bob/statuses/huge", bob, strings.Repeat("x", domain.MaxRemoteTextChars+1), application.ASPublic))
	if !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("a note over the remote limit: %v", err)
	}
}

// A direct note that names one of our actors only by a Mention tag (and is
// posted to the shared inbox) is a conversation with that actor.
func TestInboxDirectNoteByMentionOnly(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	const obj = "https://remote.example/users/bob/statuses/dm"
	act := `{"id":"` + obj + `/activity","type":"Create","actor":"` + bob + `","object":{"id":"` + obj + `","type":"Note","attributedTo":"` + bob +
		`","content":"psst","tag":[{"type":"Mention","href":"` + alice + `"}]}}`
	mustDeliver(t, b, bob, act)
	dm, err := b.content.DmByObjectURI(t.Context(), obj)
	if err != nil || dm.ParticipantsKey != domain.ParticipantsKey([]string{bob, alice}) {
		t.Fatalf("dm %+v %v", dm, err)
	}
}

// Update{Note}: only the author edits, and only a later "updated" applies,
// so a redelivered or out-of-order Update changes nothing.
func TestInboxUpdateOfANote(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		to   []string
	}{{"public post", []string{application.ASPublic}}, {"direct post", []string{alice}}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFollowing(t)
			ctx := t.Context()
			const obj = "https://remote.example/users/bob/statuses/e1"
			mustDeliver(t, b, bob, note(obj, bob, "<p>first</p>", tt.to...))
			content := func() string {
				if p, err := b.content.PostByObjectURI(ctx, obj); err == nil {
					return p.Content
				}
				dm, _ := b.content.DmByObjectURI(ctx, obj)
				return dm.Content
			}
			update := func(actor, author, text, updated string) (application.InboxResult, error) {
				return b.deliver("", actor, `{"type":"Update","actor":"`+actor+`","object":{"id":"`+obj+`","type":"Note","attributedTo":"`+author+
					`","content":"`+text+`","updated":"`+updated+`"}}`)
			}
			if res, err := update(bob, bob, "<p>second</p>", "2026-06-01T11:00:00Z"); err != nil || res.Duplicate || res.Ignored || content() != "<p>second</p>" {
				t.Fatalf("edit: %+v %v, content %q", res, err, content())
			}
			if res, err := update(bob, bob, "<p>second</p>", "2026-06-01T11:00:00Z"); err != nil || !res.Duplicate {
				t.Fatalf("the same Update again: %+v %v", res, err)
			}
			if res, err := update(bob, bob, "<p>older</p>", "2026-06-01T10:30:00Z"); err != nil || !res.Duplicate || content() != "<p>second</p>" {
				t.Fatalf("an older Update: %+v %v, content %q", res, err, content())
			}
			if _, err := update(carol, carol, "<p>hijack</p>", "2026-06-01T12:00:00Z"); !errors.Is(err, domain.ErrForbidden) || content() != "<p>second</p>" {
				t.Fatalf("another actor's Update: %v, content %q", err, content())
			}
			if _, err := update(bob, bob, strings.Repeat("x", domain.MaxRemoteTextChars+1), "2026-06-01T12:00:00Z"); !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("an Update over the remote limits: %v", err)
			}
		})
	}
}

// Likes and Announces of our posts are counted once per actor and kind,
// and Undo takes them back (only their actor's Undo).
func TestInboxLikesAndAnnouncesOfOurPosts(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "hello"})
	obj := res.ObjectURI
	count := func() map[domain.ReactionKind]int {
		c, err := b.fed.Collections.Reactions(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for i, act := range []string{
		`{"id":"https://remote.example/l/1","type":"Like","actor":"` + bob + `","object":"` + obj + `"}`,
		`{"id":"https://remote.example/l/1","type":"Like","actor":"` + bob + `","object":"` + obj + `"}`,
		`{"id":"https://remote.example/a/1","type":"Announce","actor":"` + bob + `","object":"` + obj + `"}`,
		`{"id":"https://remote.example/l/2","type":"Like","actor":"` + carol + `","object":{"id":"` + obj + `","type":"Note"}}`,
	} {
		r, err := b.deliver("", actorOf(act), act)
		if err != nil || r.Ignored || r.Duplicate != (i == 1) {
			t.Fatalf("%d: %+v %v", i, r, err)
		}
	}
	if c := count(); c[domain.ReactionLike] != 2 || c[domain.ReactionAnnounce] != 1 {
		t.Fatalf("counts %v", c)
	}
	undo := func(actor, inner, typ string) (application.InboxResult, error) {
		return b.deliver("", actor, `{"type":"Undo","actor":"`+actor+`","object":{"id":"https://remote.example/x","type":"`+typ+`","actor":"`+inner+`","object":"`+obj+`"}}`)
	}
	if _, err := undo(carol, bob, "Like"); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("undo of bob's like by carol: %v", err)
	}
	if _, err := undo(bob, bob, "Like"); err != nil {
		t.Fatal(err)
	}
	if _, err := undo(bob, bob, "Announce"); err != nil {
		t.Fatal(err)
	}
	if r, err := undo(bob, bob, "Announce"); err != nil || !r.Ignored {
		t.Fatalf("undo twice: %+v %v", r, err)
	}
	if c := count(); c[domain.ReactionLike] != 1 || c[domain.ReactionAnnounce] != 0 {
		t.Fatalf("counts after undo %v", c)
	}
}

func actorOf(act string) string {
	var a struct {
		Actor string `json:"actor"`
	}
	_ = json.Unmarshal([]byte(act), &a)
	return a.Actor
}

func TestInboxCreateStoresOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		to   []string
		vis  domain.Visibility // "" for a DM
	}{
		{"public", []string{application.ASPublic, bob + "/followers"}, domain.VisibilityPublic},
		{"public as as:Public", []string{"as:Public"}, domain.VisibilityPublic},
		{"followers only", []string{bob + "/followers"}, domain.VisibilityFollowers},
		{"direct", []string{alice, dave}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFollowing(t)
			ctx := t.Context()
			const obj = "https://remote.example/users/bob/statuses/1"
			for i := range 2 {
				res, err := b.deliver("", bob, note(obj, bob, "<p>hello</p>", tt.to...))
				if err != nil || res.Duplicate != (i == 1) {
					t.Fatalf("delivery %d: %+v %v", i, res, err)
				}
			}
			if tt.vis == "" {
				dm, err := b.content.DmByObjectURI(ctx, obj)
				if err != nil {
					t.Fatal(err)
				}
				if dm.ParticipantsKey != domain.ParticipantsKey([]string{bob, alice, dave}) || dm.AuthorURI != bob || dm.Local {
					t.Fatalf("dm %+v", dm)
				}
				if _, err := b.content.PostByObjectURI(ctx, obj); err == nil {
					t.Fatal("a DM was stored as a post too")
				}
				return
			}
			p, err := b.content.PostByObjectURI(ctx, obj)
			if err != nil {
				t.Fatal(err)
			}
			if p.Visibility != tt.vis || p.AuthorURI != bob || p.Content != "<p>hello</p>" || p.Local || p.Published.Format("15:04") != "10:00" {
				t.Fatalf("post %+v", p)
			}
			if posts, _ := b.content.PostsByAuthor(ctx, bob, t0.AddDate(1, 0, 0), 10); len(posts) != 1 {
				t.Fatalf("%d posts stored", len(posts))
			}
		})
	}
}

func TestInboxCreateToGroupIsAnnouncedToItsFollowers(t *testing.T) {
	t.Parallel()
	const obj = "https://remote.example/users/bob/statuses/7"
	tests := []struct {
		name      string
		member    bool
		failQueue bool
		pending   bool
	}{
		{"member: announced", true, false, false},
		{"stranger: stored, not announced", false, false, false},
		{"pending member: stored, not announced", false, false, true},
		{"announce not queued: nothing stored", true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			ctx := t.Context()
			// Followers of the club: carol (remote.example, shared inbox with
			// bob) and dave (other.example, no shared inbox).
			for i, f := range []string{carol, dave} {
				mustDeliver(t, b, f, follow(fmt.Sprintf("%s/f/%d", f, i), f, club))
			}
			if tt.member {
				mustDeliver(t, b, bob, follow("https://remote.example/f/bob", bob, club))
			}
			if tt.pending {
				f, _ := domain.NewFollower(bob, club, "https://remote.example/f/bob", domain.FollowPending, t0)
				if _, err := b.follows.Add(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
			accepts := len(b.allJobs())
			if tt.failQueue {
				b.enqueue.ok = 0
			}
			_, err := b.deliver("", bob, note(obj, bob, "to the club", application.ASPublic, club))
			if tt.failQueue {
				if err == nil {
					t.Fatal("no error")
				}
				if _, err := b.content.PostByObjectURI(ctx, obj); err == nil {
					t.Fatal("post kept although its announce was not queued")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := b.content.PostByObjectURI(ctx, obj)
			if err != nil {
				t.Fatal(err)
			}
			announces := b.allJobs()[accepts:]
			if !tt.member {
				if p.GroupURI != "" || len(announces) != 0 {
					t.Fatalf("stranger's post %+v, %d announces", p, len(announces))
				}
				return
			}
			if p.GroupURI != club {
				t.Fatalf("post %+v", p)
			}
			got := map[string]bool{}
			group, _ := b.fed.Actors.ByURI(ctx, club)
			for _, j := range announces {
				got[j.Inbox] = true
				pl := payload(t, j)
				o, _ := pl["object"].(map[string]any)
				if pl["type"] != "Announce" || pl["actor"] != club || o["id"] != obj || j.SenderID != group.ID || j.KeyID != club+"#main-key" {
					t.Fatalf("announce %s by %s", j.Payload, j.SenderID)
				}
			}
			// bob and carol share remote.example's inbox: one copy there.
			if len(announces) != 2 || !got[shared] || !got[dave+"/inbox"] {
				t.Fatalf("announced to %v", got)
			}
		})
	}
}

func TestInboxDelete(t *testing.T) {
	t.Parallel()
	const obj = "https://remote.example/users/bob/statuses/1"
	b := setupFollowing(t)
	ctx := t.Context()
	mustDeliver(t, b, bob, note(obj, bob, "x", application.ASPublic))
	if _, err := b.deliver("", carol, `{"type":"Delete","actor":"`+carol+`","object":{"id":"`+obj+`","type":"Tombstone"}}`); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("carol deleting bob's note: %v", err)
	}
	if _, err := b.content.PostByObjectURI(ctx, obj); err != nil {
		t.Fatal("note gone after a refused delete")
	}
	mustDeliver(t, b, bob, `{"type":"Delete","actor":"`+bob+`","object":"`+obj+`"}`)
	if _, err := b.content.PostByObjectURI(ctx, obj); err == nil {
		t.Fatal("note still there")
	}
	if res, err := b.deliver("", bob, `{"type":"Delete","actor":"`+bob+`","object":"`+obj+`"}`); err != nil || !res.Ignored {
		t.Fatalf("second delete %+v %v", res, err)
	}

	// Deleting the actor drops its cache entry and every follow it is in.
	mustDeliver(t, b, bob, follow("https://remote.example/f/1", bob, alice))
	if _, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: bob}); err != nil {
		t.Fatal(err)
	}
	mustDeliver(t, b, bob, `{"type":"Delete","actor":"`+bob+`","object":"`+bob+`"}`)
	if _, err := b.content.ByActorURI(ctx, bob); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("foreign actor kept: %v", err)
	}
	b.wantFollows(bob, alice, false)
	b.wantFollows(alice, bob, false)
}

func TestInboxUpdateRefreshesTheActor(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.signer(bob)
	doc := remoteActorDoc(bob, b.keys[1].PublicPEM, "https://remote.example/new-inbox")
	mustDeliver(t, b, bob, `{"type":"Update","actor":"`+bob+`","object":`+string(doc)+`}`)
	fa, _ := b.content.ByActorURI(ctx, bob)
	if fa.SharedInbox != "https://remote.example/new-inbox" || fa.PublicKeyPEM != strings.TrimSpace(b.keys[1].PublicPEM) {
		t.Fatalf("cached %+v", fa)
	}
	// An incomplete embedded actor: fetched again from its server.
	b.fetcher.set(bob, remoteActorDoc(bob, b.keys[0].PublicPEM, "https://remote.example/third-inbox"))
	mustDeliver(t, b, bob, `{"type":"Update","actor":"`+bob+`","object":{"id":"`+bob+`","type":"Person","name":"Bob"}}`)
	if fa, _ := b.content.ByActorURI(ctx, bob); fa.SharedInbox != "https://remote.example/third-inbox" {
		t.Fatalf("cached %+v", fa)
	}
}

func TestInboxIgnoresWhatItDoesNotHandle(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	for _, act := range []string{
		`{"type":"Like","actor":"` + bob + `","object":"` + local + `/users/alice/statuses/1"}`,
		`{"type":"Announce","actor":"` + bob + `","object":"https://remote.example/n/1"}`,
		`{"type":"Create","actor":"` + bob + `","object":"https://remote.example/n/1"}`,
		`{"type":"Create","actor":"` + bob + `","object":{"id":"https://remote.example/e/1","type":"Event"}}`,
		`{"type":"Undo","actor":"` + bob + `","object":{"type":"Like","actor":"` + bob + `"}}`,
		`{"type":"Update","actor":"` + bob + `","object":{"id":"https://remote.example/n/1","type":"Note"}}`,
		`{"type":"Accept","actor":"` + bob + `","object":"https://remote.example/f/1"}`,
		follow("https://remote.example/f/9", bob, local+"/actor"),
	} {
		res, err := b.deliver("", bob, act)
		if err != nil || !res.Ignored {
			t.Errorf("%s: %+v %v", act, res, err)
		}
	}
	if len(b.allJobs()) != 0 {
		t.Fatal("ignored activities queued deliveries")
	}
}

func TestResolverByKeyID(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t.Run("fetched once, then cached; stale copies refreshed", func(t *testing.T) {
		b := setupFed(t)
		fa, fresh, err := b.fed.Resolver.ByKeyID(ctx, bob+"#main-key")
		if err != nil || !fresh || fa.ActorURI != bob {
			t.Fatalf("%+v %v %v", fa, fresh, err)
		}
		if _, fresh, err := b.fed.Resolver.ByKeyID(ctx, bob+"#main-key"); err != nil || fresh || b.fetcher.count(bob) != 1 {
			t.Fatalf("second lookup fresh=%v err=%v fetches=%d", fresh, err, b.fetcher.count(bob))
		}
		b.fetcher.mu.Lock()
		signed := b.fetcher.calls[0]
		b.fetcher.mu.Unlock()
		if signed.KeyID != local+"/actor#main-key" || signed.PrivateKeyPEM == "" || !strings.Contains(signed.Accept, "activity+json") {
			t.Fatalf("fetch not signed as the instance actor: %+v", signed)
		}
		b.clock.Advance(domain.ForeignAvatarTTL + 1)
		if _, fresh, _ := b.fed.Resolver.ByKeyID(ctx, bob+"#main-key"); !fresh || b.fetcher.count(bob) != 2 {
			t.Fatalf("stale copy not refreshed: fresh=%v fetches=%d", fresh, b.fetcher.count(bob))
		}
	})
	t.Run("key document naming its owner", func(t *testing.T) {
		b := setupFed(t)
		const keyURL = "https://remote.example/users/erin/main-key"
		const erin = "https://remote.example/users/erin"
		b.fetcher.set(keyURL, []byte(`{"id":"`+keyURL+`","owner":"`+erin+`","publicKeyPem":"x"}`))
		doc := strings.Replace(string(remoteActorDoc(erin, b.keys[0].PublicPEM, "")), erin+"#main-key", keyURL, 1)
		b.fetcher.set(erin, []byte(doc))
		fa, _, err := b.fed.Resolver.ByKeyID(ctx, keyURL)
		if err != nil || fa.ActorURI != erin || fa.PublicKeyID != keyURL {
			t.Fatalf("%+v %v", fa, err)
		}
	})
	t.Run("refusals are ErrUnauthorized", func(t *testing.T) {
		for _, tt := range []struct {
			name, keyID string
			serve       func(b *fedBundle)
		}{
			{"a key of an actor of another host", "https://evil.example/users/x#main-key", func(b *fedBundle) {
				// evil.example answers with bob's id and its own key: bob's
				// own server is asked, and bob publishes no such key.
				b.fetcher.set("https://evil.example/users/x", remoteActorDoc(bob, b.keys[1].PublicPEM, ""))
			}},
			{"a key document naming an owner on another host", "https://evil.example/k", func(b *fedBundle) {
				b.fetcher.set("https://evil.example/k", []byte(`{"id":"https://evil.example/k","owner":"`+bob+`","publicKeyPem":"x"}`))
			}},
			{"a key the actor does not publish", bob + "#other-key", nil},
			{"a gone key", "https://gone.example/users/x#main-key", nil},
			{"one of ours", local + "/users/alice#main-key", nil},
			{"not a URL", "not a url", nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				b := setupFed(t)
				if tt.serve != nil {
					tt.serve(b)
				}
				if _, _, err := b.fed.Resolver.ByKeyID(ctx, tt.keyID); !errors.Is(err, domain.ErrUnauthorized) {
					t.Errorf("err %v, want ErrUnauthorized", err)
				}
				if fa, err := b.content.ByActorURI(ctx, bob); err == nil && !samePEM(fa.PublicKeyPEM, b.keys[0].PublicPEM) {
					t.Errorf("bob cached with another key than his own")
				}
			})
		}
	})
	t.Run("a document answering for another host's actor is judged by that host", func(t *testing.T) {
		b := setupFed(t)
		b.fetcher.set("https://evil.example/users/x", remoteActorDoc(bob, b.keys[1].PublicPEM, ""))
		fa, err := b.fed.Resolver.Resolve(ctx, "https://evil.example/users/x")
		if err != nil || fa.ActorURI != bob || !samePEM(fa.PublicKeyPEM, b.keys[0].PublicPEM) {
			t.Fatalf("%+v %v: want bob as remote.example serves him", fa, err)
		}
		if b.fetcher.count(bob) != 1 {
			t.Fatalf("bob's own server asked %d times", b.fetcher.count(bob))
		}
	})
}

func samePEM(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) }

// TestDereferencerOrigin plays the server that tries to speak for
// another (SPEC §10 "Origin"): each document is judged by the host that
// finally answered it, and a document whose id is elsewhere is fetched
// again from there.
func TestDereferencerOrigin(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const (
		victimKey = bob + "#main-key"
		redirect  = "https://remote.example/out?to=evil" // an open redirect on bob's host
		evilDoc   = "https://evil.example/fake-bob"
	)
	t.Run("a key id redirecting to another host's document claiming the victim", func(t *testing.T) {
		for _, cached := range []bool{false, true} {
			b := setupFed(t)
			before := 0
			if cached {
				b.signer(bob)
				before = b.fetcher.count(bob)
			}
			// evil.example serves "bob" with evil's key, under the key id
			// the attacker signs with.
			doc := strings.Replace(string(remoteActorDoc(bob, b.keys[1].PublicPEM, "")), victimKey, redirect, 1)
			b.fetcher.set(evilDoc, []byte(doc))
			b.fetcher.redirects[redirect] = evilDoc
			if _, _, err := b.fed.Resolver.ByKeyID(ctx, redirect); !errors.Is(err, domain.ErrUnauthorized) {
				t.Fatalf("cached=%v: err %v, want ErrUnauthorized", cached, err)
			}
			if n := b.fetcher.count(bob) - before; n != 1 {
				t.Fatalf("cached=%v: bob's own document fetched %d times, want once (the id's own answer)", cached, n)
			}
			fa, err := b.content.ByKeyID(ctx, victimKey)
			if cached && (err != nil || !samePEM(fa.PublicKeyPEM, b.keys[0].PublicPEM)) {
				t.Fatalf("bob's key is now %v %v", fa.PublicKeyID, err)
			}
			if !cached && err == nil {
				t.Fatalf("bob cached from a refused fetch: %+v", fa)
			}
			if _, err := b.content.ByKeyID(ctx, redirect); err == nil {
				t.Fatalf("cached=%v: the redirect's key was cached", cached)
			}
		}
	})
	t.Run("only ActivityPub media types", func(t *testing.T) {
		for _, ct := range []string{"text/html; charset=utf-8", "application/json", "text/plain", ""} {
			b := setupFed(t)
			b.fetcher.types[bob] = ct
			if _, _, err := b.fed.Resolver.ByKeyID(ctx, victimKey); !errors.Is(err, domain.ErrUnauthorized) {
				t.Errorf("%q: err %v, want ErrUnauthorized", ct, err)
			}
			if _, err := b.content.ByActorURI(ctx, bob); err == nil {
				t.Errorf("%q: cached", ct)
			}
		}
		for _, ct := range []string{"application/activity+json", `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`, "application/ld+json", "Application/Activity+JSON; charset=utf-8"} {
			b := setupFed(t)
			b.fetcher.types[bob] = ct
			if _, _, err := b.fed.Resolver.ByKeyID(ctx, victimKey); err != nil {
				t.Errorf("%q: %v", ct, err)
			}
		}
	})
	t.Run("an id elsewhere on the same host is fetched again", func(t *testing.T) {
		// GoToSocial serves a minimal actor at its key URL whose id is the
		// actor's: the actor's own answer, with its inbox, is what counts.
		b := setupFed(t)
		const erin, keyURL = "https://remote.example/users/erin", "https://remote.example/users/erin/main-key"
		full := strings.Replace(string(remoteActorDoc(erin, b.keys[0].PublicPEM, "")), erin+"#main-key", keyURL, 1)
		b.fetcher.set(erin, []byte(full))
		b.fetcher.set(keyURL, []byte(`{"id":"`+erin+`","type":"Person","preferredUsername":"erin","publicKey":{"id":"`+keyURL+`","owner":"`+erin+`","publicKeyPem":"x"}}`))
		fa, _, err := b.fed.Resolver.ByKeyID(ctx, keyURL)
		if err != nil || fa.ActorURI != erin || fa.Inbox != erin+"/inbox" {
			t.Fatalf("%+v %v", fa, err)
		}
	})
	t.Run("the id's own answer must be the same object", func(t *testing.T) {
		b := setupFed(t)
		const moved = "https://remote.example/users/moved"
		b.fetcher.set(moved, remoteActorDoc(bob, b.keys[1].PublicPEM, ""))
		b.fetcher.set(bob, remoteActorDoc(carol, b.keys[1].PublicPEM, "")) // bob's URL answers for carol
		b.wantRefused(moved, carol)
	})
	t.Run("the id's own URL redirecting to another host", func(t *testing.T) {
		b := setupFed(t)
		b.fetcher.set(evilDoc, remoteActorDoc(bob, b.keys[1].PublicPEM, ""))
		b.fetcher.redirects[bob] = evilDoc
		b.wantRefused(evilDoc, bob)
	})
}

// TestKeyFetchPause plays a flood of forged key ids on one host: each
// host may fail three key fetches, then one a minute (SPEC §10 "Load"), so
// Herald does not send a GET for every forgery; a forgery or two do not
// keep the host's genuine actors out.
func TestKeyFetchPause(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFed(t)
	key := func(i int) string { return fmt.Sprintf("https://remote.example/users/ghost%d#main-key", i) }
	fetches := func() int {
		b.fetcher.mu.Lock()
		defer b.fetcher.mu.Unlock()
		n := 0
		for _, c := range b.fetcher.calls {
			if strings.Contains(c.URL, "/ghost") {
				n++
			}
		}
		return n
	}
	// Two forgeries: the host's genuine actors still get in.
	for i := range 2 {
		if _, _, err := b.fed.Resolver.ByKeyID(ctx, key(i)); !errors.Is(err, domain.ErrUnauthorized) {
			t.Fatalf("unknown key %d: %v, want ErrUnauthorized (404)", i, err)
		}
	}
	if _, _, err := b.fed.Resolver.ByKeyID(ctx, carol+"#main-key"); err != nil {
		t.Fatalf("carol after two forgeries on her host: %v", err)
	}
	// A success gave the budget back: three more failures spend it.
	for i := 2; i < 5; i++ {
		if _, _, err := b.fed.Resolver.ByKeyID(ctx, key(i)); !errors.Is(err, domain.ErrUnauthorized) {
			t.Fatalf("unknown key %d: %v, want ErrUnauthorized (404)", i, err)
		}
	}
	for i := 5; i < 50; i++ {
		if _, _, err := b.fed.Resolver.ByKeyID(ctx, key(i)); !errors.Is(err, domain.ErrUnavailable) {
			t.Fatalf("key %d once the host's budget is spent: %v, want ErrUnavailable (503, the sender retries)", i, err)
		}
	}
	if n := fetches(); n != 5 {
		t.Fatalf("%d fetches of forged keys, want 5", n)
	}
	// Other hosts are not paused.
	if _, _, err := b.fed.Resolver.ByKeyID(ctx, dave+"#main-key"); err != nil {
		t.Fatal(err)
	}
	// One more failed fetch a minute, no more.
	b.clock.Advance(time.Minute)
	if _, _, err := b.fed.Resolver.ByKeyID(ctx, key(50)); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("a minute later: %v, want a fetch (ErrUnauthorized)", err)
	}
	if _, _, err := b.fed.Resolver.ByKeyID(ctx, key(51)); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("right after: %v, want ErrUnavailable", err)
	}
	if n := fetches(); n != 6 {
		t.Fatalf("%d fetches of forged keys, want 6", n)
	}
}

// TestKeyFetchesPerHostAtOnce: a burst of forged key ids that all
// arrive before the first fetches fail costs their host at most two
// concurrent fetches, and three in all (its budget of failures): the ones
// that waited fetch nothing once it is spent.
func TestKeyFetchesPerHostAtOnce(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	gate := &gatedFetcher{docFetcher: b.fetcher, release: make(chan struct{})}
	fed := application.New(application.Deps{
		Actors: b.accounts, Names: memory.NewNameRegistry(), Followers: b.follows, Foreign: b.content, Posts: b.content, Tombstones: b.content,
		Jobs: b.jobs, Fetcher: gate, Clock: b.clock, IDs: fake.NewIDs("g"), URLs: application.NewURLs("local.example"), InstanceActor: "instance",
	}).Federation
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, _, err := fed.Resolver.ByKeyID(t.Context(), fmt.Sprintf("https://burst.example/u/%d#k", i))
			errs <- err
		}()
	}
	// Let every caller reach the host's slots, then let the fetches fail.
	for deadline := time.Now().Add(10 * time.Second); gate.started() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d fetches started in 10 s, want 2", gate.started())
		}
	}
	time.Sleep(20 * time.Millisecond)
	close(gate.release)
	for range n {
		<-errs
	}
	if got, peak := gate.started(), gate.peak(); got > 3 || peak > 2 {
		t.Fatalf("%d fetches (%d at once) to burst.example, want at most 3 (2 at once)", got, peak)
	}
}

// gatedFetcher holds every fetch until release is closed, counting them.
type gatedFetcher struct {
	*docFetcher
	release      chan struct{}
	mu           sync.Mutex
	n, now, most int
}

func (g *gatedFetcher) Fetch(ctx context.Context, r application.FetchRequest) (application.Fetched, error) {
	if !strings.Contains(r.URL, "burst.example") {
		return g.docFetcher.Fetch(ctx, r)
	}
	g.mu.Lock()
	g.n++
	g.now++
	g.most = max(g.most, g.now)
	g.mu.Unlock()
	<-g.release
	g.mu.Lock()
	g.now--
	g.mu.Unlock()
	return application.Fetched{}, fmt.Errorf("%w: %s", domain.ErrNotFound, r.URL)
}

func (g *gatedFetcher) started() int { g.mu.Lock(); defer g.mu.Unlock(); return g.n }
func (g *gatedFetcher) peak() int    { g.mu.Lock(); defer g.mu.Unlock(); return g.most }

func TestListFollowersPages(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	for i := range 5 {
		f, _ := domain.NewFollower(fmt.Sprintf("https://r%d.example/u", i), alice, "", domain.FollowAccepted, t0)
		if _, err := b.follows.Add(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		p, err := b.fed.Followers.Handle(ctx, application.ListFollowers{UserID: b.userID, Persona: "alice", After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 5 || pages > 3 {
			t.Fatalf("page %+v", p)
		}
		for _, f := range p.Followers {
			got = append(got, f.FollowerURI)
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if len(got) != 5 || got[0] != "https://r0.example/u" || got[4] != "https://r4.example/u" {
		t.Fatalf("followers %v", got)
	}
	for _, q := range []application.ListFollowers{
		{UserID: "someone", Persona: "alice"},
		{UserID: b.userID, Persona: "alice", Limit: 1000},
		{UserID: b.userID, Persona: "alice", State: "blocked"},
		{UserID: b.userID, Persona: "nobody"},
	} {
		if _, err := b.fed.Followers.Handle(ctx, q); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

func TestOutboxShowsPublicPostsOnly(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	var public []string
	for i := range application.OutboxPageSize + 5 {
		vis := domain.VisibilityPublic
		if i%3 == 0 {
			vis = domain.VisibilityFollowers
		}
		res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: fmt.Sprint("post ", i), Visibility: vis})
		if vis == domain.VisibilityPublic {
			public = append(public, res.ObjectURI)
		}
		b.clock.Advance(1)
	}
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "dm", Visibility: domain.VisibilityDirect, To: []string{club}}); err != nil {
		t.Fatal(err)
	}
	a, _ := b.fed.Actors.ByURI(ctx, alice)
	var seen []string
	var before = t0.AddDate(1, 0, 0)
	for range 3 {
		page, err := b.fed.Collections.Outbox(ctx, a, before)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			n := it.Object.(application.Note)
			if it.Type != "Create" || it.Actor != alice || n.To[0] != application.ASPublic {
				t.Fatalf("item %+v", it)
			}
			seen = append(seen, n.ID)
		}
		if page.Next.IsZero() {
			break
		}
		before = page.Next
	}
	if len(seen) != len(public) || seen[0] != public[len(public)-1] {
		t.Fatalf("outbox %d items, want %d newest first", len(seen), len(public))
	}
	if _, err := b.fed.Collections.Note(ctx, public[0]); err != nil {
		t.Fatal(err)
	}
}
