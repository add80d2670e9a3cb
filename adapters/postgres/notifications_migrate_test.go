package postgres_test

import (
	"errors"
	"testing"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
)

// Migration 029 keeps the notifications, one per recipient and key, read
// along notifications_recipient_idx; its down step drops them (an older
// build has none), and up again starts empty.
func TestMigration029Notifications(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	store := postgres.NewNotificationStore(p)
	n, err := domain.NewNotification("01", "https://herald.example/users/vera", domain.NotifyFollow, "https://r.example/users/bob", "", "https://r.example/follows/1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := store.AddNotification(ctx, n); err != nil || !created {
		t.Fatalf("add after 029: %v %v", created, err)
	}
	for _, ix := range []string{"notifications_recipient_idx", "notifications_actor_idx", "notifications_recipient_key_key"} {
		if c := count(t, p, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1`, ix); c != 1 {
			t.Fatalf("no %s after 029", ix)
		}
	}

	downTo(t, p, 28)
	if c := count(t, p, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'notifications'`); c != 0 {
		t.Fatal("029 down left the notifications table")
	}
	mustMigrate(t, p)
	got, err := store.Notifications(ctx, n.Recipient, domain.NotificationFilter{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 029 down and up: %v %v", got, err)
	}
	if _, err := store.Notification(ctx, n.Recipient, "01"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("notification after 029 down and up: %v", err)
	}
}
