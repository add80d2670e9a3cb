package sqlite_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/internal/storetest"
	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// newJob is storetest's job, as the PostgreSQL tests enqueue it too.
func newJob(t *testing.T, id, host string, runAt time.Time) domain.Job {
	t.Helper()
	return storetest.NewJob(t, id, host, runAt)
}

// The lease reads the ready hosts' index, then each host's own queued jobs:
// no scan of the table and no sort of the queue, whatever the backlog of
// hosts at their cap (the cost against the backlog is in
// docs/benchmarks.md).
func TestLeasePlanReadsReadyHosts(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	// 5,000 jobs on 500 hosts: 10% queued in groups sharing one run_at (as
	// a fan-out makes them), the rest finished. The insert's triggers
	// (migration 017) set each host's ready_at.
	mustExec(t, db, `
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, run_at, created_at, finished_at)
SELECT printf('j%08d', n), 'k' || n, 'a' || n, 'https://h' || (n % 500) || '.example/inbox', 'h' || (n % 500) || '.example',
	's', 'k', '', CASE WHEN n % 10 = 0 THEN 'queued' ELSE 'succeeded' END,
	?1 + (n / 500) * 1000000000, ?1, CASE WHEN n % 10 <> 0 THEN ?1 END
FROM g`, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	plan, err := sqlite.Plan(ctx, db, sqlite.LeaseSQL, "w", "tok", now.Add(time.Minute).UnixNano(), now.UnixNano(), `["h0.example","h10.example"]`,
		2, 8, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(plan, "\n")
	t.Logf("lease plan:\n%s", all)
	// The ready hosts are read in order from their index, with no sort.
	ready := subtree(plan, "CO-ROUTINE ready")
	if !strings.Contains(ready, "SEARCH host_slots USING INDEX host_slots_ready_idx (ready_at<?)") || strings.Contains(ready, "TEMP B-TREE") {
		t.Fatalf("the ready hosts are not read in order from host_slots_ready_idx:\n%s", all)
	}
	// Each host's jobs are read from its own range of the host index.
	if !strings.Contains(all, "SEARCH jobs USING COVERING INDEX jobs_host_state_run_at_idx (host=? AND state=? AND run_at<?)") {
		t.Fatalf("a ready host's jobs are not read from jobs_host_state_run_at_idx:\n%s", all)
	}
	// The chosen jobs are updated by rowid, not found again by a scan.
	if !strings.Contains(all, "SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)") || strings.Contains(all, "SCAN jobs") {
		t.Errorf("lease does not update by rowid, or scans jobs:\n%s", all)
	}
	// And it does lease oldest due jobs (the first 500 are due at one
	// instant on every host) of hosts not skipped.
	got, err := sqlite.NewJobStore(db).LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "tok", Now: now, Until: now.Add(time.Minute),
		Limit: 2, PerHost: 2, SkipHosts: []string{"h0.example", "h10.example"}})
	if err != nil || len(got) != 2 {
		t.Fatalf("leased %v, %v; want 2", got, err)
	}
	for _, j := range got {
		if j.Host == "h0.example" || j.Host == "h10.example" || !j.RunAt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("leased %s of %s due %v; want one of the oldest, of a host not skipped", j.ID, j.Host, j.RunAt)
		}
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

// A batch with another job's id inserts nothing; an invalid job is refused
// before anything is written.
func TestEnqueueRefusesTakenIDAndInvalidJobs(t *testing.T) {
	t.Parallel()
	s := sqlite.NewJobStore(migrated(t))
	ctx := testCtx(t)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	if _, err := s.Enqueue(ctx, []domain.Job{newJob(t, "j1", "a.example", base)}); err != nil {
		t.Fatal(err)
	}
	clash := newJob(t, "j1", "b.example", base)
	fresh := newJob(t, "j2", "c.example", base)
	if _, err := s.Enqueue(ctx, []domain.Job{fresh, clash}); !errors.Is(err, domain.ErrAlreadyExists) {
		t.Fatalf("id clash: %v", err)
	}
	if _, err := s.Get(ctx, contract.JobID("j2")); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("part of a failed batch was kept: %v", err)
	}
}

// subtree is the lines of plan under (and including) the first line whose
// text is node, by indentation.
func subtree(plan []string, node string) string {
	var out []string
	depth := -1
	for _, line := range plan {
		d := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case depth < 0 && strings.TrimSpace(line) == node:
			depth = d
			out = append(out, line)
		case depth >= 0 && d > depth:
			out = append(out, line)
		case depth >= 0:
			return strings.Join(out, "\n")
		}
	}
	return strings.Join(out, "\n")
}
