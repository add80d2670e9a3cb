package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// slotDrift is the number of hosts whose slot count differs from their
// leased jobs. One statement reads both tables in one snapshot, and every
// statement that moves a job in or out of leased moves its host's count in
// the same transaction, so the two agree at every instant, not only at the
// end.
const slotDrift = `
SELECT count(*) FROM (
	SELECT host FROM host_slots
	UNION SELECT host FROM jobs WHERE state = 'leased'
) h
WHERE coalesce((SELECT in_flight FROM host_slots s WHERE s.host = h.host), 0)
	<> (SELECT count(*) FROM jobs j WHERE j.host = h.host AND j.state = 'leased')`

// Three pools (three processes) lease batches with a cap of 2, settle with
// every kind of outcome, let some leases expire under a reaper running
// alongside, and settle some of those late (lost): while they run and after,
// host_slots equals the leased rows host by host, and no host ever has more
// than 2 leased.
func TestHostSlotsMatchLeasedRowsUnderChaos(t *testing.T) {
	t.Parallel()
	s := newSchema(t)
	first := s.pool(t)
	mustMigrate(t, first)
	pools := []*postgres.JobStore{postgres.NewJobStore(first), postgres.NewJobStore(s.pool(t)), postgres.NewJobStore(s.pool(t))}
	ctx := testCtx(t)
	const hosts, total, workers = 12, 1200, 12
	jobs := make([]domain.Job, total)
	start := time.Now().Add(-time.Minute)
	for i := range jobs {
		jobs[i] = newJob(t, fmt.Sprintf("j%05d", i), fmt.Sprintf("h%02d.example", (i/4)%hosts), start.Add(time.Duration(i)*time.Microsecond))
	}
	if _, err := pools[0].Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	var finished atomic.Int64
	var checks, drifts, overCap atomic.Int64
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // the reaper of a fourth process
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
				r, err := pools[2].Reap(ctx, time.Now(), 1000)
				if err != nil {
					t.Errorf("reap: %v", err)
					return
				}
				_ = r
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
				var drift, worst int
				if err := first.QueryRow(ctx, slotDrift).Scan(&drift); err != nil {
					t.Errorf("drift: %v", err)
					return
				}
				if err := first.QueryRow(ctx, `SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM jobs WHERE state = 'leased' GROUP BY host) c`).Scan(&worst); err != nil {
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
			rng := rand.New(rand.NewPCG(uint64(w), 13))
			store := pools[w%len(pools)]
			for i := 0; finished.Load() < total && time.Now().Before(deadline); i++ {
				tok := fmt.Sprintf("w%d-%d", w, i)
				now := time.Now()
				// A lease of 30 ms: some holders will be too slow.
				batch, err := store.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: tok, Now: now, Until: now.Add(30 * time.Millisecond),
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
					time.Sleep(60 * time.Millisecond) // past the lease: reaped, or settled late
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
				lost, err := store.Settle(ctx, sts)
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
	var drift int
	if err := first.QueryRow(ctx, slotDrift).Scan(&drift); err != nil || drift != 0 {
		t.Fatalf("after the run %d hosts' slot counts differ from their leased jobs (%v)", drift, err)
	}
	var held int
	if err := first.QueryRow(ctx, `SELECT coalesce(sum(in_flight), 0) FROM host_slots`).Scan(&held); err != nil || held != 0 {
		t.Fatalf("%d slots still taken with no job leased (%v)", held, err)
	}
	if drifts.Load() > 0 || overCap.Load() > 0 || checks.Load() == 0 {
		t.Fatalf("%d of %d readings during the run found drift, %d found a host over its cap", drifts.Load(), checks.Load(), overCap.Load())
	}
	t.Logf("%d jobs over %d hosts, %d workers on 3 pools: %d readings of the invariant during the run, none off", total, hosts, workers, checks.Load())
}
