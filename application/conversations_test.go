package application_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// convsOf lists persona's conversations as "last status id, unread".
func (b *fedBundle) convsOf(persona string) []string {
	b.t.Helper()
	cs, err := b.notes.Conversations(context.Background(), persona, domain.ConversationPage{Limit: 100})
	if err != nil {
		b.t.Fatal(err)
	}
	out := []string{}
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s unread=%v", c.LastStatusID, c.Unread))
	}
	return out
}

// A direct post, published or received, is its local participants'
// conversation: read for its author, unread for the others; a persona
// not in it has none, and a redelivery changes nothing.
func TestConversationsKeptAsDirectPostsAreStored(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := context.Background()
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
