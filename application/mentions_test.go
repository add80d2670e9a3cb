package application_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// A post that mentions a persona is listed among its mentions, from a
// stranger too and followers-only too; a post that does not is not, and
// no one else reads them.
func TestMentionsOfAPersona(t *testing.T) {
	t.Parallel()
	b := setupFollowing(t) // bob's note mentioning only carol concerns alice as his follower
	ctx := t.Context()
	const (
		fromDave = "https://other.example/users/dave/statuses/m1"
		fromBob  = "https://remote.example/users/bob/statuses/m2"
		notAlice = "https://remote.example/users/bob/statuses/m3"
	)
	for _, d := range []struct{ actor, note string }{
		{dave, noteMentioning(fromDave, dave, "<p>@alice hi</p>", []string{application.ASPublic}, alice)},
		{bob, noteMentioning(fromBob, bob, "<p>@alice @carol for followers</p>", []string{bob + "/followers"}, carol, alice)},
		{bob, noteMentioning(notAlice, bob, "<p>@carol only</p>", []string{application.ASPublic}, carol)},
	} {
		if res, err := b.deliver("", d.actor, d.note); err != nil || res.Ignored {
			t.Fatalf("deliver: %+v %v", res, err)
		}
	}
	p, err := b.content.PostByObjectURI(ctx, fromBob)
	if err != nil || !slices.Equal(p.Mentions, []string{alice, carol}) {
		t.Fatalf("stored %+v %v", p, err)
	}
	got, err := b.fed.Mentions.Handle(ctx, application.Mentions{UserID: b.userID, As: "alice", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, p := range got {
		uris = append(uris, p.ObjectURI)
	}
	slices.Sort(uris) // both published at one instant: their order is the URIs'
	if !slices.Equal(uris, []string{fromDave, fromBob}) {
		t.Fatalf("alice's mentions %v", uris)
	}
	other := signUp(t, b.app.SignUp, "mallory")
	if _, err := b.fed.Mentions.Handle(ctx, application.Mentions{UserID: other.User.ID, As: "alice", Limit: 20}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("another account reads alice's mentions: %v", err)
	}
	if _, err := b.fed.Mentions.Handle(ctx, application.Mentions{UserID: b.userID, As: "alice"}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("no limit: %v", err)
	}
}

// A post of ours keeps whom it mentioned, so that its edit and its delete
// reach an actor it mentioned who does not follow the persona.
func TestEditAndDeleteReachTheMentioned(t *testing.T) {
	t.Parallel()
	b := setupFollowed(t)
	ctx := t.Context()
	pub := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "<p>@dave look</p>", To: []string{dave}})
	if p, err := b.content.PostByObjectURI(ctx, pub.ObjectURI); err != nil || !slices.Equal(p.Mentions, []string{dave}) {
		t.Fatalf("stored %+v %v", p, err)
	}
	if _, err := b.fed.OwnPosts.Edit(ctx, application.EditPost{UserID: b.userID, ID: pub.ID, Content: "<p>@dave look again</p>"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.fed.OwnPosts.Delete(ctx, application.DeletePost{UserID: b.userID, ID: pub.ID}); err != nil {
		t.Fatal(err)
	}
	sent := map[string][]string{} // activity type: inboxes
	for _, j := range b.allJobs() {
		m := payload(t, j)
		typ, _ := m["type"].(string)
		sent[typ] = append(sent[typ], j.Inbox)
		obj, _ := m["object"].(map[string]any)
		tags, _ := obj["tag"].([]any)
		if typ == "Update" && !slices.ContainsFunc(tags, func(tag any) bool {
			t, _ := tag.(map[string]any)
			return t["href"] == dave
		}) {
			t.Fatalf("the Update does not mention dave: %v", m["object"])
		}
	}
	for _, typ := range []string{"Create", "Update", "Delete"} {
		slices.Sort(sent[typ])
		if want := []string{dave + "/inbox", shared}; !slices.Equal(sent[typ], want) {
			t.Errorf("%s sent to %v, want %v (dave mentioned, bob a follower)", typ, sent[typ], want)
		}
	}
}
