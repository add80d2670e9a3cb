package contract

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// leaseBatchCases: the job store cases of LeaseBatch: it leases the oldest
// runnable jobs, never one twice, skipping the hosts asked and keeping the
// per-host cap across every handle on the store.
func leaseBatchCases(o options) []testCase[Jobs] {
	return []testCase[Jobs]{
		{"LeasePicksOldestRunnable", func(t *testing.T, s Jobs) {
			enqueue(t, s,
				job(t, "mid", "a.example", base.Add(-2*time.Second)),
				job(t, "future", "b.example", base.Add(10*time.Second)),
				job(t, "oldest", "c.example", base.Add(-3*time.Second)),
				job(t, "newest", "d.example", base.Add(-1*time.Second)),
				job(t, "now", "e.example", base),
			)
			for i, want := range []string{"oldest", "mid", "newest", "now"} {
				j := mustLease(t, s, base, fmt.Sprintf("t%d", i))
				if JobName(j.ID) != want {
					t.Fatalf("lease %d = %s, want %s", i, j.ID, want)
				}
			}
			_, err := leaseAt(t, s, base, "t9")
			mustIs(t, err, domain.ErrNoJob, "future job leased early")
			if j := mustLease(t, s, base.Add(10*time.Second), "t10"); JobName(j.ID) != "future" {
				t.Fatalf("got %s", j.ID)
			}
		}},
		{"LeaseSetsLease", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			j := mustLease(t, s, base, "tok1")
			if j.State != domain.JobLeased || j.LeaseToken != "tok1" || j.LeaseOwner != "worker-tok1" {
				t.Fatalf("leased job %+v", j)
			}
			sameTime(t, j.LeaseUntil, base.Add(lease), "leaseUntil")
			stored := get(t, s, "j1")
			if stored.State != domain.JobLeased || stored.LeaseToken != "tok1" {
				t.Fatalf("stored %+v", stored)
			}
			_, err := leaseAt(t, s, base.Add(time.Minute), "tok2")
			mustIs(t, err, domain.ErrNoJob, "a leased job was leased again")
		}},
		{"LeaseSkipsSaturatedHosts", func(t *testing.T, s Jobs) {
			enqueue(t, s,
				job(t, "a1", "a.example", base.Add(-3*time.Second)),
				job(t, "a2", "a.example", base.Add(-2*time.Second)),
				job(t, "b1", "b.example", base.Add(-1*time.Second)),
			)
			if j := mustLease(t, s, base, "t1", "a.example"); JobName(j.ID) != "b1" {
				t.Fatalf("got %s, want b1 (a.example skipped)", j.ID)
			}
			_, err := leaseAt(t, s, base, "t2", "a.example", "c.example")
			mustIs(t, err, domain.ErrNoJob, "only skipped hosts left")
			if j := mustLease(t, s, base, "t3"); JobName(j.ID) != "a1" {
				t.Fatalf("got %s, want a1", j.ID)
			}
		}},
		{"NoJobLeasedTwiceUnderConcurrency", func(t *testing.T, s Jobs) {
			const jobs, workers = 400, 32
			all := make([]domain.Job, jobs)
			for i := range all {
				all[i] = job(t, fmt.Sprintf("j%04d", i), fmt.Sprintf("h%02d.example", i%40), base.Add(-time.Duration(i)*time.Millisecond))
			}
			enqueue(t, s, all...)
			var mu sync.Mutex
			seen := make(map[string]string)
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; ; i++ {
						tok := fmt.Sprintf("w%02d-%04d", w, i)
						jobs, err := s.LeaseBatch(ctx(t), ports.LeaseRequest{Owner: "w", Token: tok, Now: base, Until: base.Add(lease), Limit: 1})
						if err == nil && len(jobs) == 0 {
							return
						}
						if err != nil {
							errs <- err
							return
						}
						j := jobs[0]
						mu.Lock()
						if prev, dup := seen[j.ID]; dup {
							mu.Unlock()
							errs <- fmt.Errorf("job %s leased twice: tokens %s and %s", j.ID, prev, tok)
							return
						}
						seen[j.ID] = tok
						mu.Unlock()
						if err := settle(t, s, succeeded(j.ID, tok, 1, base)); err != nil {
							errs <- fmt.Errorf("complete %s: %w", j.ID, err)
							return
						}
					}
				}(w)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if len(seen) != jobs {
				t.Fatalf("leased %d distinct jobs, want %d", len(seen), jobs)
			}
			c, _ := s.Counts(ctx(t))
			if c[domain.JobSucceeded] != jobs {
				t.Fatalf("succeeded = %d", c[domain.JobSucceeded])
			}
		}},
		{"LeaseBatchTakesOldestFirstUpToLimit", func(t *testing.T, s Jobs) {
			enqueue(t, s,
				job(t, "d", "d.example", base.Add(-1*time.Second)),
				job(t, "a", "a.example", base.Add(-6*time.Second)),
				job(t, "c", "c.example", base.Add(-4*time.Second)),
				job(t, "f", "f.example", base),
				job(t, "b", "b.example", base.Add(-5*time.Second)),
				job(t, "e", "e.example", base.Add(-2*time.Second)),
				job(t, "later", "g.example", base.Add(time.Minute)),
			)
			first := leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 4})
			if got := fmt.Sprint(jobIDs(first)); got != "[a b c e]" {
				t.Fatalf("first batch %s, want the 4 oldest [a b c e]", got)
			}
			rest := leaseBatch(t, s, ports.LeaseRequest{Token: "t2", Now: base, Limit: 10})
			if got := fmt.Sprint(jobIDs(rest)); got != "[d f]" {
				t.Fatalf("second batch %s, want the due rest [d f]", got)
			}
			for _, j := range append(first, rest...) {
				if got := get(t, s, j.ID); got.State != domain.JobLeased || got.LeaseToken != j.LeaseToken {
					t.Fatalf("stored %+v", got)
				}
			}
			if none := leaseBatch(t, s, ports.LeaseRequest{Token: "t3", Now: base, Limit: 10}); len(none) != 0 {
				t.Fatalf("leased %v with nothing due", jobIDs(none))
			}
			if one := leaseBatch(t, s, ports.LeaseRequest{Token: "t4", Now: base.Add(time.Hour)}); len(one) != 1 || JobName(one[0].ID) != "later" {
				t.Fatalf("limit 0 is one job: got %v", jobIDs(one))
			}
		}},
		{"LeaseBatchSkipsHosts", func(t *testing.T, s Jobs) {
			enqueue(t, s,
				job(t, "a1", "a.example", base.Add(-4*time.Second)),
				job(t, "b1", "b.example", base.Add(-3*time.Second)),
				job(t, "a2", "a.example", base.Add(-2*time.Second)),
				job(t, "c1", "c.example", base.Add(-1*time.Second)),
			)
			got := leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 10, SkipHosts: []string{"a.example", "c.example"}})
			if fmt.Sprint(jobIDs(got)) != "[b1]" {
				t.Fatalf("got %v, want [b1]", jobIDs(got))
			}
		}},
		{"LeaseBatchKeepsThePerHostCap", func(t *testing.T, s Jobs) {
			for i := 1; i <= 5; i++ {
				enqueue(t, s, job(t, fmt.Sprintf("a%d", i), "a.example", base.Add(time.Duration(i-11)*time.Second)))
			}
			enqueue(t, s, job(t, "b1", "b.example", base.Add(-5*time.Second)), job(t, "c1", "c.example", base.Add(-4*time.Second)))
			first := leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 10, PerHost: 2})
			if got := fmt.Sprint(jobIDs(first)); got != "[a1 a2 b1 c1]" {
				t.Fatalf("got %s, want two of a.example and the others [a1 a2 b1 c1]", got)
			}
			if again := leaseBatch(t, s, ports.LeaseRequest{Token: "t2", Now: base, Limit: 10, PerHost: 2}); len(again) != 0 {
				t.Fatalf("a.example at its cap, yet leased %v", jobIDs(again))
			}
			// Another caller's higher cap counts the same leases.
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t3", Now: base, Limit: 10, PerHost: 3}); fmt.Sprint(jobIDs(got)) != "[a3]" {
				t.Fatalf("cap 3 with 2 leased: got %v, want [a3]", jobIDs(got))
			}
			// A settlement gives the slot back.
			mustNil(t, settle(t, s, succeeded("a1", "t1", 1, base)), "complete a1")
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t4", Now: base, Limit: 10, PerHost: 3}); fmt.Sprint(jobIDs(got)) != "[a4]" {
				t.Fatalf("after a completion: got %v, want [a4]", jobIDs(got))
			}
			// So does a release, and the released job waits its turn.
			mustNil(t, settle(t, s, released(first[1], base)), "release a2")
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t5", Now: base, Limit: 10, PerHost: 3}); fmt.Sprint(jobIDs(got)) != "[a5]" {
				t.Fatalf("after a release: got %v, want the older [a5]", jobIDs(got))
			}
			// And a reap: every lease has expired (a3, a4, a5, b1, c1), all
			// come back.
			later := base.Add(lease + time.Second)
			r, err := s.Reap(ctx(t), later, domain.MaxAttempts)
			mustNil(t, err, "reap")
			if r.Requeued != 5 {
				t.Fatalf("reaped %+v, want 5 requeued", r)
			}
			got := leaseBatch(t, s, ports.LeaseRequest{Token: "t6", Now: later, Limit: 10, PerHost: 2})
			perHost := map[string]int{}
			for _, j := range got {
				perHost[j.Host]++
			}
			if len(got) != 4 || perHost["a.example"] != 2 {
				t.Fatalf("after the reap: %v, want 2 of a.example, b1 and c1", jobIDs(got))
			}
			// No cap: the rest of a.example.
			if rest := leaseBatch(t, s, ports.LeaseRequest{Token: "t7", Now: later, Limit: 10}); len(rest) != 2 {
				t.Fatalf("without a cap: %v, want the 2 other a.example jobs", jobIDs(rest))
			}
		}},
		{"UncappedLeasesCountAgainstTheCapsOfOthers", func(t *testing.T, s Jobs) {
			for i := 1; i <= 4; i++ {
				enqueue(t, s, job(t, fmt.Sprintf("a%d", i), "a.example", base.Add(time.Duration(i-10)*time.Second)))
			}
			enqueue(t, s, job(t, "b1", "b.example", base))
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 2}); fmt.Sprint(jobIDs(got)) != "[a1 a2]" {
				t.Fatalf("without a cap: %v, want [a1 a2]", jobIDs(got))
			}
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t2", Now: base, Limit: 10, PerHost: 2}); fmt.Sprint(jobIDs(got)) != "[b1]" {
				t.Fatalf("cap 2 after two uncapped leases of a.example: %v, want [b1]", jobIDs(got))
			}
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t3", Now: base, Limit: 10, PerHost: 3}); fmt.Sprint(jobIDs(got)) != "[a3]" {
				t.Fatalf("cap 3: %v, want [a3]", jobIDs(got))
			}
			// The uncapped holder's settlement frees its slot for the capped.
			mustNil(t, settle(t, s, succeeded("a1", "t1", 1, base)), "complete a1")
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t4", Now: base, Limit: 10, PerHost: 3}); fmt.Sprint(jobIDs(got)) != "[a4]" {
				t.Fatalf("after the uncapped holder settled: %v, want [a4]", jobIDs(got))
			}
		}},
		{"PerHostCapHoldsAcrossTwoStores", func(t *testing.T, s Jobs) {
			other := s
			if o.second != nil {
				other = o.second(t, s)
			}
			for i := 1; i <= 4; i++ {
				enqueue(t, s, job(t, fmt.Sprintf("a%d", i), "a.example", base.Add(time.Duration(i-10)*time.Second)))
			}
			enqueue(t, s, job(t, "b1", "b.example", base))
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 1, PerHost: 2}); fmt.Sprint(jobIDs(got)) != "[a1]" {
				t.Fatalf("first store: %v", jobIDs(got))
			}
			if got := leaseBatch(t, other, ports.LeaseRequest{Token: "t2", Now: base, Limit: 10, PerHost: 2}); fmt.Sprint(jobIDs(got)) != "[a2 b1]" {
				t.Fatalf("second store: %v, want one more of a.example (the cap counts the first store's) and b1", jobIDs(got))
			}
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t3", Now: base, Limit: 10, PerHost: 2}); len(got) != 0 {
				t.Fatalf("first store again: %v, want nothing (a.example at its cap)", jobIDs(got))
			}
			mustNil(t, settle(t, other, succeeded("a1", "t1", 1, base)), "the second store settles the first's lease")
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t4", Now: base, Limit: 10, PerHost: 2}); fmt.Sprint(jobIDs(got)) != "[a3]" {
				t.Fatalf("after the settlement: %v, want [a3]", jobIDs(got))
			}
		}},
		{"BatchLeasingUnderConcurrencyKeepsEveryRule", func(t *testing.T, s Jobs) {
			concurrentBatches(t, s, o)
		}},
	}
}

// concurrentBatches is the chaos case: workers on two store handles lease
// batches of 1 to 5 jobs with a cap of 2 per host, count what they hold per
// host (from after the lease to before the settlement, inside the store's
// own count), and settle each batch in one call: mostly successes, some
// releases and retries (leased again later), and a stale settlement of the
// batch's first job ahead of the real one. Every job must end succeeded
// exactly once, no host ever be held more than twice, and afterwards no
// slot be left over: a cap of 1 leases one job of every host.
func concurrentBatches(t *testing.T, s Jobs, o options) {
	const hostCount, perHost, total, workers = 20, 2, 600, 16
	r := newRace(t, s, o)
	hosts := make([]string, hostCount)
	for h := range hosts {
		hosts[h] = fmt.Sprintf("h%02d.example", h)
	}
	all := make([]domain.Job, total)
	for i := range all {
		all[i] = job(t, fmt.Sprintf("j%04d", i), hosts[(i/3)%hostCount], base.Add(-time.Duration(total-i)*time.Millisecond))
	}
	enqueue(t, s, all...)
	var ( // under r.mu
		holding = map[string]int{}
		wins    = map[string]int{}
		done    int
	)
	r.start(workers, func(w, i int, store Jobs) bool {
		r.mu.Lock()
		finished := done == total || len(r.errs) > 0
		r.mu.Unlock()
		if finished {
			return true
		}
		tok := fmt.Sprintf("w%02d-%05d", w, i)
		jobs, ok := r.lease(store, ports.LeaseRequest{Owner: "w", Token: tok, Now: base, Until: base.Add(lease), Limit: 1 + i%5, PerHost: perHost})
		if !ok {
			return true
		}
		if len(jobs) == 0 {
			time.Sleep(time.Millisecond)
			return false
		}
		r.mu.Lock()
		for _, j := range jobs {
			if holding[j.Host]++; holding[j.Host] > perHost {
				r.errs = append(r.errs, fmt.Errorf("host %s held %d times at once, cap %d", j.Host, holding[j.Host], perHost))
			}
		}
		r.mu.Unlock()
		batch := []ports.Settlement{succeeded(jobs[0].ID, "stale-"+tok, 1, base)}
		for k, j := range jobs {
			switch (i + k) % 7 {
			case 0:
				batch = append(batch, released(j, base))
			case 1:
				batch = append(batch, retried(j.ID, tok, j.Attempts, base, "HTTP 503"))
			default:
				batch = append(batch, succeeded(j.ID, tok, j.Attempts+1, base))
			}
		}
		r.mu.Lock()
		for _, j := range jobs {
			holding[j.Host]--
		}
		r.mu.Unlock()
		lost, ok := r.settle(store, batch)
		if !ok {
			return true
		}
		if !errors.Is(lost[0], domain.ErrLeaseLost) {
			r.fail(fmt.Errorf("a stale token settled job %s: %v", jobs[0].ID, lost[0]))
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for k, st := range batch[1:] {
			if lost[k+1] != nil {
				r.errs = append(r.errs, fmt.Errorf("the holder's settlement of %s was lost: %v", st.ID, lost[k+1]))
			} else if st.State == domain.JobSucceeded {
				wins[st.ID]++
				done++
			}
		}
		return false
	})
	if !r.wait(t) {
		return
	}
	for _, j := range all {
		if n := wins[j.ID]; n != 1 {
			t.Errorf("job %s succeeded %d times", j.ID, n)
		}
	}
	c, _ := s.Counts(ctx(t))
	if c[domain.JobSucceeded] != total || c[domain.JobLeased] != 0 {
		t.Fatalf("counts %v, want all %d succeeded", c, total)
	}
	r.noSlotLeft(t, hosts, base)
}
