package hostile_test

import (
	"net/http"
	"testing"
)

// scene is a Herald with one persona, alice, and the keys the test's
// peers draw from.
type scene struct {
	t     *testing.T
	h     *herald
	token string
	alice string
	keys  *keyring
}

func newScene(t *testing.T, h *herald) *scene {
	t.Helper()
	s := &scene{t: t, h: h, keys: &keyring{}}
	s.token = h.signUp("alice")
	s.alice = h.persona("alice")
	return s
}

func (s *scene) peer() *peer { return newPeer(s.t, s.keys) }

// toAlice addresses a note to the public and to alice, so that it
// concerns this instance (SPEC §10, Relevance) and is stored.
func (s *scene) toAlice() []string { return []string{asPublic, s.alice} }

// noteToAlice is a Create of a fresh note by a, addressed to alice: its id
// and the activity.
func (s *scene) noteToAlice(a *actor, content string) (string, map[string]any) {
	id := a.noteURI()
	return id, create(a, id, content, s.toAlice(), nil)
}

// stillVerified checks that a's genuinely signed Create is accepted and
// stored: an attack on a's key left a able to speak.
func (s *scene) stillVerified(a *actor) {
	s.t.Helper()
	id, act := s.noteToAlice(a, "still me")
	if ans := a.send(inboxOf(s.alice), act); ans.status != http.StatusAccepted {
		s.t.Fatalf("%s's genuinely signed Create after the attack: %s, want 202", a.uri, ans)
	}
	if !s.h.stored(id) {
		s.t.Fatalf("%s's genuinely signed Create after the attack was accepted but not stored", a.uri)
	}
}

// cache makes Herald cache a (its genuinely signed Create, stored).
func (s *scene) cache(a *actor) {
	s.t.Helper()
	id, act := s.noteToAlice(a, "hello")
	mustAccept(s.t, a.uri+"'s first Create", a.send(inboxOf(s.alice), act))
	if !s.h.stored(id) {
		s.t.Fatalf("%s's first Create was not stored", a.uri)
	}
	if _, ok := s.h.foreign(a.uri); !ok {
		s.t.Fatalf("%s is not cached after its Create", a.uri)
	}
}
