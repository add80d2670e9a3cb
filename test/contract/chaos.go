package contract

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// SlotReading is what a store with a per-host slot count (host_slots)
// reports of it at one instant, read in one snapshot.
type SlotReading struct {
	Drift int // hosts whose slot count differs from their leased jobs
	Worst int // the most jobs of one host leased
	Held  int // slots taken over all hosts
}

// SlotReadingSQL reads a SlotReading (drift, worst, held) of a host_slots
// table beside jobs, in one statement and so one snapshot, in the SQL both
// PostgreSQL and SQLite speak.
const SlotReadingSQL = `
SELECT
	(SELECT count(*) FROM (
		SELECT host FROM host_slots
		UNION SELECT host FROM jobs WHERE state = 'leased'
	) h
	WHERE coalesce((SELECT in_flight FROM host_slots s WHERE s.host = h.host), 0)
		<> (SELECT count(*) FROM jobs j WHERE j.host = h.host AND j.state = 'leased')),
	(SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM jobs WHERE state = 'leased' GROUP BY host) c),
	(SELECT coalesce(sum(in_flight), 0) FROM host_slots)`

// Chaos is a run of LeaseChaos.
type Chaos struct {
	// Stores are handles on one database (separate pools, clients or
	// connections, as separate processes have); the workers lease through
	// them in turn and settle through any of them. The last one reaps.
	Stores []ports.JobStore
	// Read reads the store's slot counts against its leased jobs.
	Read                 func() (SlotReading, error)
	Hosts, Jobs, Workers int
	// Lease is how long each lease holds; one batch in eight is held for
	// Slow before it is settled, past its lease: reaped, or settled late
	// (lost).
	Lease, Slow time.Duration
}

// LeaseChaos checks that a store's slot counts never drift from its leased
// jobs: workers on c.Stores lease batches of 1 to 6 with a cap of 2, settle
// them with every kind of outcome (release, retry, dead, success), some
// after their lease ended, while a reaper runs every 15 ms and c.Read is
// read every 5 ms. At every reading the counts equal the leased jobs and no
// host is over its cap; at the end every job finished and no slot is held.
func LeaseChaos(t *testing.T, c Chaos) {
	t.Helper()
	const perHost = 2
	jobs := make([]domain.Job, c.Jobs)
	start := time.Now().Add(-time.Minute)
	for i := range jobs {
		jobs[i] = job(t, fmt.Sprintf("j%05d", i), fmt.Sprintf("h%02d.example", (i/4)%c.Hosts), start.Add(time.Duration(i)*time.Microsecond))
	}
	if _, err := c.Stores[0].Enqueue(ctx(t), jobs); err != nil {
		t.Fatal(err)
	}
	reaper := c.Stores[len(c.Stores)-1]
	var finished, reaped, checks, drifts, overCap atomic.Int64
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
				r, err := reaper.Reap(ctx(t), time.Now(), 1000)
				if err != nil {
					t.Errorf("reap: %v", err)
					return
				}
				reaped.Add(int64(r.Requeued + r.Dead))
			}
		}
	}()
	go func() {
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				r, err := c.Read()
				if err != nil {
					t.Errorf("read the slots: %v", err)
					return
				}
				checks.Add(1)
				if r.Drift > 0 {
					drifts.Add(1)
				}
				if r.Worst > perHost {
					overCap.Add(1)
				}
			}
		}
	}()
	var wg sync.WaitGroup
	// A bound, not a measure: the run stops by itself even if a store
	// never lets the jobs finish (then the count below fails it).
	deadline := time.Now().Add(5 * time.Minute)
	for w := range c.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 13))
			// A drift or a host over its cap ends the run: the test has failed.
			for i := 0; finished.Load() < int64(c.Jobs) && drifts.Load()+overCap.Load() == 0 && time.Now().Before(deadline); i++ {
				tok := fmt.Sprintf("w%d-%d", w, i)
				now := time.Now()
				batch, err := c.Stores[w%len(c.Stores)].LeaseBatch(ctx(t), ports.LeaseRequest{Owner: "w", Token: tok, Now: now, Until: now.Add(c.Lease),
					Limit: 1 + rng.IntN(6), PerHost: perHost})
				if err != nil {
					t.Errorf("lease: %v", err)
					return
				}
				if len(batch) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				if rng.IntN(8) == 0 {
					time.Sleep(c.Slow)
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
				lost, err := c.Stores[(w+i)%len(c.Stores)].Settle(ctx(t), sts)
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
	if drifts.Load() > 0 || overCap.Load() > 0 || checks.Load() == 0 {
		t.Fatalf("%d of %d readings during the run found drift, %d found a host over its cap", drifts.Load(), checks.Load(), overCap.Load())
	}
	if n := finished.Load(); n != int64(c.Jobs) {
		t.Fatalf("%d of %d jobs finished", n, c.Jobs)
	}
	after, err := c.Read()
	if err != nil || after.Drift != 0 || after.Held != 0 {
		t.Fatalf("after the run: %+v (%v); want no drift and no slot held with no job leased", after, err)
	}
	t.Logf("%d jobs over %d hosts, %d workers on %d handles, %d reaped: %d readings of the slots during the run, none off",
		c.Jobs, c.Hosts, c.Workers, len(c.Stores), reaped.Load(), checks.Load())
}
