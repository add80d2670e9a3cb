package postgres_test

import (
	"testing"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// Migration 030 keeps a persona's bio (note); a persona stored before it
// has none. Its down step drops the column (an older build keeps no bio)
// and leaves the display name, and up again starts every bio empty.
func TestMigration030PersonaBio(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	actors := postgres.NewAccountStore(p)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" {
		t.Fatalf("a new persona's bio: %q %v", a.Note, err)
	}
	if err := actors.SetAvatarProfile(ctx, "a1", "Vera", "hello"); err != nil {
		t.Fatal(err)
	}

	downTo(t, p, 29)
	if c := count(t, p, `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'avatars' AND column_name = 'note'`); c != 0 {
		t.Fatal("030 down left avatars.note")
	}
	if c := count(t, p, `SELECT count(*) FROM avatars WHERE id = 'a1' AND display_name = 'Vera'`); c != 1 {
		t.Fatal("030 down lost the display name")
	}
	mustMigrate(t, p)
	if a, err := actors.AvatarByID(ctx, "a1"); err != nil || a.Note != "" || a.DisplayName != "Vera" {
		t.Fatalf("vera after 030 down and up: %q %q %v", a.DisplayName, a.Note, err)
	}
}
