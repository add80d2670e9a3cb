package application_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// TestInboxRelevance: a remote note is kept only when it concerns this
// instance (SPEC §10 "Relevance"); anything else is accepted and dropped.
func TestInboxRelevance(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const obj = "https://remote.example/users/bob/statuses/r1"
	tests := []struct {
		name     string
		setup    func(b *fedBundle)
		activity string
		kept     bool
	}{
		{"from a stranger, to no one here", nil, note(obj, bob, "<p>spam</p>", application.ASPublic), false},
		{"a stranger's reply to another server's note", nil, replyTo(obj, bob, "https://other.example/n/1"), false},
		{"a stranger's reply to a note we do not have", nil, replyTo(obj, bob, local+"/users/alice/statuses/none"), false},
		{"a stranger's direct note to other servers' actors", nil, note(obj, bob, "<p>hi</p>", dave), false},
		{"its author is followed here", func(b *fedBundle) { b.accepted(alice, bob) }, note(obj, bob, "<p>news</p>", application.ASPublic), true},
		{"a follow still pending does not count", func(b *fedBundle) {
			f, _ := domain.NewFollower(alice, bob, alice+"/f", domain.FollowPending, b.clock.Now())
			_, _ = b.follows.Add(ctx, f)
		}, note(obj, bob, "<p>news</p>", application.ASPublic), false},
		{"addressed to a persona", nil, note(obj, bob, "<p>hi</p>", application.ASPublic, alice), true},
		{"mentions a persona", nil, noteMentioning(obj, bob, "<p>@alice</p>", []string{application.ASPublic}, alice), true},
		{"addressed to a group", nil, note(obj, bob, "<p>club</p>", application.ASPublic, club), true},
		{"a direct note to a persona", nil, note(obj, bob, "<p>psst</p>", alice), true},
		{"replies to a note of ours", func(b *fedBundle) {
			p := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "hello", Visibility: domain.VisibilityPublic})
			b.replyTarget = p.ObjectURI
		}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			if tt.setup != nil {
				tt.setup(b)
			}
			act := tt.activity
			if act == "" {
				act = replyTo(obj, bob, b.replyTarget)
			}
			res, err := b.deliver("", bob, act)
			if err != nil {
				t.Fatal(err)
			}
			_, perr := b.content.PostByObjectURI(ctx, obj)
			_, derr := b.content.DmByObjectURI(ctx, obj)
			if kept := perr == nil || derr == nil; kept != tt.kept || res.Ignored == tt.kept {
				t.Fatalf("kept %v (%+v), want %v", kept, res, tt.kept)
			}
		})
	}
}

// TestInboxTombstones: a Delete leaves a tombstone that a replayed or late
// Create of the same note by its author cannot get past (SPEC §10
// "Tombstones"), while another actor's Delete of it changes nothing.
func TestInboxTombstones(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const obj = "https://remote.example/users/bob/statuses/t1"
	create := note(obj, bob, "<p>regret</p>", application.ASPublic, alice)
	del := func(actor string) string {
		return `{"id":"` + actor + `/d/1","type":"Delete","actor":"` + actor + `","object":{"id":"` + obj + `","type":"Tombstone"}}`
	}
	stored := func(b *fedBundle) bool {
		_, err := b.content.PostByObjectURI(ctx, obj)
		return err == nil
	}
	t.Run("Create replayed after its Delete", func(t *testing.T) {
		t.Parallel()
		b := setupFed(t)
		mustDeliver(t, b, bob, create)
		mustDeliver(t, b, bob, del(bob))
		if res, err := b.deliver("", bob, create); err != nil || !res.Ignored || stored(b) {
			t.Fatalf("replayed Create: %+v %v, stored %v", res, err, stored(b))
		}
		// Nor can an Update or a boost of it bring it back.
		if res, err := b.deliver("", bob, `{"type":"Update","actor":"`+bob+`","object":{"id":"`+obj+`","type":"Note","attributedTo":"`+bob+`","content":"back"}}`); err != nil || !res.Ignored || stored(b) {
			t.Fatalf("Update: %+v %v", res, err)
		}
		b.accepted(alice, carol)
		b.fetcher.set(obj, remoteNoteDoc(obj, bob, "<p>regret</p>", application.ASPublic))
		if res, err := b.deliver("", carol, announce("https://remote.example/users/carol/a/1", carol, obj)); err != nil || !res.Ignored || stored(b) {
			t.Fatalf("Announce: %+v %v", res, err)
		}
	})
	t.Run("Delete arriving before its Create", func(t *testing.T) {
		t.Parallel()
		b := setupFed(t)
		if res, err := b.deliver("", bob, del(bob)); err != nil || !res.Ignored {
			t.Fatalf("Delete first: %+v %v", res, err)
		}
		if res, err := b.deliver("", bob, create); err != nil || !res.Ignored || stored(b) {
			t.Fatalf("late Create: %+v %v, stored %v", res, err, stored(b))
		}
	})
	t.Run("another actor's Delete ahead of time", func(t *testing.T) {
		t.Parallel()
		b := setupFed(t)
		// carol, on bob's server, deletes the URI bob's next note will
		// have: it binds carol alone.
		if _, err := b.deliver("", carol, del(carol)); err != nil {
			t.Fatal(err)
		}
		if res, err := b.deliver("", bob, create); err != nil || res.Ignored || !stored(b) {
			t.Fatalf("bob's Create: %+v %v", res, err)
		}
	})
	t.Run("a Delete of another server's URI leaves nothing", func(t *testing.T) {
		t.Parallel()
		b := setupFed(t)
		const elsewhere = "https://other.example/users/dave/statuses/1"
		if _, err := b.deliver("", bob, `{"type":"Delete","actor":"`+bob+`","object":"`+elsewhere+`"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := b.content.Tombstoned(ctx, elsewhere); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("tombstone of another server's note: %v", err)
		}
	})
}

// TestInboxDeletePerson: an actor's Delete of itself removes what it left
// here and refuses its key afterwards; a redelivery of it, which can no
// longer be verified, removes again.
func TestInboxDeletePerson(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFollowing(t)
	const own = "https://remote.example/users/bob/statuses/p1"
	mustDeliver(t, b, bob, note(own, bob, "<p>mine</p>", application.ASPublic))
	mustDeliver(t, b, bob, follow("https://remote.example/f/1", bob, alice))
	p := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "hello", Visibility: domain.VisibilityPublic})
	mustDeliver(t, b, bob, `{"id":"https://remote.example/l/1","type":"Like","actor":"`+bob+`","object":"`+p.ObjectURI+`"}`)
	signer := b.signer(bob)

	mustDeliver(t, b, bob, `{"id":"`+bob+`#delete","type":"Delete","actor":"`+bob+`","object":"`+bob+`"}`)
	if _, err := b.content.PostByObjectURI(ctx, own); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("bob's post kept: %v", err)
	}
	if n, _ := b.content.CountReactions(ctx, p.ObjectURI); n[domain.ReactionLike] != 0 {
		t.Fatalf("bob's like kept: %v", n)
	}
	if _, ok := b.follower(bob, alice); ok {
		t.Fatal("bob still follows alice")
	}
	if _, ok := b.follower(alice, bob); ok {
		t.Fatal("alice still follows bob")
	}
	// Its key is refused from now on, without a fetch, and it cannot be
	// cached again.
	before := b.fetcher.count(bob)
	_, _, err := b.fed.Resolver.ByKeyID(ctx, signer.PublicKeyID)
	if !errors.Is(err, domain.ErrUnauthorized) || !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("deleted actor's key: %v, want ErrUnauthorized and ErrNotFound", err)
	}
	if _, err := b.fed.Resolver.Resolve(ctx, bob); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("deleted actor resolved: %v", err)
	}
	if b.fetcher.count(bob) != before {
		t.Fatal("a deleted actor was fetched")
	}
	// A redelivery of the Delete removes again what came meanwhile.
	post, _ := domain.NewRemotePost("late", "https://remote.example/users/bob/statuses/late", bob, "<p>late</p>", domain.VisibilityPublic, b.clock.Now())
	if _, err := b.content.CreatePost(ctx, post); err != nil {
		t.Fatal(err)
	}
	if err := b.fed.Inbox.DeletedAgain(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if _, err := b.content.PostByObjectURI(ctx, post.ObjectURI); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("late post kept: %v", err)
	}
	// For an actor that did not delete itself, DeletedAgain does nothing.
	mustDeliver(t, b, carol, note("https://remote.example/users/carol/statuses/c", carol, "<p>c</p>", alice))
	if err := b.fed.Inbox.DeletedAgain(ctx, carol); err != nil {
		t.Fatal(err)
	}
	if _, err := b.content.DmByObjectURI(ctx, "https://remote.example/users/carol/statuses/c"); err != nil {
		t.Fatalf("carol's note removed: %v", err)
	}
}

// TestActorCacheKeyClaims plays actors that claim a key that is not
// theirs (SPEC §10 "Keys"): through an Update of themselves, or in the
// document first contact fetches. Nothing they claim is cached, and the
// key's owner keeps being found by it.
func TestActorCacheKeyClaims(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const evil = "https://evil.example/users/mallory"
	victimKey := bob + "#main-key"
	claim := func(b *fedBundle, actor, keyID string) []byte {
		return []byte(strings.Replace(string(remoteActorDoc(actor, b.keys[1].PublicPEM, "")), actor+"#main-key", keyID, 1))
	}
	for _, seen := range []bool{false, true} {
		t.Run(fmt.Sprintf("Update claiming another host's key, victim seen %v", seen), func(t *testing.T) {
			b := setupFed(t)
			b.fetcher.set(evil, remoteActorDoc(evil, b.keys[1].PublicPEM, ""))
			if seen {
				b.signer(bob)
			}
			_, err := b.deliver("", evil, `{"type":"Update","actor":"`+evil+`","object":`+string(claim(b, evil, victimKey))+`}`)
			if !errors.Is(err, domain.ErrForbidden) {
				t.Fatalf("err %v, want ErrForbidden", err)
			}
			fa, _, err := b.fed.Resolver.ByKeyID(ctx, victimKey)
			if err != nil || fa.ActorURI != bob || !samePEM(fa.PublicKeyPEM, b.keys[0].PublicPEM) {
				t.Fatalf("bob's key after the claim: %+v %v", fa, err)
			}
			if m, _ := b.content.ByActorURI(ctx, evil); m.PublicKeyID != evil+"#main-key" {
				t.Fatalf("mallory's copy changed: %+v", m)
			}
		})
	}
	t.Run("Update claiming the key of another actor of the same host", func(t *testing.T) {
		b := setupFed(t)
		b.signer(bob)
		b.signer(carol)
		_, err := b.deliver("", carol, `{"type":"Update","actor":"`+carol+`","object":`+string(claim(b, carol, victimKey))+`}`)
		if !errors.Is(err, domain.ErrForbidden) {
			t.Fatalf("err %v, want ErrForbidden", err)
		}
		if fa, err := b.content.ByKeyID(ctx, victimKey); err != nil || fa.ActorURI != bob {
			t.Fatalf("bob's key now %+v %v", fa, err)
		}
	})
	t.Run("first contact with an actor publishing another host's key", func(t *testing.T) {
		b := setupFed(t)
		b.fetcher.set(evil, claim(b, evil, victimKey))
		b.wantRefused(evil, evil)
	})
	t.Run("the owner's rotation", func(t *testing.T) {
		b := setupFed(t)
		b.signer(bob)
		const newKey = bob + "#key-2"
		mustDeliver(t, b, bob, `{"type":"Update","actor":"`+bob+`","object":`+string(claim(b, bob, newKey))+`}`)
		fa, _, err := b.fed.Resolver.ByKeyID(ctx, newKey)
		if err != nil || fa.ActorURI != bob || !samePEM(fa.PublicKeyPEM, b.keys[1].PublicPEM) {
			t.Fatalf("new key: %+v %v", fa, err)
		}
	})
	t.Run("a key that no longer verifies is fetched again at most once a minute", func(t *testing.T) {
		b := setupFed(t)
		fa := b.signer(bob)
		if _, err := b.fed.Resolver.Refetch(ctx, fa, victimKey); !errors.Is(err, domain.ErrUnavailable) {
			t.Fatalf("refetch right after a fetch: %v, want ErrUnavailable", err)
		}
		if n := b.fetcher.count(bob); n != 1 {
			t.Fatalf("%d fetches of bob", n)
		}
		b.clock.Advance(time.Minute)
		if _, err := b.fed.Resolver.Refetch(ctx, fa, victimKey); err != nil || b.fetcher.count(bob) != 2 {
			t.Fatalf("refetch a minute later: %v, %d fetches", err, b.fetcher.count(bob))
		}
	})
}
