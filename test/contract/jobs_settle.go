package contract

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// settleCases: the job store cases of Settle: it applies an outcome only
// under the token that holds the job, reports the lost ones one by one,
// and refuses an invalid batch whole.
func settleCases() []testCase[Jobs] {
	return []testCase[Jobs]{
		{"CompleteIsFencedByToken", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "good")
			mustIs(t, settle(t, s, succeeded("j1", "stale", 1, base)), domain.ErrLeaseLost, "complete with wrong token")
			mustIs(t, settle(t, s, succeeded("j1", "", 1, base)), domain.ErrLeaseLost, "complete with empty token")
			mustIs(t, settle(t, s, succeeded("nope", "good", 1, base)), domain.ErrLeaseLost, "complete unknown job")
			if got := get(t, s, "j1"); got.State != domain.JobLeased || got.LeaseToken != "good" {
				t.Fatalf("stale complete changed the job: %+v", got)
			}
			mustNil(t, settle(t, s, succeeded("j1", "good", 1, base.Add(time.Second))), "complete")
			got := get(t, s, "j1")
			if got.State != domain.JobSucceeded || got.Attempts != 1 || got.LeaseToken != "" {
				t.Fatalf("completed job %+v", got)
			}
			sameTime(t, got.FinishedAt, base.Add(time.Second), "finishedAt")
			mustIs(t, settle(t, s, succeeded("j1", "good", 1, base)), domain.ErrLeaseLost, "second complete")
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
			second := mustLease(t, s, base.Add(lease+time.Second), "second")
			stale := second
			stale.LeaseToken = "first"
			for name, err := range map[string]error{
				"complete": settle(t, s, succeeded("j1", "first", 1, base)),
				"retry":    settle(t, s, retried("j1", "first", 5, base.Add(time.Hour), "x")),
				"fail":     settle(t, s, dead("j1", "first", 9, "stale", base)),
				"release":  settle(t, s, released(stale, base)),
			} {
				mustIs(t, err, domain.ErrLeaseLost, "stale "+name)
			}
			got := get(t, s, "j1")
			if got.State != domain.JobLeased || got.LeaseToken != "second" || got.Attempts != 1 || got.LastError == "" {
				t.Fatalf("stale holder changed the job: %+v", got)
			}
			mustNil(t, settle(t, s, succeeded("j1", "second", 2, base.Add(lease+2*time.Second))), "second holder completes")
		}},
		{"ExpiredButUnreapedHolderStillHolds", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "tok")
			mustNil(t, settle(t, s, succeeded("j1", "tok", 1, base.Add(lease+time.Minute))), "late complete before any reap")
		}},
		{"RetryRequeuesForLater", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "tok")
			runAt := base.Add(16 * time.Second)
			mustNil(t, settle(t, s, retried("j1", "tok", 1, runAt, "HTTP 503")), "retry")
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
			mustIs(t, settle(t, s, retried("j1", "tok", 2, runAt, "")), domain.ErrLeaseLost, "retry with old token")
		}},
		{"FailIsDeadWithReason", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			mustLease(t, s, base, "tok")
			mustNil(t, settle(t, s, dead("j1", "tok", 1, "HTTP 410 Gone", base.Add(time.Second))), "fail")
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
			mustNil(t, settle(t, s, retried("j1", "tok", 3, base, "x")), "retry")
			again := mustLease(t, s, base, "tok2")
			until := base.Add(time.Hour)
			mustNil(t, settle(t, s, released(again, until)), "release")
			got := get(t, s, "j1")
			if got.State != domain.JobQueued || got.Attempts != 3 || got.LastError != "x" || got.LeaseToken != "" {
				t.Fatalf("released job %+v", got)
			}
			sameTime(t, got.RunAt, until, "runAt")
		}},
		{"SettleMixedBatchReportsLostLeases", func(t *testing.T, s Jobs) {
			for i, id := range []string{"stale", "ok", "retry", "dead", "release"} {
				enqueue(t, s, job(t, id, id+".example", base.Add(time.Duration(i-10)*time.Second)))
			}
			// "stale" is leased with a short lease, reaped, and leased again
			// by someone else: its first token is stale.
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "old", Now: base, Until: base.Add(time.Second), Limit: 1}); fmt.Sprint(jobIDs(got)) != "[stale]" {
				t.Fatalf("lease stale: %v", jobIDs(got))
			}
			batch := leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 10})
			if len(batch) != 4 {
				t.Fatalf("leased %v", jobIDs(batch))
			}
			later := base.Add(2 * time.Second)
			if r, err := s.Reap(ctx(t), later, domain.MaxAttempts); err != nil || r.Requeued != 1 {
				t.Fatalf("reap %+v %v", r, err)
			}
			if got := leaseBatch(t, s, ports.LeaseRequest{Token: "new", Now: later, Limit: 10}); fmt.Sprint(jobIDs(got)) != "[stale]" {
				t.Fatalf("re-lease: %v", jobIDs(got))
			}
			var rel domain.Job
			for _, j := range batch {
				if JobName(j.ID) == "release" {
					rel = j
				}
			}
			runAt := base.Add(time.Minute)
			lost, err := s.Settle(ctx(t), []ports.Settlement{
				succeeded("ok", "t1", 1, later),
				retried("retry", "t1", 1, runAt, "HTTP 503"),
				succeeded("stale", "old", 1, later), // lost: reaped and re-leased
				dead("dead", "t1", 1, "HTTP 410", later),
				released(rel, runAt),
				succeeded("nope", "t1", 1, later),   // lost: no such job
				succeeded("ok", "t1", 7, later),     // lost: the first settlement of ok ended its lease
				retried("retry", "", 9, later, "x"), // lost: no token
			})
			mustNil(t, err, "settle")
			if len(lost) != 8 {
				t.Fatalf("%d results for 8 settlements", len(lost))
			}
			for i, want := range []bool{false, false, true, false, false, true, true, true} {
				if want {
					mustIs(t, lost[i], domain.ErrLeaseLost, fmt.Sprintf("settlement %d", i))
				} else {
					mustNil(t, lost[i], fmt.Sprintf("settlement %d", i))
				}
			}
			if j := get(t, s, "ok"); j.State != domain.JobSucceeded || j.Attempts != 1 || j.LeaseToken != "" || !j.FinishedAt.Equal(later) {
				t.Fatalf("ok: %+v", j)
			}
			if j := get(t, s, "retry"); j.State != domain.JobQueued || j.Attempts != 1 || j.LastError != "HTTP 503" || !j.RunAt.Equal(runAt) || j.LeaseToken != "" {
				t.Fatalf("retry: %+v", j)
			}
			if j := get(t, s, "dead"); j.State != domain.JobDead || j.LastError != "HTTP 410" || !j.FinishedAt.Equal(later) {
				t.Fatalf("dead: %+v", j)
			}
			if j := get(t, s, "release"); j.State != domain.JobQueued || j.Attempts != 0 || !j.RunAt.Equal(runAt) || !j.LeaseUntil.IsZero() {
				t.Fatalf("release: %+v", j)
			}
			if j := get(t, s, "stale"); j.State != domain.JobLeased || j.LeaseToken != "new" || j.Attempts != 1 {
				t.Fatalf("a stale settlement changed the next holder's job: %+v", j)
			}
		}},
		{"SettleRefusesAnInvalidBatchWhole", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base), job(t, "j2", "b.example", base))
			leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 2})
			_, err := s.Settle(ctx(t), []ports.Settlement{
				succeeded("j1", "t1", 1, base),
				{ID: JobID("j2"), Token: "t1", State: domain.JobLeased},
			})
			mustIs(t, err, domain.ErrInvalidInput, "settle to leased")
			if j := get(t, s, "j1"); j.State != domain.JobLeased {
				t.Fatalf("part of a refused batch was applied: %+v", j)
			}
		}},
	}
}
