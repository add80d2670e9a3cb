package sqlite_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// Migration 013 marks deleted personas: the deletions still to finish are
// read along avatars_retired_idx, never by reading every avatar and its
// key. Its down step drops the marks: a persona still being deleted comes
// back live (an older build knows no deletion).
func TestMigration013DeletedPersonas(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	actors, names := sqlite.NewAccountStore(db), sqlite.NewNameRegistry(db)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	rn, _ := domain.NewReservedName("vera", domain.NameKindPersona, "a1", base)
	if err := names.Reserve(ctx, rn); err != nil {
		t.Fatal(err)
	}
	if err := actors.RetireAvatar(ctx, "a1", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := names.MarkDeleted(ctx, "vera", "a1", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	plan, err := sqlite.Plan(ctx, db, `SELECT id FROM avatars WHERE deleted_at IS NOT NULL AND id > ? ORDER BY id LIMIT ?`, "", 100)
	if all := strings.Join(plan, "\n"); err != nil || !strings.Contains(all, "avatars_retired_idx") || strings.Contains(all, "TEMP B-TREE") {
		t.Fatalf("RetiredAvatars' plan:\n%s (%v)", all, err)
	}

	downTo(t, db, 12)
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM pragma_table_info('avatars') WHERE name = 'deleted_at'
UNION ALL SELECT name FROM pragma_table_info('reserved_names') WHERE name = 'deleted_at'
UNION ALL SELECT name FROM sqlite_master WHERE name = 'avatars_retired_idx'`); err != nil || len(n) != 0 {
		t.Fatalf("left after 013 down: %v %v", n, err)
	}
	mustMigrate(t, db)
	if a, err := actors.AvatarByName(ctx, "vera"); err != nil || !a.DeletedAt.IsZero() {
		t.Fatalf("vera after 013 down and up: %+v %v", a, err)
	}
	if r, err := names.Get(ctx, "vera"); err != nil || r.Deleted() {
		t.Fatalf("vera's name after 013 down and up: %+v %v", r, err)
	}
}
