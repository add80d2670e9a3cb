package sqlite_test

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// Migration 021 keeps a persona's bio (note); a persona stored before it
// has none. Its down step drops the column (an older build keeps no bio)
// and leaves the display name, and up again starts every bio empty.
func TestMigration021PersonaBio(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	actors := sqlite.NewAccountStore(db)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" {
		t.Fatalf("a new persona's bio: %q %v", a.Note, err)
	}
	if err := actors.SetAvatarProfile(ctx, "a1", "Vera", "hello"); err != nil {
		t.Fatal(err)
	}

	downTo(t, db, 20)
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM pragma_table_info('avatars') WHERE name = 'note'`); err != nil || len(n) != 0 {
		t.Fatalf("left after 021 down: %v %v", n, err)
	}
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT display_name FROM avatars WHERE id = 'a1'`); err != nil || len(n) != 1 || n[0] != "Vera" {
		t.Fatalf("display name after 021 down: %v %v", n, err)
	}
	mustMigrate(t, db)
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" || a.DisplayName != "Vera" {
		t.Fatalf("vera after 021 down and up: %q %q %v", a.DisplayName, a.Note, err)
	}
}
