package hostile_test

import (
	"net/http"
	"testing"
)

// SPEC §10, Relevance: a remote Create is stored only when it concerns
// this instance: its author is followed here, it addresses or mentions a
// local actor, replies to a local post, or is addressed to a local group.
// Anything else is answered 202 and dropped, so a stranger cannot fill the
// store by posting to the shared inbox.
func TestUnrelatedPublicNoteIsNotStored(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stored bool
		// note returns the Create of a fresh public note by x (followed by
		// alice when followed is set).
		followed bool
		note     func(s *scene, x *actor, alicePost, club string) (string, map[string]any)
	}{
		{"from a stranger, to nobody here", false, false, func(s *scene, x *actor, _, _ string) (string, map[string]any) {
			id := x.noteURI()
			return id, create(x, id, "spam", []string{asPublic}, nil)
		}},
		{"from an actor alice follows", true, true, func(s *scene, x *actor, _, _ string) (string, map[string]any) {
			id := x.noteURI()
			return id, create(x, id, "news", []string{asPublic}, nil)
		}},
		{"addressed to alice", true, false, func(s *scene, x *actor, _, _ string) (string, map[string]any) {
			id := x.noteURI()
			return id, create(x, id, "hi alice", []string{asPublic, s.alice}, nil)
		}},
		{"mentioning alice", true, false, func(s *scene, x *actor, _, _ string) (string, map[string]any) {
			id := x.noteURI()
			return id, create(x, id, "@alice hi", []string{asPublic}, map[string]any{"tag": []map[string]any{{"type": "Mention", "href": s.alice}}})
		}},
		{"replying to alice's post", true, false, func(s *scene, x *actor, alicePost, _ string) (string, map[string]any) {
			id := x.noteURI()
			return id, create(x, id, "a reply", []string{asPublic}, map[string]any{"inReplyTo": alicePost})
		}},
		{"addressed to a local group", true, false, func(s *scene, x *actor, _, club string) (string, map[string]any) {
			id := x.noteURI()
			return id, create(x, id, "to the club", []string{asPublic, club}, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, "a remote Create is stored only when it concerns this instance", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				club := h.group(s.token, "club")
				status, out := h.call(http.MethodPost, "/api/v1/posts", s.token, map[string]any{"as": "alice", "content": "alice's post"})
				if status != http.StatusCreated {
					t.Fatalf("alice's post: %d %v", status, out)
				}
				alicePost, _ := out["uri"].(string)
				x := s.peer().actor("x")
				if tc.followed {
					localFollows(t, h, s.token, "alice", x)
				}
				id, act := tc.note(s, x, alicePost, club)
				ans := x.send(h.base+"/inbox", act)
				if ans.status != http.StatusAccepted {
					t.Fatalf("the Create: %s, want 202", ans)
				}
				if got := h.stored(id); got != tc.stored {
					t.Errorf("a public note %s: stored %v, want %v", tc.name, got, tc.stored)
				}
			})
		})
	}
}
