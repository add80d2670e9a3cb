package application_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// setupMutual is setupFed with alice following bob (accepted) and bob
// following alice; it returns the id of alice's Follow and how many jobs
// were queued.
func setupMutual(t *testing.T) (b *fedBundle, aliceFollow string, jobs int) {
	t.Helper()
	b = setupFed(t)
	ctx := t.Context()
	res, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: bob})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.deliver(alice, bob, `{"type":"Accept","actor":"`+bob+`","object":"`+res.ActivityID+`"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.deliver(alice, bob, follow("https://remote.example/f/bob", bob, alice)); err != nil {
		t.Fatal(err)
	}
	b.wantFollows(alice, bob, true)
	b.wantFollows(bob, alice, true)
	return b, res.ActivityID, len(b.allJobs())
}

// sent returns the payloads of the jobs queued after the first n, by type.
func sent(t *testing.T, b *fedBundle, n int) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, j := range b.allJobs()[n:] {
		p := payload(t, j)
		typ := fmt.Sprint(p["type"])
		if o, ok := p["object"].(map[string]any); ok && typ == "Undo" {
			typ += "/" + fmt.Sprint(o["type"])
		}
		if _, dup := out[typ]; dup {
			t.Fatalf("two %s sent", typ)
		}
		p["inbox"] = j.Inbox
		out[typ] = p
	}
	return out
}

func TestBlockEndsTheFollowsAndSendsBlock(t *testing.T) {
	t.Parallel()
	b, aliceFollow, n := setupMutual(t)
	ctx := t.Context()
	res, err := b.fed.Block.Handle(ctx, application.BlockActor{UserID: b.userID, As: "alice", Target: bob})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || !res.Unfollowed || !res.FollowerRemoved || res.Target != bob {
		t.Fatalf("blocked %+v", res)
	}
	b.wantFollows(alice, bob, false)
	b.wantFollows(bob, alice, false)
	got := sent(t, b, n)
	undo, reject, block := got["Undo/Follow"], got["Reject"], got["Block"]
	if undo == nil || reject == nil || block == nil || len(got) != 3 {
		t.Fatalf("sent %v, want an Undo{Follow}, a Reject and a Block", got)
	}
	for typ, p := range got {
		// Each to bob's own inbox, signed by alice.
		if p["inbox"] != bob+"/inbox" || p["actor"] != alice {
			t.Fatalf("%s %v", typ, p)
		}
	}
	if o := undo["object"].(map[string]any); o["id"] != aliceFollow || o["actor"] != alice || o["object"] != bob {
		t.Fatalf("undo %v, want the Follow %s", undo, aliceFollow)
	}
	if o := reject["object"].(map[string]any); o["id"] != "https://remote.example/f/bob" {
		t.Fatalf("reject %v", reject)
	}
	if block["object"] != bob || block["id"] != res.ActivityID {
		t.Fatalf("block %v", block)
	}
	// Blocking again sends nothing.
	again, err := b.fed.Block.Handle(ctx, application.BlockActor{UserID: b.userID, As: "alice", Target: "bob@remote.example"})
	if err == nil {
		t.Fatalf("bob@remote.example without WebFinger: %+v", again)
	}
	again, err = b.fed.Block.Handle(ctx, application.BlockActor{UserID: b.userID, As: "alice", Target: bob})
	if err != nil || again.Created || again.ActivityID != res.ActivityID || len(b.allJobs()) != n+3 {
		t.Fatalf("again %+v %v, %d jobs", again, err, len(b.allJobs()))
	}
	page, err := b.fed.Blocks.Handle(ctx, application.ListBlocks{UserID: b.userID, As: "alice"})
	if err != nil || len(page.Blocks) != 1 || page.Blocks[0].TargetURI != bob {
		t.Fatalf("blocks %+v %v", page, err)
	}
}

func TestABlockedActorIsRefusedAndGetsNothing(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	post := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "mine"})
	blocked, err := b.fed.Block.Handle(ctx, application.BlockActor{UserID: b.userID, As: "alice", Target: bob})
	if err != nil {
		t.Fatal(err)
	}
	n := len(b.allJobs())
	// A Follow is answered with a Reject, and nothing is stored.
	if r, err := b.deliver(alice, bob, follow("https://remote.example/f/2", bob, alice)); err != nil || !r.Ignored {
		t.Fatalf("follow: %+v %v", r, err)
	}
	b.wantFollows(bob, alice, false)
	if got := sent(t, b, n); len(got) != 1 || got["Reject"] == nil || got["Reject"]["inbox"] != bob+"/inbox" {
		t.Fatalf("sent %v, want one Reject", got)
	}
	n = len(b.allJobs())
	// Notes mentioning or replying to alice, Likes and Announces of her
	// post are accepted and dropped.
	for name, act := range map[string]string{
		"mention":  note("https://remote.example/n/1", bob, "hi", alice),
		"reply":    `{"id":"https://remote.example/c/2","type":"Create","actor":"` + bob + `","object":{"id":"https://remote.example/n/2","type":"Note","attributedTo":"` + bob + `","content":"re","to":["https://www.w3.org/ns/activitystreams#Public"],"inReplyTo":"` + post.ObjectURI + `"}}`,
		"like":     `{"id":"https://remote.example/l/1","type":"Like","actor":"` + bob + `","object":"` + post.ObjectURI + `"}`,
		"announce": `{"id":"https://remote.example/a/1","type":"Announce","actor":"` + bob + `","object":"` + post.ObjectURI + `"}`,
	} {
		if r, err := b.deliver(alice, bob, act); err != nil || !r.Ignored {
			t.Fatalf("%s: %+v %v", name, r, err)
		}
	}
	for _, uri := range []string{"https://remote.example/n/1", "https://remote.example/n/2"} {
		if _, err := b.content.PostByObjectURI(ctx, uri); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("%s stored: %v", uri, err)
		}
		if _, err := b.content.DmByObjectURI(ctx, uri); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("%s stored as a direct note: %v", uri, err)
		}
	}
	if c, _ := b.fed.Collections.Reactions(ctx, post.ObjectURI); c[domain.ReactionLike]+c[domain.ReactionAnnounce] != 0 {
		t.Fatalf("reactions counted: %v", c)
	}
	// A post addressed to bob does not go to him; carol, on his server,
	// still gets hers.
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "psst", Visibility: domain.VisibilityDirect, To: []string{bob}}); err != nil {
		t.Fatal(err)
	}
	if got := len(b.allJobs()); got != n {
		t.Fatalf("%d jobs queued for a direct note to the blocked actor", got-n)
	}
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "hi", Visibility: domain.VisibilityDirect, To: []string{carol}}); err != nil {
		t.Fatal(err)
	}
	if got := len(b.allJobs()); got != n+1 {
		t.Fatalf("%d jobs for a direct note to carol, want 1", got-n)
	}
	n++
	// Unblocked: an Undo{Block} of the Block sent, and bob can follow.
	un, err := b.fed.Unblock.Handle(ctx, application.UnblockActor{UserID: b.userID, As: "alice", Target: bob})
	if err != nil {
		t.Fatal(err)
	}
	got := sent(t, b, n)
	undo := got["Undo/Block"]
	if undo == nil || undo["id"] != un.ActivityID || undo["inbox"] != bob+"/inbox" || undo["object"].(map[string]any)["id"] != blocked.ActivityID {
		t.Fatalf("sent %v, want an Undo of %s", got, blocked.ActivityID)
	}
	if _, err := b.fed.Unblock.Handle(ctx, application.UnblockActor{UserID: b.userID, As: "alice", Target: bob}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unblock twice: %v", err)
	}
	if r, err := b.deliver(alice, bob, follow("https://remote.example/f/3", bob, alice)); err != nil || r.Ignored {
		t.Fatalf("follow after the unblock: %+v %v", r, err)
	}
	if f, ok := b.follower(bob, alice); !ok || f.State != domain.FollowAccepted {
		t.Fatalf("follow after the unblock: %+v", f)
	}
}

func TestInboxBlockOfOurPersona(t *testing.T) {
	t.Parallel()
	b, _, _ := setupMutual(t)
	ctx := t.Context()
	blockAct := `{"id":"https://remote.example/b/1","type":"Block","actor":"` + bob + `","object":"` + alice + `"}`
	if r, err := b.deliver(alice, bob, blockAct); err != nil || r.Ignored || r.Duplicate {
		t.Fatalf("block: %+v %v", r, err)
	}
	if r, err := b.deliver(alice, bob, blockAct); err != nil || !r.Duplicate {
		t.Fatalf("block again: %+v %v", r, err)
	}
	b.wantFollows(alice, bob, false)
	b.wantFollows(bob, alice, false)
	// Nothing of alice reaches bob's inbox any more.
	n := len(b.allJobs())
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "psst", Visibility: domain.VisibilityDirect, To: []string{bob}}); err != nil {
		t.Fatal(err)
	}
	if got := len(b.allJobs()); got != n {
		t.Fatalf("%d jobs to the actor that blocks alice", got-n)
	}
	// Only bob lifts his block, with an Undo naming it.
	undo := func(actor, inner string) (application.InboxResult, error) {
		return b.deliver(alice, actor, `{"type":"Undo","actor":"`+actor+`","object":{"id":"https://remote.example/b/1","type":"Block","actor":"`+inner+`","object":"`+alice+`"}}`)
	}
	if _, err := undo(carol, bob); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("carol's undo of bob's block: %v", err)
	}
	if r, err := undo(bob, bob); err != nil || r.Ignored {
		t.Fatalf("undo: %+v %v", r, err)
	}
	if r, err := undo(bob, bob); err != nil || !r.Ignored {
		t.Fatalf("undo twice: %+v %v", r, err)
	}
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "again", Visibility: domain.VisibilityDirect, To: []string{bob}}); err != nil {
		t.Fatal(err)
	}
	if got := len(b.allJobs()); got != n+1 {
		t.Fatalf("%d jobs after the block was lifted, want 1", got-n)
	}
	// A Block of an actor that is not ours is dropped.
	if r, err := b.deliver("", bob, `{"id":"https://remote.example/b/2","type":"Block","actor":"`+bob+`","object":"`+carol+`"}`); err != nil || !r.Ignored {
		t.Fatalf("block of carol: %+v %v", r, err)
	}
}

func TestUnfollowSendsUndoOfTheFollow(t *testing.T) {
	t.Parallel()
	b, aliceFollow, n := setupMutual(t)
	ctx := t.Context()
	res, err := b.fed.Unfollow.Handle(ctx, application.Unfollow{UserID: b.userID, As: "alice", Target: bob})
	if err != nil || res.State != domain.FollowAccepted || res.Queued != 1 {
		t.Fatalf("unfollowed %+v %v", res, err)
	}
	b.wantFollows(alice, bob, false)
	b.wantFollows(bob, alice, true)
	got := sent(t, b, n)
	undo := got["Undo/Follow"]
	if len(got) != 1 || undo == nil || undo["inbox"] != bob+"/inbox" || undo["id"] != res.ActivityID {
		t.Fatalf("sent %v", got)
	}
	if o := undo["object"].(map[string]any); o["id"] != aliceFollow || o["type"] != "Follow" || o["actor"] != alice || o["object"] != bob {
		t.Fatalf("undo of %v, want the Follow %s", o, aliceFollow)
	}
	if _, err := b.fed.Unfollow.Handle(ctx, application.Unfollow{UserID: b.userID, As: "alice", Target: bob}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unfollow twice: %v", err)
	}
	// A pending follow is withdrawn the same way.
	pending, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: carol})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := b.fed.Unfollow.Handle(ctx, application.Unfollow{UserID: b.userID, As: "alice", Target: carol}); err != nil || res.State != domain.FollowPending {
		t.Fatalf("withdraw %+v %v", res, err)
	}
	last := b.allJobs()[len(b.allJobs())-1]
	if o, _ := payload(t, last)["object"].(map[string]any); o["id"] != pending.ActivityID {
		t.Fatalf("undo %s, want of %s", last.Payload, pending.ActivityID)
	}
}

func TestRemoveFollowerSendsReject(t *testing.T) {
	t.Parallel()
	b, _, n := setupMutual(t)
	ctx := t.Context()
	if _, err := b.fed.RemoveFollower.Handle(ctx, application.RemoveFollower{UserID: b.userID, As: "alice", Target: bob}); err != nil {
		t.Fatal(err)
	}
	b.wantFollows(bob, alice, false)
	b.wantFollows(alice, bob, true)
	got := sent(t, b, n)
	reject := got["Reject"]
	if len(got) != 1 || reject == nil || reject["inbox"] != bob+"/inbox" || reject["object"].(map[string]any)["id"] != "https://remote.example/f/bob" {
		t.Fatalf("sent %v", got)
	}
	if _, err := b.fed.RemoveFollower.Handle(ctx, application.RemoveFollower{UserID: b.userID, As: "alice", Target: bob}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("remove twice: %v", err)
	}
}

func TestMuteHidesMentionsAndSendsNothing(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	for i, author := range []string{bob, carol} {
		id := fmt.Sprintf("https://remote.example/n/%d", i)
		act := fmt.Sprintf(`{"id":"%s/activity","type":"Create","actor":%q,"object":{"id":%q,"type":"Note","attributedTo":%q,"content":"hi alice",`+
			`"to":["https://www.w3.org/ns/activitystreams#Public"],"tag":[{"type":"Mention","href":%q}],"published":"2026-06-01T10:0%d:00Z"}}`, id, author, id, author, alice, i)
		if r, err := b.deliver(alice, author, act); err != nil || r.Ignored {
			t.Fatalf("%s: %+v %v", id, r, err)
		}
	}
	authors := func() []string {
		t.Helper()
		ps, err := b.fed.Mentions.Handle(ctx, application.Mentions{UserID: b.userID, As: "alice", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.AuthorURI)
		}
		return out
	}
	n := len(b.allJobs())
	// carol's is the newest: muted, bob's fills the page of one.
	if m, err := b.fed.Mute.Handle(ctx, application.MuteActor{UserID: b.userID, As: "alice", Target: carol}); err != nil || !m.Changed {
		t.Fatalf("mute %+v %v", m, err)
	}
	if got := authors(); fmt.Sprint(got) != fmt.Sprint([]string{bob}) {
		t.Fatalf("mentions while carol is muted: %v", got)
	}
	if m, err := b.fed.Mute.Handle(ctx, application.MuteActor{UserID: b.userID, As: "alice", Target: carol, Unmute: true}); err != nil || !m.Changed {
		t.Fatalf("unmute %+v %v", m, err)
	}
	if got := authors(); len(got) != 1 || got[0] == bob {
		t.Fatalf("mentions after the unmute: %v", got)
	}
	if len(b.allJobs()) != n {
		t.Fatal("a mute sent something")
	}
}
