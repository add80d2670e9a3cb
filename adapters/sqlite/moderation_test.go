package sqlite_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
)

// Migration 012 gives every account a status: the accounts stored before
// are active, a status that is not one is refused, and the sign-ups to
// approve are listed from root_users_status_created_idx. It makes the
// tables of the domain blocks and allows and of the reports. Its down
// step drops the columns (and the index EnsureIndexes made) and the
// tables: an account is then only an account, and active again when 012
// runs once more.
func TestMigration012Moderation(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	downTo(t, db, 11)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	mustExec(t, db, `INSERT INTO root_users (id, user_name, password_hash, created_at) VALUES ('u1', 'old', '$2a$h', ?)`, base.UnixNano())
	mustMigrate(t, db)
	s := sqlite.NewAccountStore(db)
	if u, err := s.UserByID(ctx, "u1"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("an account stored before 012: %+v %v, want active", u, err)
	}
	if us, err := s.UsersByStatus(ctx, domain.UserActive, 0); err != nil || len(us) != 1 || us[0].ID != "u1" {
		t.Fatalf("active accounts after 012: %+v %v", us, err)
	}
	if err := sqlite.Exec(ctx, db, `UPDATE root_users SET status = 'banned' WHERE id = 'u1'`); err == nil {
		t.Fatal("a status that is not one was stored")
	}
	plan, err := sqlite.Plan(ctx, db, `SELECT id, reason FROM root_users WHERE status = ? ORDER BY created_at, id LIMIT ?`, "pending", 10)
	if all := strings.Join(plan, "\n"); err != nil || !strings.Contains(all, "USING INDEX root_users_status_created_idx (status=?)") || strings.Contains(all, "TEMP B-TREE") {
		t.Fatalf("UsersByStatus's plan:\n%s (%v)", all, err)
	}
	p := domain.RootUser{ID: "u2", UserName: "new", PasswordHash: "$2a$h", CreatedAt: base, Status: domain.UserPending, Reason: "hi"}
	if err := s.CreateUser(ctx, p); err != nil {
		t.Fatal(err)
	}
	b, _ := domain.NewDomainBlock("spam.example", domain.SeveritySuspend, "spam", base)
	if err := sqlite.NewModerationStore(db).AddDomainBlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	r, _ := domain.NewReport("r1", "https://r.example/flags/1", "https://r.example/actor", []string{"https://h.example/users/a"}, nil, "", base)
	if _, err := sqlite.NewReportStore(db).AddReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SELECT id FROM reports ORDER BY created_at DESC, id DESC LIMIT 10`,
		`SELECT id FROM reports WHERE resolved_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 10`} {
		plan, err := sqlite.Plan(ctx, db, q)
		if all := strings.Join(plan, "\n"); err != nil || !strings.Contains(all, "reports_created_at_idx") || strings.Contains(all, "TEMP B-TREE") {
			t.Fatalf("the reports' plan:\n%s (%v)", all, err)
		}
	}

	downTo(t, db, 11)
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE name IN ('domain_blocks', 'domain_allows', 'reports')`); err != nil || len(n) != 0 {
		t.Fatalf("tables left after 012 down: %v %v", n, err)
	}
	cols, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM pragma_table_info('root_users') ORDER BY cid`)
	if err != nil || !slices.Equal(cols, []string{"id", "user_name", "password_hash", "created_at"}) {
		t.Fatalf("root_users after 012 down: %v %v", cols, err)
	}
	if n, err := sqlite.QueryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE name = 'root_users_status_created_idx'`); err != nil || len(n) != 0 {
		t.Fatalf("index left after 012 down: %v %v", n, err)
	}
	mustMigrate(t, db)
	if u, err := s.UserByID(ctx, "u2"); err != nil || u.Status != domain.UserActive || u.Reason != "" {
		t.Fatalf("a pending sign-up after 012 down and up: %+v %v (down cannot keep what the older build does not know)", u, err)
	}
	if err := s.SetUserStatus(ctx, "u2", domain.UserPending); err != nil {
		t.Fatal(err)
	}
	if got, err := sqlite.NewModerationStore(db).DomainBlocks(ctx); err != nil || len(got) != 0 {
		t.Fatalf("blocks after 012 down and up: %+v %v", got, err)
	}
}

// EndDomainJobs reads the queued range of the queue's index, not every
// job a week of deliveries left finished.
func TestEndDomainJobsPlanReadsTheQueue(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	plan, err := sqlite.Plan(testCtx(t), db, sqlite.EndDomainJobsSQL, "example.com", "suspended", int64(1))
	all := strings.Join(plan, "\n")
	if err != nil || len(plan) != 1 || !strings.HasPrefix(plan[0], "SEARCH jobs USING INDEX jobs_state_run_at_idx (state=?)") {
		t.Fatalf("EndDomainJobs' plan:\n%s (%v)", all, err)
	}
}
