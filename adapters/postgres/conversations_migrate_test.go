package postgres_test

import (
	"errors"
	"testing"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
)

// Migration 031 keeps each persona's conversations, one per (persona,
// thread), read along conversations_persona_last_idx; its down step
// drops them, and up again starts empty.
func TestMigration031Conversations(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	store := postgres.NewNotificationStore(p)
	c := domain.Conversation{ID: "k1", Persona: "https://herald.example/users/vera", LastStatusID: "01", Unread: true,
		Participants: []string{"https://herald.example/users/vera", "https://r.example/users/bob"}}
	if err := store.AddToConversation(ctx, c); err != nil {
		t.Fatalf("add after 031: %v", err)
	}
	if n := count(t, p, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'conversations_persona_last_idx'`); n != 1 {
		t.Fatal("no conversations_persona_last_idx after 031")
	}

	downTo(t, p, 29)
	if n := count(t, p, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'conversations'`); n != 0 {
		t.Fatal("031 down left the conversations table")
	}
	mustMigrate(t, p)
	got, err := store.Conversations(ctx, c.Persona, domain.ConversationPage{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 031 down and up: %v %v", got, err)
	}
	if _, err := store.Conversation(ctx, c.Persona, c.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("conversation after 031 down and up: %v", err)
	}
}
