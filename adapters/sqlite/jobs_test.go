package sqlite_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func newJob(t *testing.T, id, host string, runAt time.Time) domain.Job {
	t.Helper()
	j, err := domain.NewJob(id, "https://local.example/act/"+id, "https://"+host+"/inbox", "actor-1",
		"https://local.example/users/alice#main-key", []byte(`{"id":"`+id+`"}`), runAt)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// The lease is a search of the queue index that stops at the first due row
// of a host not skipped: no scan of the table and no sort, at any queue
// size (the cost against queue size is in docs/benchmarks.md).
func TestLeasePlanUsesQueueIndex(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	// 5,000 jobs: 10% queued in groups sharing one run_at (as a fan-out
	// makes them), the rest finished.
	mustExec(t, db, `
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state, run_at, created_at, finished_at)
SELECT printf('j%08d', n), 'k' || n, 'a' || n, 'https://h' || (n % 500) || '.example/inbox', 'h' || (n % 500) || '.example',
	's', 'k', x'7b7d', CASE WHEN n % 10 = 0 THEN 'queued' ELSE 'succeeded' END,
	?1 + (n / 500) * 1000000000, ?1, CASE WHEN n % 10 <> 0 THEN ?1 END
FROM g`, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	plan, err := sqlite.Plan(ctx, db, sqlite.LeaseSQL, "w", "tok", now.Add(time.Minute).UnixNano(), now.UnixNano(), `["h0.example","h10.example"]`)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(plan, "\n")
	if !strings.Contains(all, "SEARCH jobs USING INDEX jobs_state_run_at_idx (state=? AND run_at<?)") {
		t.Fatalf("lease plan does not search jobs_state_run_at_idx:\n%s", all)
	}
	for _, bad := range []string{"SCAN jobs", "TEMP B-TREE"} {
		if strings.Contains(all, bad) {
			t.Errorf("lease plan has %q:\n%s", bad, all)
		}
	}
	// And it does lease the oldest due job of a host not skipped.
	j, err := sqlite.NewJobStore(db).Lease(ctx, ports.LeaseRequest{Owner: "w", Token: "tok", Now: now, Until: now.Add(time.Minute),
		SkipHosts: []string{"h0.example", "h10.example"}})
	if err != nil || j.ID != "j00000020" {
		t.Fatalf("leased %s, %v; want j00000020", j.ID, err)
	}
}

// Two handles on one file (the server's, and an operator's command or
// another process's) lease from one queue: SQLite's write lock makes each
// lease atomic across connections, not only within the writer of one.
func TestLeaseFromTwoConnections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	owner := open(t, dir)
	mustMigrate(t, owner)
	other, err := sqlite.OpenShared(testCtx(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	stores := []*sqlite.JobStore{sqlite.NewJobStore(owner), sqlite.NewJobStore(other)}
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	const jobs, workers = 200, 16
	batch := make([]domain.Job, jobs)
	for i := range batch {
		batch[i] = newJob(t, fmt.Sprintf("j%04d", i), fmt.Sprintf("h%02d.example", i%20), base)
	}
	if n, err := stores[0].Enqueue(testCtx(t), batch); err != nil || n != jobs {
		t.Fatalf("enqueue: %d, %v", n, err)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			for i := 0; ; i++ {
				tok := fmt.Sprintf("w%02d-%04d", w, i)
				j, err := s.Lease(testCtx(t), ports.LeaseRequest{Owner: "w", Token: tok, Now: base, Until: base.Add(time.Minute)})
				if errors.Is(err, domain.ErrNoJob) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				prev, dup := seen[j.ID]
				seen[j.ID] = tok
				mu.Unlock()
				if dup {
					errs <- fmt.Errorf("job %s leased twice: %s and %s", j.ID, prev, tok)
					return
				}
				if err := stores[(w+1)%2].Complete(testCtx(t), j.ID, tok, base); err != nil {
					errs <- fmt.Errorf("complete %s through the other handle: %w", j.ID, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c, err := stores[1].Counts(testCtx(t))
	if err != nil || c[domain.JobSucceeded] != jobs || len(seen) != jobs {
		t.Fatalf("succeeded %d of %d (leased %d distinct): %v", c[domain.JobSucceeded], jobs, len(seen), err)
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
	if _, err := s.Get(ctx, "j2"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("part of a failed batch was kept: %v", err)
	}
	bad := newJob(t, "j3", "c.example", base)
	bad.State = "lost"
	if _, err := s.Enqueue(ctx, []domain.Job{bad}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("invalid job: %v", err)
	}
}
