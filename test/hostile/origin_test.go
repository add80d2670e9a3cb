package hostile_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/heraldfed/herald/domain"
)

// SPEC §10, Origin: a fetched document speaks only for the host that
// finally answered; where its id is not the URL that answered, it is
// fetched again by its id; only ActivityPub media types are taken.

// forgeryRefused checks what must hold after a forged Create in the
// victim's name was refused: 401, the note not stored, the victim's cached
// copy as it was (or, if it was not cached, nothing of the forger's key
// under its name), nothing cached under the forged key id, and the victim
// still able to speak.
func (s *scene) forgeryRefused(victim *actor, forger string, before domain.ForeignAvatar, wasCached bool, keyID, noteID string, ans answer) {
	s.t.Helper()
	if ans.status != http.StatusUnauthorized {
		s.t.Errorf("POST signed with the forged key %s: %s, want 401", keyID, ans)
	}
	if s.h.stored(noteID) {
		s.t.Errorf("the forged note %s in %s's name was stored", noteID, victim.uri)
	}
	after, cached := s.h.foreign(victim.uri)
	switch {
	case wasCached && (!cached || after.PublicKeyID != before.PublicKeyID || after.PublicKeyPEM != before.PublicKeyPEM):
		s.t.Errorf("the victim's cached copy changed: key %q -> %q (forger's PEM: %v)", before.PublicKeyID, after.PublicKeyID, samePEM(after.PublicKeyPEM, forger))
	case !wasCached && cached && !samePEM(after.PublicKeyPEM, victim.pubPEM):
		s.t.Errorf("the victim %s is now cached with key %q and the forger's PEM", victim.uri, after.PublicKeyID)
	}
	if fa, ok := s.h.foreignByKey(keyID); ok && samePEM(fa.PublicKeyPEM, forger) {
		s.t.Errorf("the forged key id %s is cached for %s", keyID, fa.ActorURI)
	}
	s.stillVerified(victim)
}

// Mastodon CVE-2024-23832: the forger signs with a key id on the victim's
// host that redirects (an open redirect there) to a document on the
// forger's host claiming to be the victim, with the forger's key.
func TestRedirectedKeyIDCannotSpeakForTheVictim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cached bool // Herald had the victim cached before the attack
	}{{"victim cached", true}, {"victim not seen", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, "a key id that redirects to another host cannot speak for the victim", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				vp, ap := s.peer(), s.peer()
				victim, mallory := vp.actor("victim"), ap.actor("mallory")
				var before domain.ForeignAvatar
				if tc.cached {
					s.cache(victim)
					before, _ = h.foreign(victim.uri)
				}
				keyID := vp.base + "/redirect?to=" + url.QueryEscape(ap.base+"/fake-victim")
				ap.put("/fake-victim", http.StatusOK, "application/activity+json", personDoc(victim.uri, keyID, victim.uri, mallory.pubPEM))

				noteID := victim.uri + "/statuses/forged"
				ans := sendWith(t, mallory.key, keyID, inboxOf(s.alice), createFrom(victim.uri, noteID, "forged", s.toAlice()))
				if vp.getsOf("/redirect?to="+url.QueryEscape(ap.base+"/fake-victim")) == 0 {
					t.Fatalf("Herald never fetched the key id %s: the attack did not reach the rule (answer %s)", keyID, ans)
				}
				s.forgeryRefused(victim, mallory.pubPEM, before, tc.cached, keyID, noteID, ans)
			})
		})
	}
}

// A document whose id is not the URL that answered: on another host (the
// forger's own), or at another URL of the victim's host (a file the forger
// uploaded there). Herald fetches the id again, which does not publish the
// forger's key.
func TestDocumentWhoseIDIsNotWhereItWasFetchedCannotSpeakForTheVictim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		onVictim bool // the forged document is on the victim's host
		cached   bool
	}{
		{"on the forger's host, victim not seen", false, false},
		{"on the forger's host, victim cached", false, true},
		{"uploaded to the victim's host, victim not seen", true, false},
		{"uploaded to the victim's host, victim cached", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, "a document speaks only for the URL of its id", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				vp, ap := s.peer(), s.peer()
				victim, mallory := vp.actor("victim"), ap.actor("mallory")
				var before domain.ForeignAvatar
				if tc.cached {
					s.cache(victim)
					before, _ = h.foreign(victim.uri)
				}
				host := ap
				if tc.onVictim {
					host = vp
				}
				keyID := host.base + "/media/upload.json#key"
				host.put("/media/upload.json", http.StatusOK, "application/activity+json", personDoc(victim.uri, keyID, victim.uri, mallory.pubPEM))

				noteID := victim.uri + "/statuses/forged"
				ans := sendWith(t, mallory.key, keyID, inboxOf(s.alice), createFrom(victim.uri, noteID, "forged", s.toAlice()))
				if host.getsOf("/media/upload.json") == 0 {
					t.Fatalf("Herald never fetched the key id %s: the attack did not reach the rule (answer %s)", keyID, ans)
				}
				s.forgeryRefused(victim, mallory.pubPEM, before, tc.cached, keyID, noteID, ans)
			})
		})
	}
}

// A key document served as something other than ActivityPub JSON (an
// uploaded file served as text/html or plain application/json) is not a
// key: the POST it would verify is refused and nothing is cached. The two
// ActivityPub media types are taken (the control rows).
func TestKeyDocumentWithWrongContentTypeIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		contentType string
		taken       bool
	}{
		{"text/html; charset=utf-8", false},
		{"application/json", false},
		{"text/plain", false},
		{"application/activity+json; charset=utf-8", true},
		{`application/ld+json; profile="https://www.w3.org/ns/activitystreams"`, true},
	} {
		t.Run(url.PathEscape(tc.contentType), func(t *testing.T) {
			t.Parallel()
			eachStore(t, "key documents are taken only as application/activity+json or application/ld+json", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				mallory := s.peer().actor("mallory")
				mallory.setContentType(tc.contentType)
				id, act := s.noteToAlice(mallory, "served as "+tc.contentType)
				ans := mallory.send(inboxOf(s.alice), act)
				_, cached := h.foreign(mallory.uri)
				if tc.taken {
					if ans.status != http.StatusAccepted || !h.stored(id) || !cached {
						t.Fatalf("key document served as %s: %s (stored %v, cached %v), want 202, stored and cached", tc.contentType, ans, h.stored(id), cached)
					}
					return
				}
				if ans.status != http.StatusUnauthorized {
					t.Errorf("key document served as %s: %s, want 401", tc.contentType, ans)
				}
				if h.stored(id) {
					t.Errorf("the note verified by a %s key document was stored", tc.contentType)
				}
				if cached {
					t.Errorf("the actor of a %s key document was cached", tc.contentType)
				}
			})
		})
	}
}
