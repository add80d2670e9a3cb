package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// A persona reads its direct conversation with an actor: its own direct
// posts and the ones received, newest first, and nothing of another
// thread; no one else may read it.
func TestDirectThread(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := context.Background()
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
