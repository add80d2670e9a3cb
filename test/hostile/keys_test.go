package hostile_test

import (
	"net/http"
	"testing"
)

// SPEC §10, Keys: a key id is owned by at most one actor, the actor on the
// key id's own host that publishes it. Every write into the remote-actor
// cache enforces it; a claim is refused (403) and changes nothing.

// keyClaimRefused checks that claimant did not get the key id: its cached
// copy (if any) does not hold it, and the key id still finds its owner
// (when cached) or nobody.
func (s *scene) keyClaimRefused(claimant *actor, keyID string, owner *actor, ownerCached bool) {
	s.t.Helper()
	if fa, ok := s.h.foreign(claimant.uri); ok && fa.PublicKeyID == keyID {
		s.t.Errorf("%s is cached holding the key id %s", claimant.uri, keyID)
	}
	fa, ok := s.h.foreignByKey(keyID)
	switch {
	case ok && fa.ActorURI != owner.uri:
		s.t.Errorf("key id %s finds %s, not its owner %s", keyID, fa.ActorURI, owner.uri)
	case ok && !samePEM(fa.PublicKeyPEM, owner.pubPEM):
		s.t.Errorf("key id %s is cached with another PEM than its owner's", keyID)
	case !ok && ownerCached:
		s.t.Errorf("key id %s no longer finds its owner %s", keyID, owner.uri)
	}
}

// An Update{Person} of the attacker's own (cached, legitimate) actor whose
// embedded key has the id of a key on the victim's host.
func TestUpdatePersonClaimingAnotherHostsKeyIDIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		victimCached bool
	}{{"victim cached", true}, {"victim not seen", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, "Update{Person} cannot claim a key id on another host", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				victim, mallory := s.peer().actor("victim"), s.peer().actor("mallory")
				s.cache(mallory)
				if tc.victimCached {
					s.cache(victim)
				}
				before, _ := h.foreign(mallory.uri)
				ans := mallory.send(inboxOf(s.alice), updatePerson(mallory, personDoc(mallory.uri, victim.keyID, mallory.uri, mallory.pubPEM)))
				if ans.status != http.StatusForbidden {
					t.Errorf("Update{Person} claiming %s: %s, want 403", victim.keyID, ans)
				}
				if after, _ := h.foreign(mallory.uri); after.PublicKeyID != before.PublicKeyID {
					t.Errorf("the claimant's cached key changed: %q -> %q", before.PublicKeyID, after.PublicKeyID)
				}
				s.keyClaimRefused(mallory, victim.keyID, victim, tc.victimCached)
				s.stillVerified(victim)
			})
		})
	}
}

// First contact (a local persona follows the attacker) with an actor whose
// document publishes a key id on another host. Once cached holding it, the
// attacker's POSTs signed under the victim's key id would verify.
func TestFirstContactWithActorClaimingAnotherHostsKeyIDIsRefused(t *testing.T) {
	t.Parallel()
	eachStore(t, "first contact cannot claim a key id on another host", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		vp, ap := s.peer(), s.peer()
		victim, mallory := vp.actor("victim"), ap.actor("mallory")
		ap.put("/users/mallory", http.StatusOK, "application/activity+json", personDoc(mallory.uri, victim.keyID, mallory.uri, mallory.pubPEM))

		status, out := h.call(http.MethodPost, "/api/v1/follows", s.token, map[string]string{"as": "alice", "target": mallory.uri})
		if ap.getsOf("/users/mallory") == 0 {
			t.Fatalf("Herald never fetched %s (follow: %d %v): the attack did not reach the rule", mallory.uri, status, out)
		}
		if status == http.StatusCreated || status == http.StatusOK {
			t.Errorf("following an actor that claims %s: %d %v, want it refused", victim.keyID, status, out)
		}
		if fa, ok := h.foreign(mallory.uri); ok {
			t.Errorf("the claimant is cached (key id %s)", fa.PublicKeyID)
		}
		s.keyClaimRefused(mallory, victim.keyID, victim, false)

		id, act := s.noteToAlice(mallory, "signed under the victim's key id")
		if ans := sendWith(t, mallory.key, victim.keyID, inboxOf(s.alice), act); ans.status != http.StatusUnauthorized {
			t.Errorf("the claimant's POST signed under %s: %s, want 401", victim.keyID, ans)
		}
		if h.stored(id) {
			t.Errorf("the claimant's note signed under the victim's key id was stored")
		}
		s.stillVerified(victim)
	})
}

// Two actors on one host: the attacker controls account b on the victim's
// server and claims the key id of account a, which Herald has cached for
// a, by an Update{Person} or by its document at first contact.
func TestActorClaimingTheKeyIDOfAnotherActorOnItsHostIsRefused(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"Update{Person}", "first contact"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			eachStore(t, "a key id cached for one actor cannot be claimed by another on its host", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				p := s.peer()
				a, b := p.actor("a"), p.actor("b")
				s.cache(a)
				claim := personDoc(b.uri, a.keyID, b.uri, b.pubPEM)
				switch how {
				case "Update{Person}":
					s.cache(b)
					before, _ := h.foreign(b.uri)
					if ans := b.send(inboxOf(s.alice), updatePerson(b, claim)); ans.status != http.StatusForbidden {
						t.Errorf("b's Update{Person} claiming a's key id: %s, want 403", ans)
					}
					if after, _ := h.foreign(b.uri); after.PublicKeyID != before.PublicKeyID || !samePEM(after.PublicKeyPEM, before.PublicKeyPEM) {
						t.Errorf("b's cached key changed: %q -> %q", before.PublicKeyID, after.PublicKeyID)
					}
				case "first contact":
					p.put("/users/b", http.StatusOK, "application/activity+json", claim)
					status, out := h.call(http.MethodPost, "/api/v1/follows", s.token, map[string]string{"as": "alice", "target": b.uri})
					if p.getsOf("/users/b") == 0 {
						t.Fatalf("Herald never fetched b (follow: %d %v): the attack did not reach the rule", status, out)
					}
					if status == http.StatusCreated || status == http.StatusOK {
						t.Errorf("following b, whose document claims a's key id: %d %v, want it refused", status, out)
					}
					if fa, ok := h.foreign(b.uri); ok {
						t.Errorf("b is cached (key id %s)", fa.PublicKeyID)
					}
				}
				s.keyClaimRefused(b, a.keyID, a, true)
				id, act := s.noteToAlice(b, "signed under a's key id")
				// a's cached key does not verify b's signature; a was fetched
				// moments ago, so Herald does not fetch it again yet (at most
				// once a minute) and asks for a retry: 503, or 401 once a is
				// fetched again and still does not verify.
				if ans := sendWith(t, b.key, a.keyID, inboxOf(s.alice), act); ans.status != http.StatusUnauthorized && ans.status != http.StatusServiceUnavailable {
					t.Errorf("b's POST signed under a's key id: %s, want 401 or 503", ans)
				}
				if h.stored(id) {
					t.Errorf("b's note signed under a's key id was stored")
				}
				s.stillVerified(a)
			})
		})
	}
}

// The control: the real owner rotating its key (an Update{Person} signed
// with the old key, carrying a new key id and PEM) is no claim; its POSTs
// signed with the new key are accepted.
func TestKeyRotationByItsOwnerStillWorks(t *testing.T) {
	t.Parallel()
	eachStore(t, "a key rotation by its owner is taken", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		a := s.peer().actor("a")
		s.cache(a)
		oldKey, oldKeyID := a.key, a.keyID
		a.rotate(a.uri + "#key-2")
		ans := sendWith(t, oldKey, oldKeyID, inboxOf(s.alice), updatePerson(a, personDoc(a.uri, a.keyID, a.uri, a.pubPEM)))
		if ans.status != http.StatusAccepted {
			t.Fatalf("the owner's Update{Person} with its new key, signed with the old one: %s, want 202", ans)
		}
		if fa, _ := h.foreign(a.uri); fa.PublicKeyID != a.keyID || !samePEM(fa.PublicKeyPEM, a.pubPEM) {
			t.Errorf("after the rotation the cached key is %q, want %q", fa.PublicKeyID, a.keyID)
		}
		s.stillVerified(a)
	})
}
