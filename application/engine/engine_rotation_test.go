package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// TestEngineSignsWithTheRotatedKey: deliveries read the sender's key when
// they are sent, through the per-process cache. A rotation in this
// process (Engine.KeyRotated) is used by the next delivery; a rotation by
// another process sharing the store (the key changed in the store alone,
// this process's cache still holding the old one) makes the remote refuse
// the delivery signed with the old key, and the engine sends it again at
// once with the key read afresh, spending no attempt. A refusal with the
// current key stays final.
func TestEngineSignsWithTheRotatedKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k1 := keyPair(1)
	actors := memory.NewAccountStore() // the store both processes share
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "sender-1", RootUserID: "u1", Name: "alice", Keys: k1}); err != nil {
		t.Fatal(err)
	}
	// The remote verifies with the key the actor publishes now (it
	// refetches the actor when a signature fails, as GoToSocial and
	// Mastodon do); refuses.example refuses everything.
	respond := func(_ context.Context, d ports.Delivery) domain.Outcome {
		if d.Inbox == "https://any.example/inbox" {
			return domain.Classify(http.StatusAccepted, "", time.Time{})
		}
		a, err := actors.AvatarByID(ctx, "sender-1")
		if err != nil || d.PrivateKeyPEM != a.Keys.PrivatePEM || d.Inbox == "https://refuses.example/inbox" {
			return domain.Classify(http.StatusUnauthorized, "", time.Time{})
		}
		return domain.Classify(http.StatusAccepted, "", time.Time{})
	}
	b := setup(t, engine.Config{}, respond)
	b.rebuild(engine.Config{}, func(d *engine.Deps) { d.Keys = engine.NewCachedKeys(engine.ActorKeys{Actors: actors}, b.clock) })
	b.start()

	// done waits for the job's end, moving the clock past the engine's
	// short polls so a released job is leased again.
	done := func(id string) domain.Job {
		t.Helper()
		var j domain.Job
		b.eventually("job "+id+" finished", func() bool {
			j = b.get(id)
			if j.State == domain.JobSucceeded || j.State == domain.JobDead {
				return true
			}
			b.clock.Advance(100 * time.Millisecond)
			return false
		})
		return j
	}
	keysSent := func(inbox string) []string {
		var out []string
		for _, c := range b.deliverer.Calls() {
			if c.Inbox == inbox {
				out = append(out, c.PrivateKeyPEM)
			}
		}
		return out
	}

	b.enqueue(b.job("j1", "a.example")) // caches k1
	if j := done("j1"); j.State != domain.JobSucceeded {
		t.Fatalf("j1: %+v", j)
	}

	// Another process rotates: the store has k2, this cache still k1. (An
	// hour ago, as far as the rotation grace goes: the refusals below are
	// judged on their keys alone.)
	k2 := keyPair(2)
	if err := actors.SetAvatarKeys(ctx, "sender-1", k2, t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	b.enqueue(b.job("j2", "b.example"))
	j2 := done("j2")
	sent := keysSent("https://b.example/inbox")
	if j2.State != domain.JobSucceeded || j2.Attempts != 1 {
		t.Fatalf("j2 after a rotation elsewhere: state %s, %d attempts; want succeeded after 1", j2.State, j2.Attempts)
	}
	if len(sent) != 2 || sent[0] != k1.PrivatePEM || sent[1] != k2.PrivatePEM {
		t.Fatalf("j2 signed with %d keys (old first, then new: %v)", len(sent), len(sent) == 2 && sent[0] == k1.PrivatePEM)
	}

	// A rotation in this process: the next delivery signs with k3 at once.
	k3 := keyPair(3)
	if err := actors.SetAvatarKeys(ctx, "sender-1", k3, t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	b.engine.KeyRotated("sender-1")
	b.enqueue(b.job("j3", "c.example"))
	if j := done("j3"); j.State != domain.JobSucceeded {
		t.Fatalf("j3: %+v", j)
	}
	if sent := keysSent("https://c.example/inbox"); len(sent) != 1 || sent[0] != k3.PrivatePEM {
		t.Fatalf("j3 sent %d times; want once, with the new key", len(sent))
	}

	// A refusal of the current key is what it was: final.
	b.enqueue(b.job("j4", "refuses.example"))
	if j := done("j4"); j.State != domain.JobDead || j.Attempts != 1 {
		t.Fatalf("j4 refused with the current key: state %s, %d attempts; want dead after 1", j.State, j.Attempts)
	}
	if sent := keysSent("https://refuses.example/inbox"); len(sent) != 1 {
		t.Fatalf("j4 sent %d times, want once", len(sent))
	}

	// The Update announcing a rotation is signed with the key before it
	// (domain.PreviousKeySigner): the one the followers' servers know.
	j, err := domain.NewJob(contract.JobID("j5"), "https://local.example/activities/j5", "https://any.example/inbox",
		domain.PreviousKeySigner("sender-1"), "https://local.example/users/alice#main-key", []byte(`{"type":"Update"}`), b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.enqueue(j)
	if j := done("j5"); j.State != domain.JobSucceeded {
		t.Fatalf("j5: %+v", j)
	}
	if sent := keysSent("https://any.example/inbox"); len(sent) != 1 || sent[0] != k2.PrivatePEM {
		t.Fatal("the Update of the rotation to k3 was not signed with k2")
	}

	// Within KeyRotationGrace of a rotation a refusal is retried on the
	// curve (the server may not have read the Update yet), not final.
	k4 := keyPair(4)
	if err := actors.SetAvatarKeys(ctx, "sender-1", k4, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.engine.KeyRotated("sender-1")
	b.enqueue(b.job("j6", "refuses.example"))
	var j6 domain.Job
	b.eventually("j6 attempted", func() bool { j6 = b.get("j6"); return j6.Attempts == 1 })
	if j6.State != domain.JobQueued || !strings.Contains(j6.LastError, "key rotation") || !j6.RunAt.After(b.clock.Now()) {
		t.Fatalf("j6 refused right after a rotation: %s, %q, due %v; want queued for a retry", j6.State, j6.LastError, j6.RunAt)
	}
}

// keyPair is the n-th of distinct key pairs, so a rotation shows.
func keyPair(n int) domain.KeyPair {
	return domain.KeyPair{
		PublicPEM:  fmt.Sprintf("-----BEGIN PUBLIC KEY-----\nrotated%d\n-----END PUBLIC KEY-----\n", n),
		PrivatePEM: fmt.Sprintf("-----BEGIN PRIVATE KEY-----\nrotated%d\n-----END PRIVATE KEY-----\n", n),
	}
}
