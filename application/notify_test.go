package application_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// listed is what a listing read, each item formatted, for wantNotes; the
// listing's error fails the test.
func listed[T any](t *testing.T, items []T, err error, format func(T) string) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, format(it))
	}
	return out
}

// notesOf lists recipient's notifications as "kind actor post", newest first.
func (b *fedBundle) notesOf(recipient string) []string {
	b.t.Helper()
	ns, err := b.notes.Notifications(b.t.Context(), recipient, domain.NotificationFilter{Limit: 100})
	return listed(b.t, ns, err, func(n domain.Notification) string {
		return fmt.Sprintf("%s %s %s", n.Kind, n.ActorURI, n.PostURI)
	})
}

func wantNotes(t *testing.T, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("notifications\n%q\nwant\n%q", got, want)
	}
}

// vera is the second persona of the bundle's user, made by b.persona.
const vera = local + "/users/vera"

// inboxed is an activity an actor delivers to the shared inbox.
type inboxed struct{ actor, body string }

// deliverAll delivers each activity in turn; every one must be accepted.
func (b *fedBundle) deliverAll(acts ...inboxed) {
	b.t.Helper()
	for i, act := range acts {
		if _, err := b.deliver("", act.actor, act.body); err != nil {
			b.t.Fatalf("activity %d: %v", i, err)
		}
	}
}

// Which activities notify whom: each kind is recorded once where the
// inbox accepts its activity (a redelivered activity, or a Like undone and
// sent again, records nothing new), and a persona hears nothing from an
// actor it blocks or mutes, nor from a silenced domain's actors it does
// not follow but for their follow requests.
func TestNotificationsOfDeliveries(t *testing.T) {
	t.Parallel()
	const (
		bobsNote   = "https://remote.example/users/bob/statuses/1"
		carolsNote = "https://remote.example/users/carol/statuses/2"
	)
	for _, tc := range []struct {
		name string
		// before sets the scene once alice has published post.
		before func(b *fedBundle)
		acts   func(post string) []inboxed
		want   func(post string) map[string][]string // persona: its notifications, newest first
		check  func(t *testing.T, b *fedBundle, post string)
	}{
		{
			name: "each kind once",
			acts: func(post string) []inboxed {
				return []inboxed{
					{bob, mentionNote(bobsNote, bob, alice)},
					{bob, mentionNote(bobsNote, bob, alice)}, // redelivered
					{bob, follow("https://remote.example/f/1", bob, alice)},
					{bob, follow("https://remote.example/f/1", bob, alice)},
					{carol, like("https://remote.example/l/1", carol, post)},
					{carol, like("https://remote.example/l/1", carol, post)},
					{carol, `{"type":"Undo","actor":"` + carol + `","object":` + like("https://remote.example/l/1", carol, post) + `}`},
					{carol, like("https://remote.example/l/2", carol, post)}, // liked again
					{carol, announce("https://remote.example/a/1", carol, post)},
					{carol, announce("https://remote.example/a/1", carol, post)},
				}
			},
			want: func(post string) map[string][]string {
				return map[string][]string{alice: {"reblog " + carol + " " + post, "favourite " + carol + " " + post, "follow " + bob + " ", "mention " + bob + " " + bobsNote}}
			},
		},
		{
			name:   "a locked persona's follows are requests",
			before: func(b *fedBundle) { b.lock("alice", domain.NameKindPersona, true) },
			acts: func(string) []inboxed {
				return []inboxed{{carol, follow("https://remote.example/f/2", carol, alice)}, {carol, follow("https://remote.example/f/2", carol, alice)}}
			},
			want: func(string) map[string][]string { return map[string][]string{alice: {"follow_request " + carol + " "}} },
		},
		{
			name: "not from a blocked or muted actor",
			before: func(b *fedBundle) {
				b.persona("vera")
				for _, bl := range []struct {
					target string
					kind   domain.BlockKind
				}{{bob, domain.BlockKindBlock}, {carol, domain.BlockKindMute}} {
					blk, err := domain.NewActorBlock(alice, bl.target, bl.kind, "", b.clock.Now())
					if err != nil {
						b.t.Fatal(err)
					}
					if _, err := b.blocks.AddBlock(t.Context(), blk); err != nil {
						b.t.Fatal(err)
					}
				}
			},
			acts: func(post string) []inboxed {
				return []inboxed{
					{bob, mentionNote(bobsNote, bob, alice, vera)},
					{carol, mentionNote(carolsNote, carol, alice, vera)},
					{carol, like("https://remote.example/l/1", carol, post)},
					{carol, follow("https://remote.example/f/1", carol, alice)},
				}
			},
			// Another persona mentioned in the same notes hears them.
			want: func(string) map[string][]string {
				return map[string][]string{alice: nil, vera: {"mention " + carol + " " + carolsNote, "mention " + bob + " " + bobsNote}}
			},
			check: func(t *testing.T, b *fedBundle, post string) {
				if c, err := b.fed.Collections.Reactions(t.Context(), post); err != nil || c[domain.ReactionLike] != 1 {
					t.Fatalf("the muted actor's like was not recorded: %v %v", c, err)
				}
			},
		},
		{
			name: "from a silenced domain only what alice follows, and follow requests",
			before: func(b *fedBundle) {
				b.block("remote.example", domain.SeveritySilence)
				b.accepted(alice, bob)
			},
			acts: func(post string) []inboxed {
				return []inboxed{
					{bob, mentionNote(bobsNote, bob, alice)},
					{carol, like("https://remote.example/l/1", carol, post)},
					{carol, follow("https://remote.example/f/1", carol, alice)},
				}
			},
			want: func(string) map[string][]string {
				return map[string][]string{alice: {"follow_request " + carol + " ", "mention " + bob + " " + bobsNote}}
			},
		},
		{
			// A key longer than the stores' indexes take well is kept as
			// its hash: the notification is recorded, once.
			name: "an activity id of 1500 characters",
			acts: func(string) []inboxed {
				id := "https://remote.example/f/" + strings.Repeat("x", 1500)
				return []inboxed{{bob, follow(id, bob, alice)}, {bob, follow(id, bob, alice)}}
			},
			want: func(string) map[string][]string { return map[string][]string{alice: {"follow " + bob + " "}} },
			check: func(t *testing.T, b *fedBundle, _ string) {
				ns, err := b.notes.Notifications(t.Context(), alice, domain.NotificationFilter{Limit: 10})
				if err != nil || len(ns) != 1 || len(ns[0].Key) > 100 {
					t.Fatalf("%+v %v", ns, err)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "hello"})
			if tc.before != nil {
				tc.before(b)
			}
			b.deliverAll(tc.acts(res.ObjectURI)...)
			for persona, want := range tc.want(res.ObjectURI) {
				wantNotes(t, b.notesOf(persona), want...)
			}
			if tc.check != nil {
				tc.check(t, b, res.ObjectURI)
			}
		})
	}
}

// A poll that ends tells its author and its local voters, once: ours when
// it closes, a remote one when its author's Update closes it.
func TestNotificationsOfPollsThatEnded(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.persona("vera")
	uri := publishPoll(t, b, false)
	if _, err := b.fed.Vote.Handle(ctx, application.Vote{UserID: b.userID, As: "vera", Poll: uri, Indexes: []int{0}}); err != nil {
		t.Fatal(err)
	}
	mustDeliver(t, b, bob, vote(bob, uri, "coffee"))
	if _, err := b.fed.Polls.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	wantNotes(t, b.notesOf(alice)) // not ended yet
	b.clock.Advance(2 * time.Hour)
	for range 2 {
		if _, err := b.fed.Polls.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wantNotes(t, b.notesOf(alice), "poll "+alice+" "+uri)
	wantNotes(t, b.notesOf(vera), "poll "+alice+" "+uri)

	// vera votes in bob's poll; bob closes it.
	b.accepted(vera, bob)
	const q = "https://remote.example/users/bob/statuses/q"
	mustDeliver(t, b, bob, question(q, `[{"type":"Note","name":"tea"},{"type":"Note","name":"coffee"}]`, ""))
	if _, err := b.fed.Vote.Handle(ctx, application.Vote{UserID: b.userID, As: "vera", Poll: q, Indexes: []int{1}}); err != nil {
		t.Fatal(err)
	}
	for i, extra := range []string{`,"votersCount":1`, `,"votersCount":2,"closed":"2026-06-02T12:00:00Z"`, `,"votersCount":3,"closed":"2026-06-02T12:00:00Z"`} {
		act := question(q, `[{"type":"Note","name":"tea"},{"type":"Note","name":"coffee","replies":{"totalItems":`+fmt.Sprint(i+1)+`}}]`, extra)
		act = fmt.Sprintf(`{"id":"%s/update/%d","type":"Update"%s`, q, i, act[len(`{"id":"`+q+`/activity","type":"Create"`):])
		if _, err := b.deliver("", bob, act); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	wantNotes(t, b.notesOf(vera), "poll "+bob+" "+q, "poll "+alice+" "+uri)
	wantNotes(t, b.notesOf(alice), "poll "+alice+" "+uri) // alice did not vote in it
}

// A remote actor's Delete of itself takes what it was notified as; a
// deleted persona's notifications go with it.
func TestNotificationsGoWithTheirActorAndPersona(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.persona("vera")
	b.deliverAll(
		inboxed{bob, mentionNote("https://remote.example/users/bob/statuses/1", bob, alice, vera)},
		inboxed{carol, mentionNote("https://remote.example/users/carol/statuses/2", carol, alice, vera)})
	mustDeliver(t, b, bob, `{"id":"`+bob+`#delete","type":"Delete","actor":"`+bob+`","object":"`+bob+`"}`)
	wantNotes(t, b.notesOf(alice), "mention "+carol+" https://remote.example/users/carol/statuses/2")
	wantNotes(t, b.notesOf(vera), "mention "+carol+" https://remote.example/users/carol/statuses/2")

	if _, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{UserID: b.userID, Name: "vera"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.PersonaDeletions.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	wantNotes(t, b.notesOf(vera))
	wantNotes(t, b.notesOf(alice), "mention "+carol+" https://remote.example/users/carol/statuses/2")
}

// An edit of a post a persona boosted tells it, once per edit; a persona
// that follows the author without boosting hears nothing.
func TestNotificationsOfEditsOfBoostedPosts(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.persona("vera")
	b.accepted(alice, bob)
	b.accepted(vera, bob)
	const obj = "https://remote.example/users/bob/statuses/e1"
	mustDeliver(t, b, bob, note(obj, bob, "<p>first</p>", application.ASPublic))
	if _, err := b.fed.Boost.Handle(ctx, application.Boost{UserID: b.userID, As: "alice", Object: obj}); err != nil {
		t.Fatal(err)
	}
	edit := func(n int) {
		t.Helper()
		act := fmt.Sprintf(`{"id":"%s#edit-%d","type":"Update","actor":%q,"to":[%q],"object":{"id":%q,"type":"Note","attributedTo":%q,"content":"<p>edit %d</p>","to":[%q],"published":"2026-06-01T10:00:00Z","updated":"2026-06-01T1%d:00:00Z"}}`,
			obj, n, bob, application.ASPublic, obj, bob, n, application.ASPublic, n)
		mustDeliver(t, b, bob, act)
	}
	edit(1)
	edit(1) // redelivered
	wantNotes(t, b.notesOf(alice), "update "+bob+" "+obj)
	edit(2)
	wantNotes(t, b.notesOf(alice), "update "+bob+" "+obj, "update "+bob+" "+obj)
	wantNotes(t, b.notesOf(vera))
}
