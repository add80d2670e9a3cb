package postgres_test

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// Migration 022 marks deleted personas (avatars_retired_idx lists the
// deletions still to finish). Its down step drops the marks and the
// index: a persona still being deleted comes back live (an older build
// knows no deletion).
func TestMigration022DeletedPersonas(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	actors, names := postgres.NewAccountStore(p), postgres.NewNameRegistry(p)
	if err := actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "vera", Keys: contract.Keys, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	rn, _ := domain.NewReservedName("vera", domain.NameKindPersona, "a1", t0)
	if err := names.Reserve(ctx, rn); err != nil {
		t.Fatal(err)
	}
	if err := actors.RetireAvatar(ctx, "a1", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := names.MarkDeleted(ctx, "vera", "a1", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, p, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'avatars_retired_idx'`); n != 1 {
		t.Fatal("no avatars_retired_idx after 022")
	}

	downTo(t, p, 21)
	if n := count(t, p, `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema()
AND table_name IN ('avatars', 'reserved_names') AND column_name = 'deleted_at'`); n != 0 {
		t.Fatalf("022 down left %d deleted_at columns", n)
	}
	if n := count(t, p, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'avatars_retired_idx'`); n != 0 {
		t.Fatal("022 down left avatars_retired_idx")
	}
	mustMigrate(t, p)
	if a, err := actors.AvatarByName(ctx, "vera"); err != nil || !a.DeletedAt.IsZero() {
		t.Fatalf("vera after 022 down and up: %+v %v", a, err)
	}
	if r, err := names.Get(ctx, "vera"); err != nil || r.Deleted() {
		t.Fatalf("vera's name after 022 down and up: %+v %v", r, err)
	}
}
