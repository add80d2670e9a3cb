package sqlite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
)

// Migration 022 keeps each persona's conversations, one per (persona,
// thread); a persona's page is read along conversations_persona_last_idx,
// never by sorting. Its down step drops them, and up again starts empty.
func TestMigration022Conversations(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	store := sqlite.NewNotificationStore(db)
	c := domain.Conversation{ID: "k1", Persona: "https://herald.example/users/vera", LastStatusID: "01", Unread: true,
		Participants: []string{"https://herald.example/users/vera", "https://r.example/users/bob"}}
	if err := store.AddToConversation(ctx, c); err != nil {
		t.Fatalf("add after 022: %v", err)
	}
	plan, err := sqlite.Plan(ctx, db, `SELECT id FROM conversations WHERE persona = ? AND last_status_id < ? ORDER BY last_status_id DESC LIMIT ?`, c.Persona, "99", 20)
	if all := strings.Join(plan, "\n"); err != nil || !strings.Contains(all, "conversations_persona_last_idx") || strings.Contains(all, "TEMP B-TREE") {
		t.Fatalf("Conversations' plan:\n%s (%v)", all, err)
	}

	downTo(t, db, 20)
	if left, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE name LIKE 'conversations%'`); err != nil || len(left) != 0 {
		t.Fatalf("left after 022 down: %v %v", left, err)
	}
	mustMigrate(t, db)
	got, err := store.Conversations(ctx, c.Persona, domain.ConversationPage{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 022 down and up: %v %v", got, err)
	}
	if _, err := store.Conversation(ctx, c.Persona, c.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("conversation after 022 down and up: %v", err)
	}
}
