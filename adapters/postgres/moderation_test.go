package postgres_test

import (
	"slices"
	"testing"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
)

// Migration 021 gives every account a status: the accounts stored before
// are active, a status that is not one is refused. It makes the tables of
// the domain blocks and allows and of the reports. Its down step drops the
// columns and the index EnsureIndexes made, and the tables: an account is
// then only an account, and active again when 021 runs once more.
func TestMigration021Moderation(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	downTo(t, p, 20)
	mustExec(t, p, `INSERT INTO root_users (id, user_name, password_hash, created_at) VALUES ('u1', 'old', '$2a$h', $1)`, t0)
	mustMigrate(t, p)
	s := postgres.NewAccountStore(p)
	if u, err := s.UserByID(ctx, "u1"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("an account stored before 021: %+v %v, want active", u, err)
	}
	if us, err := s.UsersByStatus(ctx, domain.UserActive, 0); err != nil || len(us) != 1 || us[0].ID != "u1" {
		t.Fatalf("active accounts after 021: %+v %v", us, err)
	}
	if _, err := p.Exec(ctx, `UPDATE root_users SET status = 'banned' WHERE id = 'u1'`); err == nil {
		t.Fatal("a status that is not one was stored")
	}
	if err := s.CreateUser(ctx, domain.RootUser{ID: "u2", UserName: "new", PasswordHash: "$2a$h", CreatedAt: t0, Status: domain.UserPending, Reason: "hi"}); err != nil {
		t.Fatal(err)
	}
	b, _ := domain.NewDomainBlock("spam.example", domain.SeveritySuspend, "spam", t0)
	if err := postgres.NewModerationStore(p).AddDomainBlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	r, _ := domain.NewReport("r1", "https://r.example/flags/1", "https://r.example/actor", []string{"https://h.example/users/a"}, nil, "", t0)
	if _, err := postgres.NewReportStore(p).AddReport(ctx, r); err != nil {
		t.Fatal(err)
	}

	downTo(t, p, 20)
	if n := count(t, p, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename IN ('domain_blocks', 'domain_allows', 'reports')`); n != 0 {
		t.Fatalf("021 down left %d of its tables", n)
	}
	cols := column(t, p, `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'root_users' ORDER BY ordinal_position`)
	if !slices.Equal(cols, []string{"id", "user_name", "password_hash", "created_at"}) {
		t.Fatalf("root_users after 021 down: %v", cols)
	}
	if n := count(t, p, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'root_users_status_created_idx'`); n != 0 {
		t.Fatal("021 down left root_users_status_created_idx")
	}
	mustMigrate(t, p)
	if u, err := s.UserByID(ctx, "u2"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("a pending sign-up after 021 down and up: %+v %v (down cannot keep what the older build does not know)", u, err)
	}
	if got, err := postgres.NewModerationStore(p).DomainBlocks(ctx); err != nil || len(got) != 0 {
		t.Fatalf("blocks after 021 down and up: %+v %v", got, err)
	}
}

// Migration 023 makes actor_blocks, unique by (actor, target, kind); its
// down step drops it, and an up again makes it empty.
func TestMigration023ActorBlocks(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	s := postgres.NewBlockStore(p)
	b, _ := domain.NewActorBlock("https://h.example/users/a", "https://r.example/u/b", domain.BlockKindBlock, "https://h.example/users/a/activities/1", t0)
	if _, err := s.AddBlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, `INSERT INTO actor_blocks (actor_uri, target_uri, kind, created_at) VALUES ('a', 'b', 'ignore', now())`); err == nil {
		t.Fatal("a kind that is not one was stored")
	}
	downTo(t, p, 22)
	if n := count(t, p, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'actor_blocks'`); n != 0 {
		t.Fatal("023 down left actor_blocks")
	}
	mustMigrate(t, p)
	if got, err := s.Between(ctx, b.ActorURI, b.TargetURI); err != nil || len(got) != 0 {
		t.Fatalf("blocks after 023 down and up: %+v %v", got, err)
	}
}
