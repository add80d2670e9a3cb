package contract

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Jobs is what a job store adapter implements: the queue and its admin view.
type Jobs interface {
	ports.JobStore
	ports.JobAdmin
}

const lease = 2 * time.Minute

// job builds a valid queued job to inbox on host, due at runAt.
func job(t *testing.T, id, host string, runAt time.Time) domain.Job {
	t.Helper()
	inbox := "https://" + host + "/inbox"
	j, err := domain.NewJob(id, "https://local.example/activities/"+id, inbox, "actor-1",
		"https://local.example/users/alice#main-key", []byte(`{"id":"`+id+`","type":"Create"}`), base)
	if err != nil {
		t.Fatal(err)
	}
	j.RunAt = runAt
	return j
}

func enqueue(t *testing.T, s Jobs, jobs ...domain.Job) {
	t.Helper()
	n, err := s.Enqueue(ctx(t), jobs)
	mustNil(t, err, "enqueue")
	if n != len(jobs) {
		t.Fatalf("enqueue inserted %d of %d", n, len(jobs))
	}
}

func leaseAt(t *testing.T, s Jobs, now time.Time, token string, skip ...string) (domain.Job, error) {
	t.Helper()
	return s.Lease(ctx(t), ports.LeaseRequest{Owner: "worker-" + token, Token: token, Now: now, Until: now.Add(lease), SkipHosts: skip})
}

func mustLease(t *testing.T, s Jobs, now time.Time, token string, skip ...string) domain.Job {
	t.Helper()
	j, err := leaseAt(t, s, now, token, skip...)
	mustNil(t, err, "lease")
	return j
}

func get(t *testing.T, s Jobs, id string) domain.Job {
	t.Helper()
	j, err := s.Get(ctx(t), id)
	mustNil(t, err, "get "+id)
	return j
}

// JobStore runs the contract of ports.JobStore and ports.JobAdmin.
func JobStore(t *testing.T, newStore func(t *testing.T) Jobs, opts ...Option) {
	runCases(t, newStore, opts, []testCase[Jobs]{
		{"EnqueueThenGet", func(t *testing.T, s Jobs) {
			j := job(t, "j1", "a.example", base)
			enqueue(t, s, j)
			got := get(t, s, "j1")
			if got.DedupeKey != j.DedupeKey || got.Inbox != j.Inbox || got.Host != "a.example" ||
				got.ActivityID != j.ActivityID || got.SenderID != j.SenderID || got.KeyID != j.KeyID ||
				string(got.Payload) != string(j.Payload) || got.State != domain.JobQueued || got.Attempts != 0 {
				t.Fatalf("stored job differs:\n got %+v\nwant %+v", got, j)
			}
			sameTime(t, got.RunAt, base, "runAt")
			sameTime(t, got.CreatedAt, base, "createdAt")
			if !got.FinishedAt.IsZero() || got.LeaseToken != "" {
				t.Fatalf("new job has lease or finish: %+v", got)
			}
			_, err := s.Get(ctx(t), "nope")
			mustIs(t, err, domain.ErrNotFound, "get unknown")
		}},
		{"DedupeIsANoOp", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			again := job(t, "j2", "a.example", base.Add(time.Hour))
			again.DedupeKey = get(t, s, "j1").DedupeKey
			n, err := s.Enqueue(ctx(t), []domain.Job{again})
			mustNil(t, err, "enqueue duplicate")
			if n != 0 {
				t.Fatalf("duplicate dedupe key inserted %d", n)
			}
			if _, err := s.Get(ctx(t), "j2"); err == nil {
				t.Fatal("duplicate was stored")
			}
			sameTime(t, get(t, s, "j1").RunAt, base, "original untouched")
			// A batch holding a known key, a new one and a repeat of the new one.
			b1, b2 := job(t, "b1", "a.example", base), job(t, "b2", "a.example", base)
			b2.DedupeKey = b1.DedupeKey
			n, err = s.Enqueue(ctx(t), []domain.Job{again, b1, b2})
			mustNil(t, err, "mixed batch")
			if n != 1 {
				t.Fatalf("mixed batch inserted %d, want 1", n)
			}
			c, _ := s.Counts(ctx(t))
			if c[domain.JobQueued] != 2 {
				t.Fatalf("queued = %d, want 2", c[domain.JobQueued])
			}
		}},
		{"EnqueueIDClashInsertsNothing", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			clash := job(t, "j1", "b.example", base) // same id, another delivery
			fresh := job(t, "j2", "c.example", base)
			_, err := s.Enqueue(ctx(t), []domain.Job{fresh, clash})
			mustIs(t, err, domain.ErrAlreadyExists, "id clash")
			if _, err := s.Get(ctx(t), "j2"); err == nil {
				t.Fatal("a batch that failed inserted part of itself")
			}
			if got := get(t, s, "j1"); got.Host != "a.example" {
				t.Fatalf("the clash overwrote the first job: %+v", got)
			}
		}},
		{"EnqueueLargeBatch", func(t *testing.T, s Jobs) {
			jobs := make([]domain.Job, 10_000)
			for i := range jobs {
				jobs[i] = job(t, fmt.Sprintf("j%05d", i), fmt.Sprintf("h%03d.example", i%1000), base)
			}
			enqueue(t, s, jobs...)
			n, err := s.Enqueue(ctx(t), jobs)
			mustNil(t, err, "re-enqueue")
			if n != 0 {
				t.Fatalf("re-enqueue of a whole batch inserted %d", n)
			}
			c, _ := s.Counts(ctx(t))
			if c[domain.JobQueued] != 10_000 {
				t.Fatalf("queued = %d", c[domain.JobQueued])
			}
		}},
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
				if j.ID != want {
					t.Fatalf("lease %d = %s, want %s", i, j.ID, want)
				}
			}
			_, err := leaseAt(t, s, base, "t9")
			mustIs(t, err, domain.ErrNoJob, "future job leased early")
			if j := mustLease(t, s, base.Add(10*time.Second), "t10"); j.ID != "future" {
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
			if j := mustLease(t, s, base, "t1", "a.example"); j.ID != "b1" {
				t.Fatalf("got %s, want b1 (a.example skipped)", j.ID)
			}
			_, err := leaseAt(t, s, base, "t2", "a.example", "c.example")
			mustIs(t, err, domain.ErrNoJob, "only skipped hosts left")
			if j := mustLease(t, s, base, "t3"); j.ID != "a1" {
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
						j, err := s.Lease(ctx(t), ports.LeaseRequest{Owner: "w", Token: tok, Now: base, Until: base.Add(lease)})
						if errors.Is(err, domain.ErrNoJob) {
							return
						}
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						if prev, dup := seen[j.ID]; dup {
							mu.Unlock()
							errs <- fmt.Errorf("job %s leased twice: tokens %s and %s", j.ID, prev, tok)
							return
						}
						seen[j.ID] = tok
						mu.Unlock()
						if err := s.Complete(ctx(t), j.ID, tok, base); err != nil {
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
		{"CompleteIsFencedByToken", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "good")
			mustIs(t, s.Complete(ctx(t), "j1", "stale", base), domain.ErrLeaseLost, "complete with wrong token")
			mustIs(t, s.Complete(ctx(t), "j1", "", base), domain.ErrLeaseLost, "complete with empty token")
			mustIs(t, s.Complete(ctx(t), "nope", "good", base), domain.ErrLeaseLost, "complete unknown job")
			if got := get(t, s, "j1"); got.State != domain.JobLeased || got.LeaseToken != "good" {
				t.Fatalf("stale complete changed the job: %+v", got)
			}
			mustNil(t, s.Complete(ctx(t), "j1", "good", base.Add(time.Second)), "complete")
			got := get(t, s, "j1")
			if got.State != domain.JobSucceeded || got.Attempts != 1 || got.LeaseToken != "" {
				t.Fatalf("completed job %+v", got)
			}
			sameTime(t, got.FinishedAt, base.Add(time.Second), "finishedAt")
			mustIs(t, s.Complete(ctx(t), "j1", "good", base), domain.ErrLeaseLost, "second complete")
		}},
		{"StaleHolderCannotOverwriteNextHolder", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "first")
			// The first holder stalls past its lease; the reaper requeues and
			// a second worker takes the job.
			r, err := s.Reap(ctx(t), base.Add(lease+time.Second), domain.MaxAttempts)
			mustNil(t, err, "reap")
			if r.Requeued != 1 || r.Dead != 0 {
				t.Fatalf("reap = %+v", r)
			}
			mustLease(t, s, base.Add(lease+time.Second), "second")
			for name, err := range map[string]error{
				"complete": s.Complete(ctx(t), "j1", "first", base),
				"retry":    s.Retry(ctx(t), "j1", "first", ports.RetryUpdate{Attempts: 5, RunAt: base.Add(time.Hour), LastError: "x"}),
				"fail":     s.Fail(ctx(t), "j1", "first", 9, "stale", base),
				"release":  s.Release(ctx(t), "j1", "first", base),
			} {
				mustIs(t, err, domain.ErrLeaseLost, "stale "+name)
			}
			got := get(t, s, "j1")
			if got.State != domain.JobLeased || got.LeaseToken != "second" || got.Attempts != 1 || got.LastError == "" {
				t.Fatalf("stale holder changed the job: %+v", got)
			}
			mustNil(t, s.Complete(ctx(t), "j1", "second", base.Add(lease+2*time.Second)), "second holder completes")
		}},
		{"ExpiredButUnreapedHolderStillHolds", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "tok")
			mustNil(t, s.Complete(ctx(t), "j1", "tok", base.Add(lease+time.Minute)), "late complete before any reap")
		}},
		{"RetryRequeuesForLater", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "tok")
			runAt := base.Add(16 * time.Second)
			mustNil(t, s.Retry(ctx(t), "j1", "tok", ports.RetryUpdate{Attempts: 1, RunAt: runAt, LastError: "HTTP 503"}), "retry")
			got := get(t, s, "j1")
			if got.State != domain.JobQueued || got.Attempts != 1 || got.LastError != "HTTP 503" || got.LeaseToken != "" || !got.LeaseUntil.IsZero() {
				t.Fatalf("retried job %+v", got)
			}
			sameTime(t, got.RunAt, runAt, "runAt")
			_, err := leaseAt(t, s, runAt.Add(-time.Millisecond), "early")
			mustIs(t, err, domain.ErrNoJob, "leased before its retry time")
			if j := mustLease(t, s, runAt, "tok2"); j.Attempts != 1 {
				t.Fatalf("attempts lost: %+v", j)
			}
			mustIs(t, s.Retry(ctx(t), "j1", "tok", ports.RetryUpdate{Attempts: 2, RunAt: runAt}), domain.ErrLeaseLost, "retry with old token")
		}},
		{"FailIsDeadWithReason", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "tok")
			mustNil(t, s.Fail(ctx(t), "j1", "tok", 1, "HTTP 410 Gone", base.Add(time.Second)), "fail")
			got := get(t, s, "j1")
			if got.State != domain.JobDead || got.Attempts != 1 || got.LastError != "HTTP 410 Gone" || got.LeaseToken != "" {
				t.Fatalf("dead job %+v", got)
			}
			sameTime(t, got.FinishedAt, base.Add(time.Second), "finishedAt")
			_, err := leaseAt(t, s, base.Add(time.Hour), "again")
			mustIs(t, err, domain.ErrNoJob, "dead job leased")
		}},
		{"ReleaseSpendsNoAttempt", func(t *testing.T, s Jobs) {
			j := job(t, "j1", "a.example", base)
			enqueue(t, s, j)
			mustLease(t, s, base, "tok")
			mustNil(t, s.Retry(ctx(t), "j1", "tok", ports.RetryUpdate{Attempts: 3, RunAt: base, LastError: "x"}), "retry")
			mustLease(t, s, base, "tok2")
			until := base.Add(time.Hour)
			mustNil(t, s.Release(ctx(t), "j1", "tok2", until), "release")
			got := get(t, s, "j1")
			if got.State != domain.JobQueued || got.Attempts != 3 || got.LeaseToken != "" {
				t.Fatalf("released job %+v", got)
			}
			sameTime(t, got.RunAt, until, "runAt")
		}},
		{"ReapRequeuesExpiredAndCountsAttempt", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "expired", "a.example", base), job(t, "live", "b.example", base.Add(time.Second)))
			mustLease(t, s, base, "t1")
			mustLease(t, s, base.Add(time.Minute), "t2")
			now := base.Add(lease + time.Second) // t1 expired, t2 (until base+3m) holds
			r, err := s.Reap(ctx(t), now, domain.MaxAttempts)
			mustNil(t, err, "reap")
			if r.Requeued != 1 || r.Dead != 0 {
				t.Fatalf("reap = %+v", r)
			}
			got := get(t, s, "expired")
			if got.State != domain.JobQueued || got.Attempts != 1 || got.LeaseToken != "" || got.LastError == "" {
				t.Fatalf("reaped job %+v", got)
			}
			if !got.RunAt.After(base) && !got.RunAt.Equal(now) {
				t.Fatalf("reaped job due %v; want due by %v", got.RunAt, now)
			}
			if live := get(t, s, "live"); live.State != domain.JobLeased || live.LeaseToken != "t2" {
				t.Fatalf("live lease reaped: %+v", live)
			}
			if j := mustLease(t, s, now, "t3"); j.ID != "expired" {
				t.Fatalf("reaped job not runnable: got %s", j.ID)
			}
		}},
		{"ReapAtLastAttemptIsDead", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "poison", "a.example", base))
			now := base
			for i := 1; i <= domain.MaxAttempts; i++ {
				mustLease(t, s, now, fmt.Sprintf("t%d", i))
				now = now.Add(lease + time.Second)
				r, err := s.Reap(ctx(t), now, domain.MaxAttempts)
				mustNil(t, err, "reap")
				if i < domain.MaxAttempts && r.Requeued != 1 {
					t.Fatalf("reap %d = %+v", i, r)
				}
				if i == domain.MaxAttempts && r.Dead != 1 {
					t.Fatalf("the %dth reap should kill the job: %+v", i, r)
				}
			}
			got := get(t, s, "poison")
			if got.State != domain.JobDead || got.Attempts != domain.MaxAttempts || got.FinishedAt.IsZero() || got.LastError == "" {
				t.Fatalf("poison job %+v", got)
			}
		}},
		{"PurgeRemovesOnlyOldFinished", func(t *testing.T, s Jobs) {
			for _, id := range []string{"old-ok", "old-dead", "new-ok", "queued", "leased"} {
				enqueue(t, s, job(t, id, id+".example", base))
			}
			finish := func(id string, dead bool, at time.Time) {
				mustLease(t, s, base, "t-"+id, hostsExcept(id)...)
				if dead {
					mustNil(t, s.Fail(ctx(t), id, "t-"+id, 1, "x", at), "fail")
				} else {
					mustNil(t, s.Complete(ctx(t), id, "t-"+id, at), "complete")
				}
			}
			finish("old-ok", false, base)
			finish("old-dead", true, base)
			finish("new-ok", false, base.Add(2*time.Hour))
			mustLease(t, s, base, "t-leased", hostsExcept("leased")...)
			n, err := s.Purge(ctx(t), base.Add(time.Hour))
			mustNil(t, err, "purge")
			if n != 2 {
				t.Fatalf("purged %d, want 2", n)
			}
			for id, want := range map[string]bool{"old-ok": false, "old-dead": false, "new-ok": true, "queued": true, "leased": true} {
				_, err := s.Get(ctx(t), id)
				if (err == nil) != want {
					t.Errorf("%s present = %v, want %v", id, err == nil, want)
				}
			}
		}},
		{"DeferAndResumeHost", func(t *testing.T, s Jobs) {
			until := base.Add(time.Hour)
			enqueue(t, s,
				job(t, "due", "q.example", base),
				job(t, "backoff-inside", "q.example", base.Add(30*time.Minute)),
				job(t, "backoff-beyond", "q.example", base.Add(3*time.Hour)),
				job(t, "other-host", "ok.example", base),
			)
			n, err := s.DeferHost(ctx(t), "q.example", until)
			mustNil(t, err, "defer")
			if n != 2 {
				t.Fatalf("deferred %d, want 2", n)
			}
			sameTime(t, get(t, s, "due").RunAt, until, "due deferred")
			sameTime(t, get(t, s, "backoff-inside").RunAt, until, "inside deferred")
			sameTime(t, get(t, s, "backoff-beyond").RunAt, base.Add(3*time.Hour), "beyond untouched")
			sameTime(t, get(t, s, "other-host").RunAt, base, "other host untouched")
			if j := mustLease(t, s, base, "t1"); j.ID != "other-host" {
				t.Fatalf("got %s", j.ID)
			}
			_, err = leaseAt(t, s, base, "t2")
			mustIs(t, err, domain.ErrNoJob, "deferred host leased")
			for _, id := range []string{"due", "backoff-inside"} {
				if a := get(t, s, id).Attempts; a != 0 {
					t.Fatalf("defer spent an attempt on %s: %d", id, a)
				}
			}
			lift := base.Add(10 * time.Minute)
			n, err = s.ResumeHost(ctx(t), "q.example", until, lift)
			mustNil(t, err, "resume")
			if n != 2 {
				t.Fatalf("resumed %d, want 2", n)
			}
			sameTime(t, get(t, s, "due").RunAt, lift, "due resumed")
			sameTime(t, get(t, s, "backoff-beyond").RunAt, base.Add(3*time.Hour), "beyond still untouched")
			if j := mustLease(t, s, lift, "t3"); j.Host != "q.example" {
				t.Fatalf("resumed host not leasable: %+v", j)
			}
		}},
		{"AdminCountsAndLists", func(t *testing.T, s Jobs) {
			for i := 0; i < 5; i++ {
				enqueue(t, s, job(t, fmt.Sprintf("a%d", i), "a.example", base))
			}
			for i := 0; i < 3; i++ {
				enqueue(t, s, job(t, fmt.Sprintf("b%d", i), "b.example", base))
			}
			j := mustLease(t, s, base, "t1")
			mustNil(t, s.Fail(ctx(t), j.ID, "t1", 1, "gone", base), "fail")
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
		{"RetryDeadRequeues", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "d1", "a.example", base), job(t, "d2", "a.example", base), job(t, "d3", "b.example", base), job(t, "q", "c.example", base.Add(time.Hour)))
			for i := 0; i < 3; i++ {
				j := mustLease(t, s, base, fmt.Sprintf("t%d", i))
				mustNil(t, s.Fail(ctx(t), j.ID, fmt.Sprintf("t%d", i), 16, "gave up", base), "fail")
			}
			later := base.Add(time.Minute)
			n, err := s.RetryDead(ctx(t), "d3", "", later)
			mustNil(t, err, "retry one")
			if n != 1 {
				t.Fatalf("retried %d", n)
			}
			got := get(t, s, "d3")
			if got.State != domain.JobQueued || got.Attempts != 0 || !got.FinishedAt.IsZero() {
				t.Fatalf("revived %+v", got)
			}
			sameTime(t, got.RunAt, later, "runAt")
			n, _ = s.RetryDead(ctx(t), "q", "", later)
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
	})
}

// hostsExcept lets the purge case lease one specific job: every other host
// of that case is skipped.
func hostsExcept(id string) []string {
	var out []string
	for _, h := range []string{"old-ok", "old-dead", "new-ok", "queued", "leased"} {
		if h != id {
			out = append(out, h+".example")
		}
	}
	return out
}
