package application_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// A post addressed to a local group is stored with the group and
// announced by the group, signed with its key, to the group's followers.
func TestPublishToALocalGroupIsAnnounced(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := context.Background()
	for i, f := range []string{carol, dave} {
		mustDeliver(t, b, f, follow(fmt.Sprintf("%s/f/%d", f, i), f, club))
	}
	before := len(b.allJobs())
	res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "hello club", To: []string{club}})
	p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
	if err != nil || p.GroupURI != club {
		t.Fatalf("post %+v %v", p, err)
	}
	group, _ := b.fed.Actors.ByURI(ctx, club)
	inboxes := map[string]bool{}
	for _, j := range b.allJobs()[before:] {
		pl := payload(t, j)
		if pl["type"] != "Announce" || pl["actor"] != club || j.SenderID != group.ID {
			t.Fatalf("job %s from %s", j.Payload, j.SenderID)
		}
		inboxes[j.Inbox] = true
	}
	if len(inboxes) != 2 || !inboxes[shared] || !inboxes[dave+"/inbox"] {
		t.Fatalf("announced to %v", inboxes)
	}
	// A group of ours that does not exist is refused before anything is stored.
	_, err = b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "x", To: []string{local + "/groups/nope"}})
	if !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("err %v", err)
	}
}

// SPEC §9: a fan-out to tens of thousands of inboxes enqueues in batches,
// for a persona's post and for a group's announce alike.
func TestFanOutToTenThousandFollowersEnqueuesInBatches(t *testing.T) {
	t.Parallel()
	const n = 10_000
	tests := []struct {
		name     string
		followed string
		publish  application.Publish
	}{
		{"persona's followers", alice, application.Publish{As: "alice", Content: "to everyone"}},
		{"group's followers", club, application.Publish{As: "alice", Content: "to the club", To: []string{club}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			ctx := context.Background()
			for i := range n {
				uri := fmt.Sprintf("https://r%05d.example/users/u", i)
				f, _ := domain.NewFollower(uri, tt.followed, "", domain.FollowAccepted, t0)
				if _, err := b.follows.Add(ctx, f); err != nil {
					t.Fatal(err)
				}
				if err := b.content.Upsert(ctx, domain.ForeignAvatar{ActorURI: uri, Inbox: uri + "/inbox", Host: "x", FetchedAt: t0}); err != nil {
					t.Fatal(err)
				}
			}
			tt.publish.UserID = b.userID
			if _, err := b.app.Publish.Handle(ctx, tt.publish); err != nil {
				t.Fatal(err)
			}
			if jobs := b.allJobs(); len(jobs) != n {
				t.Fatalf("%d jobs, want %d", len(jobs), n)
			}
			b.enqueue.mu.Lock()
			batches := append([]int(nil), b.enqueue.batches...)
			b.enqueue.mu.Unlock()
			big := 0
			for _, size := range batches {
				if size > application.EnqueueBatch {
					t.Fatalf("a batch of %d jobs", size)
				}
				if size == application.EnqueueBatch {
					big++
				}
			}
			if big != n/application.EnqueueBatch {
				t.Fatalf("batches %v: want %d full batches of %d", batches, n/application.EnqueueBatch, application.EnqueueBatch)
			}
		})
	}
}
