package hostile_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// SPEC §10, Tombstones: a Delete leaves a tombstone of the object's URI
// (also when the Delete arrives first); a later Create, Update or Announce
// of that URI is ignored. Delete{Person} removes the actor's posts, boosts,
// reactions and follows, and refuses its key afterwards.

// A deleted note replayed: by its Create again, an Update of it, or an
// Announce of it by someone alice follows (Herald fetches the note from
// its server, which still serves it). Each after a Delete of the note
// Herald held, and after a Delete that came first.
func TestDeletedNoteDoesNotComeBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		deleteFirst bool
		later       string // Create, Update or Announce
	}{
		{"Create after Delete", false, "Create"},
		{"Create after a Delete that came first", true, "Create"},
		{"Update after Delete", false, "Update"},
		{"Update after a Delete that came first", true, "Update"},
		{"Announce after Delete", false, "Announce"},
		{"Announce after a Delete that came first", true, "Announce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, "a deleted note's URI is tombstoned", func(t *testing.T, h *herald) {
				s := newScene(t, h)
				p := s.peer()
				x, booster := p.actor("x"), p.actor("booster")
				localFollows(t, h, s.token, "alice", x)
				localFollows(t, h, s.token, "alice", booster)

				id := x.noteURI()
				path := strings.TrimPrefix(id, p.base)
				createNote := create(x, id, "the original", s.toAlice(), nil)
				// Its server keeps serving it (a cache, a bug, or malice).
				p.put(path, http.StatusOK, "application/activity+json", noteObject(x, id, "the original", []string{asPublic}, nil))
				if !tc.deleteFirst {
					mustAccept(t, "the Create", x.send(inboxOf(s.alice), createNote))
					if !h.stored(id) {
						t.Fatal("the note was not stored before its Delete")
					}
				}
				del := activity("Delete", x, map[string]any{"id": id, "type": "Tombstone"})
				mustAccept(t, "the Delete", x.send(inboxOf(s.alice), del))
				if h.stored(id) {
					t.Fatal("the note is still there after its Delete")
				}

				var later answer
				switch tc.later {
				case "Create":
					later = x.send(inboxOf(s.alice), createNote)
				case "Update":
					upd := activity("Update", x, noteObject(x, id, "edited after its Delete", s.toAlice(),
						map[string]any{"updated": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}))
					later = x.send(inboxOf(s.alice), upd)
				case "Announce":
					ann := activity("Announce", booster, id)
					ann["to"] = []string{asPublic}
					later = booster.send(inboxOf(s.alice), ann)
				}
				if later.status != http.StatusAccepted {
					t.Errorf("the %s of the deleted note: %s, want 202 (ignored)", tc.later, later)
				}
				if h.stored(id) {
					t.Errorf("the %s brought the deleted note %s back (content %q)", tc.later, id, h.content(id))
				}
				if n := len(h.postsBy(s.token, booster.uri)); n != 0 {
					t.Errorf("the booster has %d posts or boosts listed, want none", n)
				}
			})
		})
	}
}

// An actor deletes itself: what it left here goes (its posts, its boost of
// a note, its Like and Announce of alice's post, its follows both ways),
// and its key is refused afterwards, whatever its server still serves,
// except for the same Delete again.
func TestDeletedActorLeavesNothingAndIsRefusedAfterwards(t *testing.T) {
	t.Parallel()
	eachStore(t, "Delete{Person} removes the actor's content and refuses its key", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		p := s.peer()
		x, y := p.actor("x"), p.actor("y")
		localFollows(t, h, s.token, "alice", x)
		followLocal(t, x, s.alice)

		// x's note, x's boost of y's note, x's Like and Announce of alice's post.
		noteID, note := s.noteToAlice(x, "x was here")
		mustAccept(t, "x's Create", x.send(inboxOf(s.alice), note))
		boosted := y.noteURI()
		p.put(strings.TrimPrefix(boosted, p.base), http.StatusOK, "application/activity+json", noteObject(y, boosted, "y's note", []string{asPublic}, nil))
		ann := activity("Announce", x, boosted)
		ann["to"] = []string{asPublic}
		mustAccept(t, "x's Announce of y's note", x.send(inboxOf(s.alice), ann))
		status, out := h.call(http.MethodPost, "/api/v1/posts", s.token, map[string]any{"as": "alice", "content": "alice's post"})
		if status != http.StatusCreated {
			t.Fatalf("alice's post: %d %v", status, out)
		}
		alicePost, _ := out["uri"].(string)
		mustAccept(t, "x's Like", x.send(inboxOf(s.alice), activity("Like", x, alicePost)))
		annLocal := activity("Announce", x, alicePost)
		annLocal["to"] = []string{asPublic}
		mustAccept(t, "x's Announce of alice's post", x.send(inboxOf(s.alice), annLocal))
		if !h.stored(noteID) || len(h.postsBy(s.token, x.uri)) < 2 || reactions(t, h, alicePost) != 2 {
			t.Fatalf("x's content before its Delete: note stored %v, listed %v, reactions %d", h.stored(noteID), h.postsBy(s.token, x.uri), reactions(t, h, alicePost))
		}

		deleteSelf := activity("Delete", x, x.uri)
		deleteSelf["to"] = []string{asPublic}
		mustAccept(t, "x's Delete of itself", x.send(inboxOf(s.alice), deleteSelf))

		if h.stored(noteID) {
			t.Errorf("x's note is still stored")
		}
		if listed := h.postsBy(s.token, x.uri); len(listed) != 0 {
			t.Errorf("x's posts and boosts are still listed: %v", listed)
		}
		if n := reactions(t, h, alicePost); n != 0 {
			t.Errorf("x's Like and Announce of alice's post still count: %d", n)
		}
		if st := h.followState(x.uri, s.alice); st != "" {
			t.Errorf("x still follows alice (%s)", st)
		}
		if st := h.followState(s.alice, x.uri); st != "" {
			t.Errorf("alice still follows x (%s)", st)
		}
		// Its server still serves it with its key: a replay, or a server
		// that lies.
		laterID, later := s.noteToAlice(x, "back from the dead")
		if ans := x.send(inboxOf(s.alice), later); ans.status != http.StatusUnauthorized {
			t.Errorf("x's Create after its Delete: %s, want 401", ans)
		}
		if h.stored(laterID) {
			t.Errorf("x's Create after its Delete was stored")
		}
		if ans := x.send(inboxOf(s.alice), activity("Follow", x, s.alice)); ans.status != http.StatusUnauthorized {
			t.Errorf("x's Follow after its Delete: %s, want 401", ans)
		}
		if st := h.followState(x.uri, s.alice); st != "" {
			t.Errorf("x follows alice again after its Delete (%s)", st)
		}
		if ans := x.send(inboxOf(s.alice), deleteSelf); ans.status != http.StatusAccepted {
			t.Errorf("x's Delete of itself again: %s, want 202", ans)
		}
	})
}

// reactions counts the Likes and Announces of a local post, as the client
// API shows them.
func reactions(t *testing.T, h *herald, postURI string) int {
	t.Helper()
	c, err := h.srv.Stores().Posts.CountReactions(context.Background(), postURI)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}
