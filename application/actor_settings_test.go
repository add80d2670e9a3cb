package application_test

import (
	"errors"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// jobsOf returns the jobs whose activity is of that type, by inbox.
func jobsOf(t *testing.T, b *fedBundle, typ string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, j := range b.allJobs() {
		if p := payload(t, j); p["type"] == typ {
			out[j.Inbox] = p
		}
	}
	return out
}

func (b *fedBundle) lock(name string, kind domain.NameKind, locked bool) application.LockSet {
	b.t.Helper()
	res, err := b.fed.SetLocked.Handle(b.t.Context(), application.SetLocked{UserID: b.userID, Kind: kind, Name: name, Locked: locked})
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// TestLockedPersonaFollowsWaitForApproval: a locked persona's follows stay
// pending, with nothing sent, until its owner accepts (Accept sent) or
// rejects (Reject sent, the follow gone); its actor document says
// manuallyApprovesFollowers.
func TestLockedPersonaFollowsWaitForApproval(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	if res := b.lock("alice", domain.NameKindPersona, true); !res.Changed || !res.Actor.Locked || res.Queued != 0 {
		t.Fatalf("lock without followers: %+v", res)
	}
	a, err := b.fed.Actors.ByURI(ctx, alice)
	if err != nil || !a.Locked || !b.app.URLs.Document(a).ManuallyApprovesFollowers {
		t.Fatalf("alice after locking: %+v %v", a, err)
	}
	for _, f := range []string{bob, carol} {
		res, err := b.deliver("", f, follow(f+"/follow/1", f, alice))
		if err != nil || res.Reason == "" {
			t.Fatalf("follow of a locked persona by %s: %+v %v", f, res, err)
		}
		if got, ok := b.follower(f, alice); !ok || got.State != domain.FollowPending {
			t.Fatalf("follow by %s: %+v %v, want pending", f, got, ok)
		}
	}
	if n := len(b.allJobs()); n != 0 {
		t.Fatalf("%d jobs queued for requests nobody answered", n)
	}
	page, err := b.fed.Followers.Handle(ctx, application.ListFollowers{UserID: b.userID, Persona: "alice", State: domain.FollowPending})
	if err != nil || page.Total != 2 {
		t.Fatalf("pending requests: %+v %v", page, err)
	}
	if res, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: b.userID, As: "alice", Follower: bob, Accept: true}); err != nil || !res.Changed {
		t.Fatalf("accept: %+v %v", res, err)
	}
	if res, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: b.userID, As: "alice", Follower: carol}); err != nil || !res.Changed {
		t.Fatalf("reject: %+v %v", res, err)
	}
	if got, ok := b.follower(bob, alice); !ok || got.State != domain.FollowAccepted {
		t.Fatalf("bob: %+v %v, want accepted", got, ok)
	}
	if _, ok := b.follower(carol, alice); ok {
		t.Fatal("carol's rejected follow is still there")
	}
	if acc, rej := jobsOf(t, b, "Accept"), jobsOf(t, b, "Reject"); len(acc) != 1 || acc[bob+"/inbox"] == nil || len(rej) != 1 || rej[carol+"/inbox"] == nil {
		t.Fatalf("answers: accepts %v, rejects %v", acc, rej)
	}
	// A locked persona's follow accepted stays accepted when the follower
	// sends its Follow again.
	if res, err := b.deliver("", bob, follow(bob+"/follow/1", bob, alice)); err != nil || !res.Duplicate {
		t.Fatalf("repeated Follow of an accepted follower: %+v %v", res, err)
	}
}

// TestGroupsAreLockedByDefault: a group created without a choice approves
// its members by hand; its owner lists and answers the requests by the
// group's name; one created with Locked false accepts at once.
func TestGroupsAreLockedByDefault(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	g, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: b.userID, Name: "closed"})
	if err != nil || !g.Locked {
		t.Fatalf("group without a choice: %+v %v", g, err)
	}
	open, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: b.userID, Name: "open", Locked: new(bool)})
	if err != nil || open.Locked {
		t.Fatalf("open group: %+v %v", open, err)
	}
	closed, openURI := local+"/groups/closed", local+"/groups/open"
	for _, target := range []string{closed, openURI} {
		mustDeliver(t, b, bob, follow(bob+"/follow/"+target[len(local):], bob, target))
	}
	if f, _ := b.follower(bob, closed); f.State != domain.FollowPending {
		t.Fatalf("follow of the locked group: %+v", f)
	}
	if f, _ := b.follower(bob, openURI); f.State != domain.FollowAccepted {
		t.Fatalf("follow of the open group: %+v", f)
	}
	page, err := b.fed.Followers.Handle(ctx, application.ListFollowers{UserID: b.userID, Persona: "closed", State: domain.FollowPending})
	if err != nil || page.Total != 1 || page.Followers[0].FollowerURI != bob {
		t.Fatalf("the group's requests: %+v %v", page, err)
	}
	res, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: b.userID, As: "closed", Follower: bob, Accept: true})
	if err != nil || res.State != domain.FollowAccepted {
		t.Fatalf("accept into the group: %+v %v", res, err)
	}
	acc := jobsOf(t, b, "Accept")
	if p := acc[bob+"/inbox"]; len(acc) != 1 || p["actor"] == nil || p["actor"] != closed && p["actor"] != openURI {
		t.Fatalf("accepts: %v", acc)
	}
	// Another account cannot answer for the group.
	if _, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: "someone-else", As: "closed", Follower: bob}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("someone else answering for the group: %v", err)
	}
}

// TestSetLockedTellsFollowersAndUnlockAcceptsRequests: a change of the
// lock sends Update{Person} with the new manuallyApprovesFollowers to the
// followers; unlocking accepts the requests waiting, except a silenced
// domain's; setting the same state again sends nothing.
func TestSetLockedTellsFollowersAndUnlockAcceptsRequests(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	mustDeliver(t, b, bob, follow(bob+"/follow/1", bob, alice))
	res := b.lock("alice", domain.NameKindPersona, true)
	if !res.Changed || res.Queued != 1 {
		t.Fatalf("lock: %+v", res)
	}
	up := jobsOf(t, b, "Update")
	p := up[shared] // bob's server's shared inbox
	obj, _ := p["object"].(map[string]any)
	if len(up) != 1 || p["actor"] != alice || obj["id"] != alice || obj["type"] != "Person" || obj["manuallyApprovesFollowers"] != true {
		t.Fatalf("Update{Person} of the lock: %v", up)
	}
	if again := b.lock("alice", domain.NameKindPersona, true); again.Changed || again.Queued != 0 {
		t.Fatalf("locking a locked persona: %+v", again)
	}
	b.block("other.example", domain.SeveritySilence)
	for _, f := range []string{carol, dave} {
		mustDeliver(t, b, f, follow(f+"/follow/1", f, alice))
	}
	before := len(b.allJobs())
	res = b.lock("alice", domain.NameKindPersona, false)
	if !res.Changed || res.Actor.Locked || res.Accepted != 1 {
		t.Fatalf("unlock: %+v", res)
	}
	if f, _ := b.follower(carol, alice); f.State != domain.FollowAccepted {
		t.Fatalf("carol's request after the unlock: %+v", f)
	}
	if f, _ := b.follower(dave, alice); f.State != domain.FollowPending {
		t.Fatalf("a silenced domain's request after the unlock: %+v, want pending", f)
	}
	if acc := jobsOf(t, b, "Accept"); len(acc) != 2 || acc[carol+"/inbox"] == nil {
		t.Fatalf("accepts after the unlock: %v", acc)
	}
	var unlocked bool
	for _, j := range b.allJobs()[before:] {
		if p := payload(t, j); p["type"] == "Update" {
			obj, _ := p["object"].(map[string]any)
			unlocked = obj["manuallyApprovesFollowers"] == false
		}
	}
	if !unlocked {
		t.Fatal("no Update{Person} with manuallyApprovesFollowers false after the unlock")
	}
	if _, err := b.fed.SetLocked.Handle(ctx, application.SetLocked{UserID: "someone-else", Kind: domain.NameKindPersona, Name: "alice", Locked: true}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("someone else's persona: %v", err)
	}
	if _, err := b.fed.SetLocked.Handle(ctx, application.SetLocked{UserID: b.userID, Kind: domain.NameKindPersona, Name: "nobody", Locked: true}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown persona: %v", err)
	}
	if _, err := b.fed.SetLocked.Handle(ctx, application.SetLocked{UserID: b.userID, Kind: domain.NameKindGroup, Name: "alice", Locked: true}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a persona named as a group: %v", err)
	}
	g := b.lock("club", domain.NameKindGroup, true)
	if !g.Changed || g.Actor.Kind != domain.NameKindGroup {
		t.Fatalf("lock the group: %+v", g)
	}
	if c, _ := b.fed.Actors.ByURI(ctx, club); !c.Locked {
		t.Fatal("the group is not locked")
	}
}

// TestRotateKey: the actor's key pair is replaced in the store, the engine
// is told (it drops its cached key), and an Update{Person} carrying the
// new public key under the same key id goes to the followers; the
// operator's rotation covers every persona and group, and the instance
// actor when named.
func TestRotateKey(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	mustDeliver(t, b, bob, follow(bob+"/follow/1", bob, alice))
	old, _ := b.accounts.AvatarByName(ctx, "alice")
	res, err := b.fed.RotateKey.Handle(ctx, application.RotateKey{UserID: b.userID, Kind: domain.NameKindPersona, Name: "alice"})
	if err != nil || res.KeyID != alice+"#main-key" || res.Queued != 1 {
		t.Fatalf("rotate: %+v %v", res, err)
	}
	now, _ := b.accounts.AvatarByName(ctx, "alice")
	if now.Keys == old.Keys || !now.Keys.Valid() {
		t.Fatalf("alice's keys not replaced: %+v", now.Keys)
	}
	if got := b.rotated.list(); len(got) != 1 || got[0] != now.ID {
		t.Fatalf("engine told of %v, want alice's id", got)
	}
	if now.PreviousKeys != old.Keys || !now.KeysRotatedAt.Equal(b.clock.Now()) {
		t.Fatal("the key before the rotation is not kept as the previous one")
	}
	for _, j := range b.allJobs() {
		if payload(t, j)["type"] == "Update" && j.SenderID != domain.PreviousKeySigner(now.ID) {
			t.Fatalf("the Update of the rotation is signed by %q, want the previous key %q", j.SenderID, domain.PreviousKeySigner(now.ID))
		}
	}
	up := jobsOf(t, b, "Update")[shared]
	obj, _ := up["object"].(map[string]any)
	key, _ := obj["publicKey"].(map[string]any)
	if key["id"] != alice+"#main-key" || key["publicKeyPem"] != now.Keys.PublicPEM || key["owner"] != alice {
		t.Fatalf("Update{Person} of the rotation: %v", up)
	}
	if a, _ := b.fed.Actors.ByURI(ctx, alice); b.app.URLs.Document(a).PublicKey.PublicKeyPem != now.Keys.PublicPEM {
		t.Fatal("the actor document does not publish the new key")
	}
	if _, err := b.fed.RotateKey.Handle(ctx, application.RotateKey{UserID: "someone-else", Kind: domain.NameKindPersona, Name: "alice"}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("someone else's persona: %v", err)
	}

	before := map[string]domain.KeyPair{}
	for _, n := range []string{"alice", "instance"} {
		a, _ := b.accounts.AvatarByName(ctx, n)
		before[n] = a.Keys
	}
	g, _ := b.accounts.GroupByName(ctx, "club")
	before["club"] = g.Keys
	all, err := b.fed.RotateKey.Named(ctx, nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("rotate all: %+v %v", all, err)
	}
	if a, _ := b.accounts.AvatarByName(ctx, "alice"); a.Keys == before["alice"] {
		t.Fatal("alice's key not rotated")
	}
	if g, _ := b.accounts.GroupByName(ctx, "club"); g.Keys == before["club"] {
		t.Fatal("the group's key not rotated")
	}
	// The instance actor only when named: no Update can announce its key.
	if a, _ := b.accounts.AvatarByName(ctx, "instance"); a.Keys != before["instance"] {
		t.Fatal("rotating every persona and group rotated the instance actor's key")
	}
	if one, err := b.fed.RotateKey.Named(ctx, []string{"instance"}); err != nil || len(one) != 1 || one[0].Queued != 0 {
		t.Fatalf("rotate the instance actor: %+v %v", one, err)
	}
	if a, _ := b.accounts.AvatarByName(ctx, "instance"); a.Keys == before["instance"] {
		t.Fatal("the instance actor's key not rotated when named")
	}
	if _, err := b.fed.RotateKey.Named(ctx, []string{"nobody"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("an unknown name: %v", err)
	}
}

// TestLockedPersonaLocalFollowersWait: a persona of this instance asks a
// locked one too; the owner's answer changes the state and sends nothing.
func TestLockedPersonaLocalFollowersWait(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.lock("alice", domain.NameKindPersona, true)
	var uris []string
	for _, name := range []string{"mallory", "dave"} {
		s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: name, Password: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: s.User.ID, As: name, Target: alice})
		if err != nil || res.State != domain.FollowPending {
			t.Fatalf("%s follows locked alice: %+v %v, want pending", name, res, err)
		}
		uris = append(uris, b.app.URLs.Persona(name))
	}
	if _, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: b.userID, As: "alice", Follower: uris[0], Accept: true}); err != nil {
		t.Fatalf("accept mallory: %v", err)
	}
	if _, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: b.userID, As: "alice", Follower: uris[1]}); err != nil {
		t.Fatalf("reject dave: %v", err)
	}
	if got, ok := b.follower(uris[0], alice); !ok || got.State != domain.FollowAccepted {
		t.Fatalf("mallory: %+v %v, want accepted", got, ok)
	}
	if _, ok := b.follower(uris[1], alice); ok {
		t.Fatal("dave's rejected request is still there")
	}
	if n := len(b.allJobs()); n != 0 {
		t.Fatalf("%d jobs queued between two actors of this instance", n)
	}
}
