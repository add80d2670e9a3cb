package application_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// convsOf lists persona's conversations as "last status id, unread".
func (b *fedBundle) convsOf(persona string) []string {
	b.t.Helper()
	cs, err := b.notes.Conversations(b.t.Context(), persona, domain.ConversationPage{Limit: 100})
	return listed(b.t, cs, err, func(c domain.Conversation) string {
		return fmt.Sprintf("%s unread=%v", c.LastStatusID, c.Unread)
	})
}

// A direct post, published or received, is its local participants'
// conversation: read for its author, unread for the others; a persona
// not in it has none, and a redelivery changes nothing.
func TestConversationsKeptAsDirectPostsAreStored(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	work, home := b.persona("alice_work"), b.persona("alice_home")
	res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "psst", Visibility: domain.VisibilityDirect, To: []string{work}})
	wantNotes(t, b.convsOf(alice), res.ID+" unread=false")
	wantNotes(t, b.convsOf(work), res.ID+" unread=true")
	wantNotes(t, b.convsOf(home))

	const noteURI = "https://remote.example/users/bob/statuses/dm"
	dm := fmt.Sprintf(`{"id":"%s/activity","type":"Create","actor":%q,"to":[%q],"object":{"id":%q,"type":"Note","attributedTo":%q,
"content":"<p>hush</p>","to":[%q],"published":"2026-06-01T10:00:00Z"}}`, noteURI, bob, alice, noteURI, bob, alice)
	if _, err := b.deliver(alice, bob, dm); err != nil {
		t.Fatal(err)
	}
	got, err := b.fed.Direct.Handle(ctx, application.DirectThread{UserID: b.userID, As: "alice", With: []string{bob}, Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("the received thread: %v %v", got, err)
	}
	wantNotes(t, b.convsOf(alice), got[0].ID+" unread=true", res.ID+" unread=false")
	if err := b.notes.MarkConversationRead(ctx, alice, got[0].ParticipantsKey); err != nil {
		t.Fatal(err)
	}
	if _, err := b.deliver(alice, bob, dm); err != nil { // redelivered
		t.Fatal(err)
	}
	wantNotes(t, b.convsOf(alice), got[0].ID+" unread=false", res.ID+" unread=false")
	wantNotes(t, b.convsOf(work), res.ID+" unread=true")
}

// A persona reads its direct conversation with an actor: its own direct
// posts and the ones received, newest first, and nothing of another
// thread; no one else may read it.
func TestDirectThread(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	mine := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "psst, bob", Visibility: domain.VisibilityDirect, To: []string{bob}})
	// bob's note says it was published at 10:00, before alice's (12:00).
	mustDeliver(t, b, bob, note("https://remote.example/users/bob/statuses/d1", bob, "<p>psst, alice</p>", alice))
	// Another thread: bob writes to alice and dave together.
	mustDeliver(t, b, bob, note("https://remote.example/users/bob/statuses/d2", bob, "<p>to you both</p>", alice, dave))
	thread, err := b.fed.Direct.Handle(ctx, application.DirectThread{UserID: b.userID, As: "alice", With: []string{bob}, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(thread) != 2 || thread[0].ObjectURI != mine.ObjectURI || thread[1].ObjectURI != "https://remote.example/users/bob/statuses/d1" {
		t.Fatalf("alice's thread with bob: %+v", thread)
	}
	both, err := b.fed.Direct.Handle(ctx, application.DirectThread{UserID: b.userID, As: "alice", With: []string{dave, bob, alice}, Limit: 20})
	if err != nil || len(both) != 1 || both[0].Content != "<p>to you both</p>" {
		t.Fatalf("alice's thread with bob and dave: %+v %v", both, err)
	}
	other := signUp(t, b.app.SignUp, "mallory")
	tests := []struct {
		name string
		q    application.DirectThread
		want error
	}{
		{"not the persona's owner", application.DirectThread{UserID: other.User.ID, As: "alice", With: []string{bob}, Limit: 20}, domain.ErrForbidden},
		{"no other participant", application.DirectThread{UserID: b.userID, As: "alice", With: []string{alice}, Limit: 20}, domain.ErrInvalidInput},
		{"not an actor URI", application.DirectThread{UserID: b.userID, As: "alice", With: []string{"bob"}, Limit: 20}, domain.ErrInvalidInput},
		{"limit out of range", application.DirectThread{UserID: b.userID, As: "alice", With: []string{bob}, Limit: 0}, domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		if _, err := b.fed.Direct.Handle(ctx, tt.q); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}
