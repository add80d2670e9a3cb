package sqlite_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
)

// Migration 020 keeps the notifications, one per recipient and key; a
// persona's page is read along notifications_recipient_idx, never by
// sorting. Its down step drops them (an older build has none), and up
// again starts empty.
func TestMigration020Notifications(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	store := sqlite.NewNotificationStore(db)
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	n, err := domain.NewNotification("01", "https://herald.example/users/vera", domain.NotifyFollow, "https://r.example/users/bob", "", "https://r.example/follows/1", at)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := store.AddNotification(ctx, n); err != nil || !created {
		t.Fatalf("add after 020: %v %v", created, err)
	}
	plan, err := sqlite.Plan(ctx, db, `SELECT id FROM notifications WHERE recipient = ? AND id < ? AND kind IN (?) ORDER BY id DESC LIMIT ?`, n.Recipient, "99", "follow", 20)
	if all := strings.Join(plan, "\n"); err != nil || !strings.Contains(all, "notifications_recipient_idx") || strings.Contains(all, "TEMP B-TREE") {
		t.Fatalf("Notifications' plan:\n%s (%v)", all, err)
	}

	downTo(t, db, 19)
	if left, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE name LIKE 'notifications%'`); err != nil || len(left) != 0 {
		t.Fatalf("left after 020 down: %v %v", left, err)
	}
	mustMigrate(t, db)
	got, err := store.Notifications(ctx, n.Recipient, domain.NotificationFilter{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("after 020 down and up: %v %v", got, err)
	}
	if _, err := store.Notification(ctx, n.Recipient, "01"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("notification after 020 down and up: %v", err)
	}
}
