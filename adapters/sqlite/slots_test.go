package sqlite_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// slotDrift is the number of hosts whose slot count differs from their
// leased jobs. One statement reads both tables in one snapshot, and the
// triggers of migration 004 move a host's count in the statement that
// moves its job into or out of leased, so the two agree at every commit,
// not only at the end.
const slotDrift = `
SELECT count(*) FROM (
	SELECT host FROM host_slots
	UNION SELECT host FROM jobs WHERE state = 'leased'
) h
WHERE coalesce((SELECT in_flight FROM host_slots s WHERE s.host = h.host), 0)
	<> (SELECT count(*) FROM jobs j WHERE j.host = h.host AND j.state = 'leased')`

const worstHost = `SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM jobs WHERE state = 'leased' GROUP BY host)`

func mustNoDrift(t *testing.T, db *sqlite.DB, when string) {
	t.Helper()
	if n, err := sqlite.QueryInt(testCtx(t), db, slotDrift); err != nil || n != 0 {
		t.Fatalf("%s: %d hosts' slot counts differ from their leased jobs (%v)", when, n, err)
	}
}

func inFlight(t *testing.T, db *sqlite.DB, host string) int {
	t.Helper()
	n, err := sqlite.QueryInt(testCtx(t), db, `SELECT coalesce((SELECT in_flight FROM host_slots WHERE host = ?), 0)`, host)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two handles on one file (the server's and an operator's, the two writers
// SQLite can have here) lease batches with a cap of 2, settle with every
// kind of outcome, let some leases expire under a reaper running alongside,
// and settle some of those late (lost): while they run and after,
// host_slots equals the leased rows host by host, and no host ever has more
// than 2 leased.
func TestHostSlotsMatchLeasedRowsUnderChaos(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	owner := open(t, dir)
	mustMigrate(t, owner)
	other, err := sqlite.OpenShared(testCtx(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	stores := []*sqlite.JobStore{sqlite.NewJobStore(owner), sqlite.NewJobStore(other)}
	ctx := testCtx(t)
	const hosts, total, workers = 12, 600, 8
	jobs := make([]domain.Job, total)
	start := time.Now().Add(-time.Minute)
	for i := range jobs {
		jobs[i] = newJob(t, fmt.Sprintf("j%05d", i), fmt.Sprintf("h%02d.example", (i/4)%hosts), start.Add(time.Duration(i)*time.Microsecond))
	}
	if _, err := stores[0].Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	var finished, reaped atomic.Int64
	var checks, drifts, overCap atomic.Int64
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // a reaper on the second handle
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
				r, err := stores[1].Reap(ctx, time.Now(), 1000)
				if err != nil {
					t.Errorf("reap: %v", err)
					return
				}
				reaped.Add(int64(r.Requeued + r.Dead))
			}
		}
	}()
	go func() { // an observer reading the invariant while it all runs
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				drift, err := sqlite.QueryInt(ctx, owner, slotDrift)
				if err != nil {
					t.Errorf("drift: %v", err)
					return
				}
				worst, err := sqlite.QueryInt(ctx, owner, worstHost)
				if err != nil {
					t.Errorf("worst: %v", err)
					return
				}
				checks.Add(1)
				if drift > 0 {
					drifts.Add(1)
				}
				if worst > 2 {
					overCap.Add(1)
				}
			}
		}
	}()
	var wg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Minute)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 16))
			store := stores[w%len(stores)]
			for i := 0; finished.Load() < total && time.Now().Before(deadline); i++ {
				tok := fmt.Sprintf("w%d-%d", w, i)
				now := time.Now()
				// A lease of 100 ms: some holders will be too slow.
				batch, err := store.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: tok, Now: now, Until: now.Add(100 * time.Millisecond),
					Limit: 1 + rng.IntN(6), PerHost: 2})
				if err != nil {
					t.Errorf("lease: %v", err)
					return
				}
				if len(batch) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				if rng.IntN(8) == 0 {
					time.Sleep(150 * time.Millisecond) // past the lease: reaped, or settled late
				}
				var sts []ports.Settlement
				for _, j := range batch {
					st := ports.Settlement{ID: j.ID, Token: tok, Attempts: j.Attempts + 1}
					switch rng.IntN(6) {
					case 0:
						st.State, st.RunAt, st.Attempts, st.LastError = domain.JobQueued, time.Now(), j.Attempts, j.LastError
					case 1:
						st.State, st.RunAt, st.LastError = domain.JobQueued, time.Now(), "HTTP 503"
					case 2:
						st.State, st.LastError, st.FinishedAt = domain.JobDead, "HTTP 410", time.Now()
					default:
						st.State, st.FinishedAt = domain.JobSucceeded, time.Now()
					}
					sts = append(sts, st)
				}
				// Settled through the other handle half the time.
				lost, err := stores[(w+i)%len(stores)].Settle(ctx, sts)
				if err != nil {
					t.Errorf("settle: %v", err)
					return
				}
				for k, st := range sts {
					if lost[k] == nil && st.State != domain.JobQueued {
						finished.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	bg.Wait()
	if n := finished.Load(); n != total {
		t.Fatalf("%d of %d jobs finished", n, total)
	}
	mustNoDrift(t, owner, "after the run")
	if held, err := sqlite.QueryInt(ctx, owner, `SELECT coalesce(sum(in_flight), 0) FROM host_slots`); err != nil || held != 0 {
		t.Fatalf("%d slots still taken with no job leased (%v)", held, err)
	}
	if drifts.Load() > 0 || overCap.Load() > 0 || checks.Load() == 0 {
		t.Fatalf("%d of %d readings during the run found drift, %d found a host over its cap", drifts.Load(), checks.Load(), overCap.Load())
	}
	t.Logf("%d jobs over %d hosts, %d workers on 2 handles, %d reaped: %d readings of the invariant during the run, none off",
		total, hosts, workers, reaped.Load(), checks.Load())
}

// The triggers count every way into and out of leased, not only the
// store's own statements: a job enqueued leased, the same job enqueued
// again (a no-op that must not count twice), an operator's delete or
// change of host of a leased job.
func TestHostSlotsFollowEveryWriteOfALeasedJob(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	s := sqlite.NewJobStore(db)
	ctx := testCtx(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	j := newJob(t, "j1", "a.example", now)
	j.State, j.LeaseToken, j.LeaseOwner, j.LeaseUntil = domain.JobLeased, "tok", "w", now.Add(time.Minute)
	steps := []struct {
		name string
		do   func() error
		want map[string]int
	}{
		{"enqueued leased", func() error { _, err := s.Enqueue(ctx, []domain.Job{j}); return err }, map[string]int{"a.example": 1}},
		{"enqueued again (dedupe no-op)", func() error { _, err := s.Enqueue(ctx, []domain.Job{j}); return err }, map[string]int{"a.example": 1}},
		{"host changed", func() error { return sqlite.Exec(ctx, db, `UPDATE jobs SET host = 'b.example' WHERE id = 'j1'`) },
			map[string]int{"a.example": 0, "b.example": 1}},
		{"other columns changed", func() error { return sqlite.Exec(ctx, db, `UPDATE jobs SET last_error = 'x' WHERE id = 'j1'`) },
			map[string]int{"b.example": 1}},
		{"deleted", func() error { return sqlite.Exec(ctx, db, `DELETE FROM jobs WHERE id = 'j1'`) }, map[string]int{"b.example": 0}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for host, want := range st.want {
			if got := inFlight(t, db, host); got != want {
				t.Fatalf("%s: %s has %d in flight, want %d", st.name, host, got, want)
			}
		}
		mustNoDrift(t, db, st.name)
	}
}

// Migration 004 counts the jobs leased before it ran.
func TestMigration004CountsLeasedJobs(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	if err := sqlite.MigrateDown(ctx, db, 1, testLog(t)); err != nil {
		t.Fatal(err)
	}
	if v, _, err := sqlite.MigrationVersion(ctx, db); v != 3 || err != nil {
		t.Fatalf("version %d after one step down (%v); this test is about 004", v, err)
	}
	s := sqlite.NewJobStore(db)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var jobs []domain.Job
	for i, host := range []string{"a.example", "a.example", "b.example", "c.example"} {
		j := newJob(t, fmt.Sprintf("j%d", i), host, now)
		if host != "c.example" {
			j.State, j.LeaseToken, j.LeaseUntil = domain.JobLeased, "tok", now.Add(time.Minute)
		}
		jobs = append(jobs, j)
	}
	if _, err := s.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	mustMigrate(t, db)
	for host, want := range map[string]int{"a.example": 2, "b.example": 1, "c.example": 0} {
		if got := inFlight(t, db, host); got != want {
			t.Errorf("%s: %d in flight after 004, want %d", host, got, want)
		}
	}
	mustNoDrift(t, db, "after 004")
	// And the cap reads them: a.example is full, b.example has one slot.
	c := newJob(t, "more-a", "a.example", now)
	d := newJob(t, "more-b", "b.example", now)
	if _, err := s.Enqueue(ctx, []domain.Job{c, d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t2", Now: now, Until: now.Add(time.Minute), Limit: 10, PerHost: 2})
	var ids []string
	for _, j := range got {
		ids = append(ids, j.ID)
	}
	if err != nil || len(got) != 2 || got[0].Host == "a.example" || got[1].Host == "a.example" {
		t.Fatalf("leased %v, %v: want c.example's job and more-b, none of the full a.example", ids, err)
	}
}
