package contract

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// countsCases: the job store cases of the counts: Counts, CountsByHost and
// List show the queue, CountsOfBody a fan-out's progress; a count has
// every state.
func countsCases(o options) []testCase[Jobs] {
	return []testCase[Jobs]{
		{"CountsFollowEveryWrite", func(t *testing.T, s Jobs) { countsFollowEveryWrite(t, s, o) }},
		{"AdminCountsAndLists", func(t *testing.T, s Jobs) {
			for i := 0; i < 5; i++ {
				enqueue(t, s, job(t, fmt.Sprintf("a%d", i), "a.example", base))
			}
			for i := 0; i < 3; i++ {
				enqueue(t, s, job(t, fmt.Sprintf("b%d", i), "b.example", base))
			}
			j := mustLease(t, s, base, "t1")
			mustNil(t, settle(t, s, dead(j.ID, "t1", 1, "gone", base)), "fail")
			mustLease(t, s, base, "t2")
			c, err := s.Counts(ctx(t))
			mustNil(t, err, "counts")
			want := map[domain.JobState]int{domain.JobQueued: 6, domain.JobLeased: 1, domain.JobDead: 1, domain.JobSucceeded: 0}
			for st, n := range want {
				if c[st] != n {
					t.Errorf("count %s = %d, want %d (all %v)", st, c[st], n, c)
				}
			}
			hc, err := s.CountsByHost(ctx(t), domain.JobQueued, 10)
			mustNil(t, err, "counts by host")
			if len(hc) != 2 || hc[0].Count < hc[1].Count || hc[0].Count+hc[1].Count != 6 {
				t.Fatalf("counts by host %+v", hc)
			}
			if one, _ := s.CountsByHost(ctx(t), domain.JobQueued, 1); len(one) != 1 {
				t.Fatalf("limit ignored: %+v", one)
			}
			var ids []string
			after := ""
			for {
				page, err := s.List(ctx(t), ports.JobFilter{State: domain.JobQueued, AfterID: after, Limit: 4})
				mustNil(t, err, "list")
				for _, j := range page {
					ids = append(ids, j.ID)
				}
				if len(page) < 4 {
					break
				}
				after = page[len(page)-1].ID
			}
			if len(ids) != 6 || !sort.StringsAreSorted(ids) {
				t.Fatalf("paged ids %v", ids)
			}
			bs, _ := s.List(ctx(t), ports.JobFilter{Host: "b.example"})
			if len(bs) != 3 {
				t.Fatalf("by host: %d", len(bs))
			}
		}},
		{"CountsOfBodyFollowsAFanOut", func(t *testing.T, s Jobs) {
			shared := []byte(`{"id":"https://local.example/activities/fan","type":"Create"}`)
			var fan []domain.Job
			for i := range 5 {
				j, err := domain.NewJob(JobID(fmt.Sprintf("f%d", i)), "https://local.example/activities/fan",
					fmt.Sprintf("https://h%d.example/inbox", i), "actor-1", "https://local.example/users/alice#main-key", shared, base)
				mustNil(t, err, "job")
				fan = append(fan, j)
			}
			enqueue(t, s, fan...)
			enqueue(t, s, job(t, "other", "a.example", base)) // another body
			j := mustLease(t, s, base, "tok")
			mustNil(t, settle(t, s, succeeded(j.ID, "tok", 1, base)), "settle")
			c, err := s.CountsOfBody(ctx(t), domain.BodyOf(shared))
			mustNil(t, err, "counts of body")
			want := map[domain.JobState]int{domain.JobQueued: 4, domain.JobLeased: 0, domain.JobSucceeded: 1, domain.JobDead: 0}
			if j.BodyID != domain.BodyOf(shared) {
				want = map[domain.JobState]int{domain.JobQueued: 5, domain.JobLeased: 0, domain.JobSucceeded: 0, domain.JobDead: 0}
			}
			for _, st := range domain.JobStates() {
				if c[st] != want[st] {
					t.Fatalf("counts of the fan-out's body = %v, want %v", c, want)
				}
			}
			c, err = s.CountsOfBody(ctx(t), domain.BodyOf([]byte("no such body")))
			mustNil(t, err, "counts of an unknown body")
			for _, st := range domain.JobStates() {
				if n, ok := c[st]; !ok || n != 0 {
					t.Fatalf("counts of an unknown body = %v, want every state at 0", c)
				}
			}
		}},
	}
}

// retryDeadCases: the job store cases of RetryDead: it puts dead jobs back
// in the queue.
func retryDeadCases() []testCase[Jobs] {
	return []testCase[Jobs]{
		{"RetryDeadRequeues", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "d1", "a.example", base), job(t, "d2", "a.example", base), job(t, "d3", "b.example", base), job(t, "q", "c.example", base.Add(time.Hour)))
			for i := 0; i < 3; i++ {
				j := mustLease(t, s, base, fmt.Sprintf("t%d", i))
				mustNil(t, settle(t, s, dead(j.ID, fmt.Sprintf("t%d", i), 16, "gave up", base)), "fail")
			}
			later := base.Add(time.Minute)
			n, err := s.RetryDead(ctx(t), JobID("d3"), "", later)
			mustNil(t, err, "retry one")
			if n != 1 {
				t.Fatalf("retried %d", n)
			}
			got := get(t, s, "d3")
			if got.State != domain.JobQueued || got.Attempts != 0 || !got.FinishedAt.IsZero() {
				t.Fatalf("revived %+v", got)
			}
			sameTime(t, got.RunAt, later, "runAt")
			n, _ = s.RetryDead(ctx(t), JobID("q"), "", later)
			if n != 0 {
				t.Fatal("a queued job was 'retried'")
			}
			n, err = s.RetryDead(ctx(t), "", "a.example", later)
			mustNil(t, err, "retry host")
			if n != 2 {
				t.Fatalf("retried %d of host a", n)
			}
			if j := mustLease(t, s, later, "t9"); j.State != domain.JobLeased {
				t.Fatal("revived job not leasable")
			}
		}},
	}
}

// endDomainJobsCases: the job store cases of EndDomainJobs: it ends the
// queued jobs of every host a domain covers, in one operation, racing no
// lease. One case opens more stores with newStore.
func endDomainJobsCases(o options, newStore func(t *testing.T) Jobs) []testCase[Jobs] {
	return []testCase[Jobs]{
		{"EndDomainJobsEndsTheDomainsQueuedJobs", func(t *testing.T, s Jobs) {
			hosts := map[string]string{"due": "s.example", "held": "s.example", "later": "a.s.example", "port": "s.example:8443",
				"retried": "b.s.example", "done": "c.s.example", "failed": "d.s.example", "bads": "bads.example", "evil": "s.example.evil.org"}
			for id, h := range hosts {
				runAt := base
				switch id {
				case "held":
					runAt = base.Add(-time.Minute) // the first its host leases
				case "later":
					runAt = base.Add(time.Hour) // not due yet: ends all the same
				}
				enqueue(t, s, job(t, id, h, runAt))
			}
			only := func(host string) []string {
				var skip []string
				for _, h := range hosts {
					if h != host && !slices.Contains(skip, h) {
						skip = append(skip, h)
					}
				}
				return skip
			}
			for _, id := range []string{"held", "retried", "done", "failed"} {
				if j := mustLease(t, s, base, "t-"+id, only(hosts[id])...); JobName(j.ID) != id {
					t.Fatalf("leased %s, want %s", JobName(j.ID), id)
				}
			}
			mustNil(t, settle(t, s, retried("retried", "t-retried", 1, base, "HTTP 503")), "retry")
			mustNil(t, settle(t, s, succeeded("done", "t-done", 1, base)), "complete")
			mustNil(t, settle(t, s, dead("failed", "t-failed", 1, "gone", base)), "fail")
			before, err := s.Counts(ctx(t))
			mustNil(t, err, "counts")
			for _, d := range notDomains {
				_, err := s.EndDomainJobs(ctx(t), d, "suspended", base)
				mustIs(t, err, domain.ErrInvalidInput, fmt.Sprintf("end the jobs of %q", d))
			}

			now := base.Add(10 * time.Minute)
			n, err := s.EndDomainJobs(ctx(t), "s.example", "suspended", now)
			mustNil(t, err, "end the domain's jobs")
			if n != 4 {
				t.Fatalf("ended %d jobs, want 4 (due, later, port, retried)", n)
			}
			for _, id := range []string{"due", "later", "port", "retried"} {
				j := get(t, s, id)
				if j.State != domain.JobDead || j.LastError != "suspended" || j.LeaseToken != "" || j.LeaseOwner != "" {
					t.Fatalf("%s after the suspension: %+v", id, j)
				}
				sameTime(t, j.FinishedAt, now, id+" finishedAt")
				if want := map[string]int{"retried": 1}[id]; j.Attempts != want {
					t.Fatalf("%s: %d attempts, want %d (a suspension is not an attempt)", id, j.Attempts, want)
				}
			}
			if j := get(t, s, "held"); j.State != domain.JobLeased || j.LeaseToken != "t-held" {
				t.Fatalf("a leased job was touched: %+v", j)
			}
			for id, want := range map[string]string{"done": "", "failed": "gone"} {
				j := get(t, s, id)
				if !j.State.Finished() || j.LastError != want {
					t.Fatalf("a finished job was touched: %+v", j)
				}
				sameTime(t, j.FinishedAt, base, id+" finishedAt")
			}
			for _, id := range []string{"bads", "evil"} {
				if j := get(t, s, id); j.State != domain.JobQueued || j.LastError != "" || !j.FinishedAt.IsZero() {
					t.Fatalf("another host's job was touched: %+v", j)
				}
			}
			c, err := s.Counts(ctx(t))
			mustNil(t, err, "counts")
			if c[domain.JobQueued] != before[domain.JobQueued]-4 || c[domain.JobDead] != before[domain.JobDead]+4 ||
				c[domain.JobLeased] != 1 || c[domain.JobSucceeded] != 1 {
				t.Fatalf("counts %v after ending 4 of %v", c, before)
			}
			if n, err := s.EndDomainJobs(ctx(t), "s.example", "suspended", now.Add(time.Minute)); err != nil || n != 0 {
				t.Fatalf("a second suspension ended %d (%v), want 0", n, err)
			}
			if j := get(t, s, "due"); !j.FinishedAt.Equal(now) {
				t.Fatalf("a second suspension moved an ended job: %+v", j)
			}
			// None of them is leased again, whenever due; the other hosts'
			// jobs are.
			got := leaseBatch(t, s, ports.LeaseRequest{Token: "t-after", Now: now.Add(2 * time.Hour), Limit: 10})
			if ids := jobIDs(got); !slices.Equal(sortedCopy(ids), []string{"bads", "evil"}) {
				t.Fatalf("leased %v after the suspension, want [bads evil]", ids)
			}
			// The leased job still holds its host's slot: one job of the
			// host brought back waits for it under a cap of one.
			n, err = s.RetryDead(ctx(t), JobID("due"), "", now)
			mustNil(t, err, "retry an ended job")
			if j := get(t, s, "due"); n != 1 || j.State != domain.JobQueued || !j.FinishedAt.IsZero() {
				t.Fatalf("retried %d: %+v", n, j)
			}
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t-cap", Now: now, Limit: 10, PerHost: 1}); len(got) != 0 {
				t.Fatalf("a cap of one leased %v beside the held job of its host", jobIDs(got))
			}
			mustNil(t, settle(t, s, succeeded("held", "t-held", 1, now)), "the holder completes its job")
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "t-cap2", Now: now, Limit: 10, PerHost: 1}); fmt.Sprint(jobIDs(got)) != "[due]" {
				t.Fatalf("after the holder's completion a cap of one leased %v, want [due]", jobIDs(got))
			}
			// Retention: the ended jobs go when their FinishedAt is old.
			n, err = s.Purge(ctx(t), now)
			mustNil(t, err, "purge")
			if n != 2 {
				t.Fatalf("purged %d before the suspension, want 2 (done, failed)", n)
			}
			n, err = s.Purge(ctx(t), now.Add(time.Millisecond))
			mustNil(t, err, "purge")
			if n != 4 {
				t.Fatalf("purged %d after the suspension, want 4 (later, port, retried, held)", n)
			}
			for _, id := range []string{"later", "port", "retried"} {
				_, err := s.Get(ctx(t), JobID(id))
				mustIs(t, err, domain.ErrNotFound, id+" after the purge")
			}
		}},
		{"EndDomainJobsWithoutAReason", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "t.example", base))
			mustLease(t, s, base, "t1")
			mustNil(t, settle(t, s, retried("j1", "t1", 1, base, "HTTP 503")), "retry")
			n, err := s.EndDomainJobs(ctx(t), "t.example", "", base.Add(time.Minute))
			mustNil(t, err, "end without a reason")
			if j := get(t, s, "j1"); n != 1 || j.State != domain.JobDead || j.LastError != "" || !j.FinishedAt.Equal(base.Add(time.Minute)) {
				t.Fatalf("ended %d: %+v, want dead with no last error", n, j)
			}
		}},
		{"EndDomainJobsEndsExactlyWhatDomainCoversCovers", func(t *testing.T, s Jobs) {
			checkPinned(t)
			hosts := coverHosts()
			for i, cd := range coverDomains {
				t.Run(cd.d, func(t *testing.T) {
					st := s
					if i > 0 {
						st = newStore(t)
					}
					jobs := make([]domain.Job, len(hosts))
					want := map[string]bool{}
					for k, h := range hosts {
						j := job(t, fmt.Sprintf("c%04d", k), fmt.Sprintf("h%04d.example", k), base)
						j.Host = h
						jobs[k] = j
						want[j.ID] = domain.DomainCovers(cd.d, h)
					}
					enqueue(t, st, jobs...)
					n, err := st.EndDomainJobs(ctx(t), cd.d, "suspended", base)
					mustNil(t, err, "end the jobs of "+cd.d)
					all, err := st.List(ctx(t), ports.JobFilter{})
					mustNil(t, err, "list")
					ended := 0
					for _, j := range all {
						if got := j.State == domain.JobDead; got != want[j.ID] {
							t.Errorf("host %q: ended %v, domain.DomainCovers(%q) %v", j.Host, got, cd.d, want[j.ID])
						}
						if j.State == domain.JobDead {
							ended++
						}
					}
					if n != ended || len(all) != len(jobs) {
						t.Fatalf("EndDomainJobs said %d, %d of %d jobs are dead", n, ended, len(all))
					}
				})
			}
		}},
		{"EndDomainJobsRacesLeases", func(t *testing.T, s Jobs) {
			endDuringLeases(t, s, o)
		}},
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// endDuringLeases is the suspension's chaos case: workers on two store
// handles lease and complete the jobs of three hosts of one domain and of
// another host, and the domain is suspended while they do. Each job must
// end exactly one way: completed by the worker that leased it, or dead
// with the reason, never both (a suspension and a lease of one job never
// both win); the count EndDomainJobs returns is the dead ones; the other
// host's jobs all complete; and no host slot is left over.
func endDuringLeases(t *testing.T, s Jobs, o options) {
	const total, workers = 400, 8
	r := newRace(t, s, o)
	hosts := []string{"s.example", "a.s.example", "b.s.example:8443", "other.example"}
	all := make([]domain.Job, total)
	for i := range all {
		all[i] = job(t, fmt.Sprintf("r%03d", i), hosts[i%len(hosts)], base.Add(time.Duration(i)*time.Millisecond))
	}
	enqueue(t, s, all...)
	var (
		won     = map[string]int{} // under r.mu
		settled int                // under r.mu
		ended   = make(chan struct{})
	)
	r.start(workers, func(w, i int, store Jobs) bool {
		tok := fmt.Sprintf("e%02d-%05d", w, i)
		jobs, ok := r.lease(store, ports.LeaseRequest{Owner: "w", Token: tok, Now: base.Add(time.Second), Until: base.Add(lease), Limit: 1 + i%4, PerHost: 2})
		if !ok {
			return true
		}
		if len(jobs) == 0 {
			select {
			case <-ended:
				return true // nothing left: the rest ended dead
			default:
				time.Sleep(time.Millisecond)
				return false
			}
		}
		batch := make([]ports.Settlement, len(jobs))
		for k, j := range jobs {
			batch[k] = succeeded(j.ID, tok, 1, base)
		}
		time.Sleep(200 * time.Microsecond) // the delivery
		lost, ok := r.settle(store, batch)
		if !ok {
			return true
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for k, st := range batch {
			if lost[k] != nil {
				r.errs = append(r.errs, fmt.Errorf("the holder's completion of %s was lost: %v", JobName(st.ID), lost[k]))
			} else {
				won[st.ID]++
				settled++
			}
		}
		return false
	})
	// Suspend once a tenth of the jobs completed: most are still queued,
	// and leases go on beside the suspension.
	for {
		r.mu.Lock()
		k, bad := settled, len(r.errs) > 0
		r.mu.Unlock()
		if k >= total/10 || bad || time.Now().After(r.deadline) {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	n, err := s.EndDomainJobs(ctx(t), "s.example", "suspended", base.Add(time.Minute))
	close(ended)
	if err != nil {
		r.fail(fmt.Errorf("end the domain's jobs: %w", err))
	}
	if !r.wait(t) {
		return
	}
	dead := 0
	for _, j := range all {
		got := get(t, s, j.ID)
		switch {
		case won[j.ID] == 1 && got.State == domain.JobSucceeded:
		case won[j.ID] == 0 && got.State == domain.JobDead && got.LastError == "suspended" && j.Host != "other.example":
			dead++
		default:
			t.Errorf("job %s of %s completed %d times, now %s (%q)", JobName(j.ID), j.Host, won[j.ID], got.State, got.LastError)
		}
	}
	if dead != n || n == 0 {
		t.Fatalf("EndDomainJobs ended %d jobs, %d are dead by it (and it must have ended some: it ran with %d of %d completed)", n, dead, total/10, total)
	}
	r.noSlotLeft(t, hosts, base.Add(time.Second))
}
