package application_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func (b *fedBundle) feed(actor string) []application.FeedItem {
	b.t.Helper()
	items, err := b.fed.Collections.PostsAndBoostsBy(b.t.Context(), actor, time.Time{}, 20)
	if err != nil {
		b.t.Fatal(err)
	}
	return items
}

// An Announce of a remote note by an actor alice follows is a boost: the
// note is fetched (signed) and stored, the boost listed among the
// booster's posts, once however often it arrives, and gone after the Undo.
func TestInboxBoostOfARemoteNoteByAFollowedActor(t *testing.T) {
	t.Parallel()
	b := setupFollowing(t)
	b.fetcher.set(daveNote, remoteNoteDoc(daveNote, dave, "<p>worth a boost: "+strings.Repeat("é", 3000)+"</p>", application.ASPublic))
	act := announce("https://remote.example/users/bob/activities/a1", bob, daveNote)
	for i := range 2 {
		res, err := b.deliver("", bob, act)
		if err != nil || res.Ignored || res.Duplicate != (i == 1) {
			t.Fatalf("delivery %d: %+v %v", i, res, err)
		}
	}
	if n := b.fetcher.count(daveNote); n != 1 {
		t.Fatalf("the note was fetched %d times, want once", n)
	}
	if c := b.fetcher.calls[slices.IndexFunc(b.fetcher.calls, func(r application.FetchRequest) bool { return r.URL == daveNote })]; c.KeyID == "" {
		t.Fatal("the note was fetched unsigned (authorized fetch refuses that)")
	}
	p, err := b.content.PostByObjectURI(t.Context(), daveNote)
	if err != nil || p.AuthorURI != dave || p.Local || p.Visibility != domain.VisibilityPublic || !strings.Contains(p.Content, "worth a boost") {
		t.Fatalf("stored note %+v %v", p, err)
	}
	feed := b.feed(bob)
	if len(feed) != 1 || feed[0].Boost == nil || feed[0].Post.ObjectURI != daveNote || feed[0].Boost.ActivityURI != "https://remote.example/users/bob/activities/a1" {
		t.Fatalf("bob's feed %+v", feed)
	}
	undo := `{"id":"https://remote.example/users/bob/activities/u1","type":"Undo","actor":"` + bob + `","object":` + act + `}`
	if res, err := b.deliver("", bob, undo); err != nil || res.Ignored {
		t.Fatalf("undo: %+v %v", res, err)
	}
	if feed := b.feed(bob); len(feed) != 0 {
		t.Fatalf("bob's feed after the undo %+v", feed)
	}
	if res, err := b.deliver("", bob, undo); err != nil || !res.Ignored {
		t.Fatalf("undo twice: %+v %v", res, err)
	}
	// An Undo naming the Announce by id only.
	mustDeliver(t, b, bob, act)
	byID := `{"type":"Undo","actor":"` + bob + `","object":"https://remote.example/users/bob/activities/a1"}`
	if res, err := b.deliver("", bob, byID); err != nil || res.Ignored || len(b.feed(bob)) != 0 {
		t.Fatalf("undo by id: %+v %v %+v", res, err, b.feed(bob))
	}
}

func TestInboxBoostsThatAreNotKept(t *testing.T) {
	t.Parallel()
	const (
		private = "https://other.example/users/dave/statuses/2"
		forged  = "https://other.example/users/dave/statuses/3"
		foreign = "https://other.example/users/dave/statuses/4"
		huge    = "https://other.example/users/dave/statuses/5"
		down    = "https://other.example/users/dave/statuses/6"
	)
	b := setupFollowing(t)
	b.fetcher.set(daveNote, remoteNoteDoc(daveNote, dave, "hi", application.ASPublic))
	b.fetcher.set(private, remoteNoteDoc(private, dave, "for followers", dave+"/followers"))
	b.fetcher.set(forged, remoteNoteDoc("https://remote.example/users/bob/statuses/3", bob, "not from here", application.ASPublic))
	b.fetcher.set(foreign, remoteNoteDoc(foreign, bob, "attributed elsewhere", application.ASPublic))
	b.fetcher.set(huge, remoteNoteDoc(huge, dave, strings.Repeat("a", domain.MaxRemoteTextChars+1), application.ASPublic))
	b.fetcher.errs[down] = fmt.Errorf("%w: HTTP 503", domain.ErrUnavailable)
	tests := []struct {
		name, signer, act string
		wantErr           error // nil: accepted and ignored
	}{
		{"by an actor no one follows", carol, announce("https://remote.example/users/carol/activities/1", carol, daveNote), nil},
		{"of a note that is not public", bob, announce("https://remote.example/users/bob/activities/2", bob, private), nil},
		{"of a note its server answers for another server", bob, announce("https://remote.example/users/bob/activities/3", bob, forged), nil},
		{"of a note attributed to another server's actor", bob, announce("https://remote.example/users/bob/activities/4", bob, foreign), nil},
		{"of a note over the remote limits", bob, announce("https://remote.example/users/bob/activities/5", bob, huge), nil},
		{"of a note that is gone", bob, announce("https://remote.example/users/bob/activities/7", bob, "https://other.example/users/dave/statuses/404"), nil},
		{"with an id on another server", bob, announce("https://other.example/a/1", bob, daveNote), domain.ErrInvalidInput},
		{"when the note's server is down: retried", bob, announce("https://remote.example/users/bob/activities/6", bob, down), domain.ErrUnavailable},
	}
	for _, tc := range tests {
		res, err := b.deliver("", tc.signer, tc.act)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: %+v %v, want %v", tc.name, res, err, tc.wantErr)
			}
		} else if err != nil || !res.Ignored {
			t.Errorf("%s: %+v %v, want ignored", tc.name, res, err)
		}
	}
	if feed := b.feed(bob); len(feed) != 0 {
		t.Fatalf("boosts kept: %+v", feed)
	}
	if feed := b.feed(carol); len(feed) != 0 {
		t.Fatalf("boosts kept: %+v", feed)
	}
	for _, uri := range []string{private, forged, foreign, huge, "https://remote.example/users/bob/statuses/3"} {
		if _, err := b.content.PostByObjectURI(t.Context(), uri); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%s stored: %v", uri, err)
		}
	}
	if b.fetcher.count(daveNote) != 0 {
		t.Fatal("the note was fetched for an Announce that was not kept")
	}
}

// A persona boosts a remote note: the Announce goes to its followers and
// to the note's author; a second boost sends nothing; the Undo goes the
// same way.
func TestPersonaBoostsAndTakesItBack(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.accepted(carol, alice)
	b.signer(carol)
	b.fetcher.set(daveNote, remoteNoteDoc(daveNote, dave, "hi", application.ASPublic))
	res, err := b.fed.Boost.Handle(ctx, application.Boost{UserID: b.userID, As: "alice", Object: daveNote})
	if err != nil || !res.Created || res.Queued != 2 {
		t.Fatalf("boost: %+v %v", res, err)
	}
	inboxes := func(typ string) []string {
		var out []string
		for _, j := range b.allJobs() {
			if m := payload(t, j); m["type"] == typ {
				out = append(out, j.Inbox)
				if typ == "Announce" && (m["object"] != daveNote || m["actor"] != alice || m["id"] != res.ActivityID) {
					t.Fatalf("announce %v", m)
				}
				if typ == "Undo" && m["object"].(map[string]any)["id"] != res.ActivityID {
					t.Fatalf("undo %v", m)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{dave + "/inbox", shared}
	if got := inboxes("Announce"); !slices.Equal(got, want) {
		t.Fatalf("announce to %v, want %v", got, want)
	}
	if feed := b.feed(alice); len(feed) != 1 || feed[0].Boost == nil || feed[0].Post.ObjectURI != daveNote {
		t.Fatalf("alice's feed %+v", feed)
	}
	again, err := b.fed.Boost.Handle(ctx, application.Boost{UserID: b.userID, As: "alice", Object: daveNote})
	if err != nil || again.Created || len(inboxes("Announce")) != 2 {
		t.Fatalf("second boost: %+v %v", again, err)
	}
	undone, err := b.fed.Boost.Undo(ctx, application.Boost{UserID: b.userID, As: "alice", Object: daveNote})
	if err != nil || !undone.Created {
		t.Fatalf("undo: %+v %v", undone, err)
	}
	if got := inboxes("Undo"); !slices.Equal(got, want) {
		t.Fatalf("undo to %v, want %v", got, want)
	}
	if feed := b.feed(alice); len(feed) != 0 {
		t.Fatalf("alice's feed after the undo %+v", feed)
	}
	other := signUp(t, b.app.SignUp, "mallory")
	if _, err := b.fed.Boost.Handle(ctx, application.Boost{UserID: other.User.ID, As: "alice", Object: daveNote}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("boost as another account's persona: %v", err)
	}
	if _, err := b.fed.Boost.Handle(ctx, application.Boost{UserID: b.userID, As: "alice", Object: "https://other.example/gone"}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("boost of a note that cannot be fetched: %v", err)
	}
}

// Only the author's account edits or deletes a post; the edit and the
// delete go where the post went.
func TestEditAndDeleteOwnPosts(t *testing.T) {
	t.Parallel()
	b := setupFollowed(t)
	ctx := t.Context()
	pub := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "first"})
	other := signUp(t, b.app.SignUp, "mallory")
	refusals := []struct {
		name string
		cmd  application.EditPost
		want error
	}{
		{"another account", application.EditPost{UserID: other.User.ID, ID: pub.ID, Content: "mine now"}, domain.ErrNotFound},
		{"an unknown id", application.EditPost{UserID: b.userID, ID: "nope", Content: "x"}, domain.ErrNotFound},
		{"an id that is a path", application.EditPost{UserID: b.userID, ID: "../x", Content: "x"}, domain.ErrNotFound},
		{"too long", application.EditPost{UserID: b.userID, ID: pub.ID, Content: strings.Repeat("é", domain.MaxPostLength/2+1)}, domain.ErrInvalidInput},
		{"empty", application.EditPost{UserID: b.userID, ID: pub.ID, Content: " "}, domain.ErrInvalidInput},
	}
	for _, tc := range refusals {
		if _, err := b.fed.OwnPosts.Edit(ctx, tc.cmd); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// The fake clock has not moved since publishing: the edit is still
	// later than the publication, and a second edit later than the first.
	for i, text := range []string{"second", "third"} {
		res, err := b.fed.OwnPosts.Edit(ctx, application.EditPost{UserID: b.userID, ID: pub.ID, Content: text})
		if err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		p, _ := b.content.PostByObjectURI(ctx, pub.ObjectURI)
		if p.Content != "<p>"+text+"</p>" || res.Content != p.Content || !p.Updated.Equal(res.Updated) || !p.Updated.After(p.Published) {
			t.Fatalf("after edit %d: %+v", i, p)
		}
	}
	var updates []map[string]any
	for _, j := range b.allJobs() {
		if m := payload(t, j); m["type"] == "Update" {
			if j.Inbox != shared {
				t.Fatalf("update to %s", j.Inbox)
			}
			updates = append(updates, m["object"].(map[string]any))
		}
	}
	if len(updates) != 2 || updates[1]["content"] != "<p>third</p>" || updates[1]["id"] != pub.ObjectURI || updates[1]["updated"] == nil {
		t.Fatalf("updates %v", updates)
	}
	if _, err := b.fed.OwnPosts.Delete(ctx, application.DeletePost{UserID: other.User.ID, ID: pub.ID}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("delete by another account: %v", err)
	}
	if _, err := b.fed.OwnPosts.Delete(ctx, application.DeletePost{UserID: b.userID, ID: pub.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.content.PostByObjectURI(ctx, pub.ObjectURI); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("deleted post still there: %v", err)
	}
	var deleted bool
	for _, j := range b.allJobs() {
		if m := payload(t, j); m["type"] == "Delete" {
			deleted = j.Inbox == shared && m["object"].(map[string]any)["id"] == pub.ObjectURI && m["object"].(map[string]any)["type"] == "Tombstone"
		}
	}
	if !deleted {
		t.Fatal("no Delete{Tombstone} to bob's inbox")
	}
	if _, err := b.fed.OwnPosts.Delete(ctx, application.DeletePost{UserID: b.userID, ID: pub.ID}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	// A direct post is edited for its participants.
	dm := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "psst", Visibility: domain.VisibilityDirect, To: []string{dave}})
	if _, err := b.fed.OwnPosts.Edit(ctx, application.EditPost{UserID: b.userID, ID: dm.ID, Content: "psst!"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.content.DmByObjectURI(ctx, dm.ObjectURI); got.Content != "<p>psst!</p>" {
		t.Fatalf("dm after edit %+v", got)
	}
}
