package contract

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// ConversationStore runs the contract of ports.ConversationStore (part
// of every NotificationStore, which runs it).
func ConversationStore(t *testing.T, newStore func(t *testing.T) ports.ConversationStore, opts ...Option) {
	const (
		vera = "https://herald.example/users/vera"
		walt = "https://herald.example/users/walt"
		bob  = "https://r.example/users/bob"
	)
	// conv is vera's conversation "k<i>" whose last status is "s<last>"
	// (two digits: they sort as numbers), unread.
	conv := func(i, last int) domain.Conversation {
		return domain.Conversation{ID: fmt.Sprintf("k%d", i), Persona: vera, Participants: []string{bob, vera},
			LastStatusID: fmt.Sprintf("s%02d", last), Unread: true}
	}
	add := func(t *testing.T, s ports.ConversationStore, cs ...domain.Conversation) {
		t.Helper()
		for _, c := range cs {
			mustNil(t, s.AddToConversation(ctx(t), c), "add to "+c.ID)
		}
	}
	ids := func(t *testing.T, s ports.ConversationStore, persona string, p domain.ConversationPage) []string {
		t.Helper()
		if p.Limit == 0 {
			p.Limit = 20
		}
		got, err := s.Conversations(ctx(t), persona, p)
		mustNil(t, err, "conversations")
		out := make([]string, 0, len(got))
		for _, c := range got {
			out = append(out, c.ID+"@"+c.LastStatusID)
		}
		return out
	}
	want := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	runCases(t, newStore, opts, []testCase[ports.ConversationStore]{
		{"AddGetRoundTrip", func(t *testing.T, s ports.ConversationStore) {
			c := conv(1, 1)
			add(t, s, c)
			got, err := s.Conversation(ctx(t), vera, "k1")
			mustNil(t, err, "get")
			if got.ID != c.ID || got.Persona != vera || !slices.Equal(got.Participants, c.Participants) || got.LastStatusID != "s01" || !got.Unread {
				t.Fatalf("got %+v, want %+v", got, c)
			}
			if _, err := s.Conversation(ctx(t), walt, "k1"); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("walt's k1: %v, want not found", err)
			}
		}},
		{"InvalidRefused", func(t *testing.T, s ports.ConversationStore) {
			for _, c := range []domain.Conversation{{Persona: vera, LastStatusID: "s01"}, {ID: "k1", LastStatusID: "s01"}, {ID: "k1", Persona: vera}} {
				if err := s.AddToConversation(ctx(t), c); !errors.Is(err, domain.ErrInvalidInput) {
					t.Fatalf("%+v: %v, want invalid input", c, err)
				}
			}
			if _, err := s.Conversations(ctx(t), vera, domain.ConversationPage{}); !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("limit 0: %v, want invalid input", err)
			}
		}},
		{"NewerPostMovesItOlderDoesNot", func(t *testing.T, s ports.ConversationStore) {
			add(t, s, conv(1, 5))
			own := conv(1, 7)
			own.Unread = false
			add(t, s, own)
			older := conv(1, 6)
			add(t, s, older)
			got, err := s.Conversation(ctx(t), vera, "k1")
			mustNil(t, err, "get")
			if got.LastStatusID != "s07" || got.Unread {
				t.Fatalf("got %+v, want s07 read", got)
			}
		}},
		{"NewestLastStatusFirstWithPaging", func(t *testing.T, s ports.ConversationStore) {
			add(t, s, conv(1, 1), conv(2, 2), conv(3, 3), conv(4, 4))
			add(t, s, conv(1, 5)) // k1 has the newest post now
			w := conv(9, 9)
			w.Persona, w.Participants = walt, []string{bob, walt}
			add(t, s, w)
			want(t, ids(t, s, vera, domain.ConversationPage{}), "k1@s05", "k4@s04", "k3@s03", "k2@s02")
			want(t, ids(t, s, vera, domain.ConversationPage{Limit: 2}), "k1@s05", "k4@s04")
			want(t, ids(t, s, vera, domain.ConversationPage{MaxID: "s04", Limit: 2}), "k3@s03", "k2@s02")
			want(t, ids(t, s, vera, domain.ConversationPage{SinceID: "s02", Limit: 2}), "k1@s05", "k4@s04")
			want(t, ids(t, s, vera, domain.ConversationPage{MinID: "s02", Limit: 2}), "k4@s04", "k3@s03")
			want(t, ids(t, s, walt, domain.ConversationPage{}), "k9@s09")
		}},
		{"MarkReadAndHideOnlyOwn", func(t *testing.T, s ports.ConversationStore) {
			add(t, s, conv(1, 1), conv(2, 2))
			if err := s.MarkConversationRead(ctx(t), walt, "k1"); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("walt marks vera's: %v", err)
			}
			if err := s.HideConversation(ctx(t), walt, "k1"); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("walt hides vera's: %v", err)
			}
			mustNil(t, s.MarkConversationRead(ctx(t), vera, "k1"), "mark read")
			if got, err := s.Conversation(ctx(t), vera, "k1"); err != nil || got.Unread {
				t.Fatalf("after read: %+v %v", got, err)
			}
			mustNil(t, s.HideConversation(ctx(t), vera, "k2"), "hide")
			want(t, ids(t, s, vera, domain.ConversationPage{}), "k1@s01")
			for _, op := range []func() error{
				func() error { _, err := s.Conversation(ctx(t), vera, "k2"); return err },
				func() error { return s.MarkConversationRead(ctx(t), vera, "k2") },
				func() error { return s.HideConversation(ctx(t), vera, "k2") },
			} {
				if err := op(); !errors.Is(err, domain.ErrNotFound) {
					t.Fatalf("hidden k2: %v, want not found", err)
				}
			}
			add(t, s, conv(2, 3)) // a new post shows it again, unread
			want(t, ids(t, s, vera, domain.ConversationPage{}), "k2@s03", "k1@s01")
			if got, err := s.Conversation(ctx(t), vera, "k2"); err != nil || !got.Unread {
				t.Fatalf("k2 again: %+v %v", got, err)
			}
		}},
	})
}
