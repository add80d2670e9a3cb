package contract

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// JobStoreReadyHosts runs the contract of ports.JobStore's lease against
// the backlog's shape (issue 36): a lease is not held back by the jobs of
// hosts at their cap, and every way a job becomes due (an enqueue, a
// retry, a release, the reaper, a quarantine lifted, a dead job retried)
// makes it leasable, alone and under concurrency. A store that leases from
// an index of ready hosts keeps that index in every one of those writes;
// these cases fail if one forgets it. Run it beside JobStore, with the same
// options.
func JobStoreReadyHosts(t *testing.T, newStore func(t *testing.T) Jobs, opts ...Option) {
	newStore = behindChecks(newStore, newJobs)
	runCases(t, newStore, opts, []testCase[Jobs]{
		{"LeaseIsNotHeldBackByTheBacklogOfCappedHosts", func(t *testing.T, s Jobs) {
			// a.example and b.example at their cap of 2, with a backlog
			// older than every other host's jobs.
			var held []domain.Job
			for _, h := range []string{"a", "b"} {
				for i := range 2 {
					held = append(held, job(t, fmt.Sprintf("%s-held%d", h, i), h+".example", base.Add(-time.Hour)))
				}
			}
			enqueue(t, s, held...)
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "holder", Now: base, Until: base.Add(time.Hour), Limit: 4, PerHost: 2}); len(got) != 4 {
				t.Fatalf("the holder leased %v, want the 4 held jobs", jobIDs(got))
			}
			var backlog []domain.Job
			for i := range 300 {
				h := []string{"a", "b"}[i%2]
				backlog = append(backlog, job(t, fmt.Sprintf("%s-back%03d", h, i), h+".example", base.Add(-30*time.Minute+time.Duration(i)*time.Second)))
			}
			enqueue(t, s, backlog...)
			enqueue(t, s,
				job(t, "c1", "c.example", base.Add(-3*time.Second)),
				job(t, "d1", "d.example", base.Add(-2*time.Second)),
				job(t, "e1", "e.example", base.Add(-time.Second)),
				job(t, "f1", "f.example", base.Add(time.Minute)), // not due
			)
			got := leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 10, PerHost: 2})
			if fmt.Sprint(jobIDs(got)) != "[c1 d1 e1]" {
				t.Fatalf("leased %v, want [c1 d1 e1]: the due jobs of hosts below their cap", jobIDs(got))
			}
			// A slot of a.example freed: its oldest backlog job is next.
			mustNil(t, settle(t, s, succeeded("a-held0", "holder", 1, base)), "settle a-held0")
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t2", Now: base, Limit: 10, PerHost: 2}); fmt.Sprint(jobIDs(got)) != "[a-back000]" {
				t.Fatalf("after a.example's slot freed: %v, want [a-back000]", jobIDs(got))
			}
		}},
		{"EveryWayAJobBecomesDueMakesItLeasable", func(t *testing.T, s Jobs) {
			const cap = 2
			take := func(tok string, now time.Time) []string {
				t.Helper()
				return sortedCopy(jobIDs(leaseBatch(t, s, ports.LeaseRequest{Token: tok, Now: now, Limit: 20, PerHost: cap})))
			}
			expect := func(tok string, now time.Time, want ...string) []domain.Job {
				t.Helper()
				jobs := leaseBatch(t, s, ports.LeaseRequest{Token: tok, Now: now, Limit: 20, PerHost: cap})
				if got := sortedCopy(jobIDs(jobs)); !slices.Equal(got, sortedCopy(want)) {
					t.Fatalf("%s: leased %v, want %v", tok, got, sortedCopy(want))
				}
				return jobs
			}
			// Enqueued: each host's oldest job first.
			enqueue(t, s, job(t, "r1", "r.example", base), job(t, "r2", "r.example", base.Add(time.Second)),
				job(t, "q1", "q.example", base))
			first := expect("t1", base.Add(time.Second), "r1", "r2", "q1")
			// Emptied, then enqueued again.
			enqueue(t, s, job(t, "q2", "q.example", base.Add(2*time.Second)))
			expect("t2", base.Add(2*time.Second), "q2")
			// Requeued by a retry, due later: not before, then at its time.
			mustNil(t, settle(t, s, retried("r1", "t1", 1, base.Add(time.Minute), "HTTP 503")), "retry r1")
			expect("t3", base.Add(30*time.Second))
			expect("t4", base.Add(time.Minute), "r1")
			// Released, due at once.
			i := slices.IndexFunc(first, func(j domain.Job) bool { return JobName(j.ID) == "r2" })
			mustNil(t, settle(t, s, released(first[i], base.Add(time.Minute))), "release r2")
			expect("t5", base.Add(time.Minute), "r2")
			// Reaped: every lease so far has expired.
			later := base.Add(time.Minute + lease + time.Second)
			r, err := s.Reap(ctx(t), later, domain.MaxAttempts)
			mustNil(t, err, "reap")
			if r.Requeued != 4 {
				t.Fatalf("reaped %+v, want the 4 leases requeued (q1, q2, r1, r2)", r)
			}
			again := expect("t6", later, "q1", "q2", "r1", "r2")
			// Dead, then retried by an operator.
			for _, j := range again {
				mustNil(t, settle(t, s, dead(JobName(j.ID), "t6", j.Attempts+1, "HTTP 410", later)), "kill "+JobName(j.ID))
			}
			expect("t7", later)
			n, err := s.RetryDead(ctx(t), JobID("q1"), "", later)
			if err != nil || n != 1 {
				t.Fatalf("retry dead q1: %d, %v", n, err)
			}
			n, err = s.RetryDead(ctx(t), "", "r.example", later)
			if err != nil || n != 2 {
				t.Fatalf("retry dead of r.example: %d, %v", n, err)
			}
			expect("t8", later, "q1", "r1", "r2")
			// Deferred by a quarantine: not before its end; lifted early by
			// an operator: at once.
			enqueue(t, s, job(t, "s1", "s.example", later), job(t, "u1", "u.example", later))
			for _, h := range []string{"s.example", "u.example"} {
				if _, err := s.DeferHost(ctx(t), h, later.Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			expect("t9", later)
			n, err = s.ResumeHost(ctx(t), "s.example", later.Add(time.Hour), later.Add(time.Minute))
			if err != nil || n != 1 {
				t.Fatalf("resume s.example: %d, %v", n, err)
			}
			expect("t10", later.Add(time.Minute), "s1")
			expect("t11", later.Add(time.Hour), "u1")
			// Ended by a suspension: nothing of the host, the others still.
			enqueue(t, s, job(t, "v1", "v.example", later), job(t, "w1", "w.example", later))
			if _, err := s.EndDomainJobs(ctx(t), "v.example", "suspended", later); err != nil {
				t.Fatal(err)
			}
			if got := take("t12", later.Add(time.Hour)); !slices.Equal(got, []string{"w1"}) {
				t.Fatalf("after v.example's suspension: leased %v, want [w1]", got)
			}
		}},
		{"NoJobIsLeftBehindWhileLeasesAndEnqueuesRace", func(t *testing.T, s Jobs) {
			other := s
			if o := buildOptions(opts); o.second != nil {
				other = o.second(t, s)
			}
			stores := []Jobs{s, other}
			const hosts, perWriter, writers, leasers = 6, 60, 2, 4
			var wg sync.WaitGroup
			errs := make(chan error, writers+leasers)
			done := make(chan struct{})
			var mu sync.Mutex
			settled := map[string]int{}
			for w := range writers {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := range perWriter {
						name := fmt.Sprintf("w%d-%03d", w, i)
						if _, err := stores[w%2].Enqueue(ctx(t), []domain.Job{job(t, name, fmt.Sprintf("h%d.example", i%hosts), base)}); err != nil {
							errs <- fmt.Errorf("enqueue %s: %w", name, err)
							return
						}
					}
				}(w)
			}
			var leasing sync.WaitGroup
			for l := range leasers {
				leasing.Add(1)
				go func(l int) {
					defer leasing.Done()
					st := stores[l%2]
					for i := 0; ; i++ {
						select {
						case <-done:
							return
						default:
						}
						tok := fmt.Sprintf("l%d-%05d", l, i)
						jobs, err := st.LeaseBatch(ctx(t), ports.LeaseRequest{Owner: "l", Token: tok, Now: base, Until: base.Add(lease), Limit: 3, PerHost: 2})
						if err != nil {
							errs <- fmt.Errorf("lease: %w", err)
							return
						}
						batch := make([]ports.Settlement, len(jobs))
						for k, j := range jobs {
							mu.Lock()
							settled[j.ID]++
							n := settled[j.ID]
							mu.Unlock()
							if n == 1 && (i+k)%3 == 0 {
								// Back to the queue, due at once: a retry.
								batch[k] = released(j, base)
							} else {
								batch[k] = ports.Settlement{ID: j.ID, Token: tok, State: domain.JobSucceeded, Attempts: j.Attempts + 1, FinishedAt: base}
							}
						}
						if len(batch) > 0 {
							if _, err := st.Settle(ctx(t), batch); err != nil {
								errs <- fmt.Errorf("settle: %w", err)
								return
							}
						}
					}
				}(l)
			}
			wg.Wait()
			close(done)
			leasing.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			// Whatever the interleaving, every job left in the queue is
			// leasable now: a drain takes them all.
			for i := 0; ; i++ {
				jobs := leaseBatch(t, s, ports.LeaseRequest{Token: fmt.Sprintf("drain%d", i), Now: base, Limit: 50})
				if len(jobs) == 0 {
					break
				}
				batch := make([]ports.Settlement, len(jobs))
				for k, j := range jobs {
					batch[k] = ports.Settlement{ID: j.ID, Token: j.LeaseToken, State: domain.JobSucceeded, Attempts: j.Attempts + 1, FinishedAt: base}
				}
				lost, err := s.Settle(ctx(t), batch)
				mustNil(t, err, "settle the drain")
				for _, l := range lost {
					mustNil(t, l, "settle the drain")
				}
			}
			c, err := s.Counts(ctx(t))
			mustNil(t, err, "counts")
			if c[domain.JobQueued] != 0 || c[domain.JobLeased] != 0 || c[domain.JobSucceeded] != writers*perWriter {
				t.Fatalf("after the drain: %v, want all %d succeeded (a queued job left is one no lease could find)", c, writers*perWriter)
			}
		}},
	})
}
