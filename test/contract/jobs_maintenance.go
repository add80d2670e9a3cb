package contract

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

// reapCases: the job store cases of Reap: it requeues the jobs whose lease
// expired, counting an attempt, and ends those at their last.
func reapCases() []testCase[Jobs] {
	return []testCase[Jobs]{
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
			if j := mustLease(t, s, now, "t3"); JobName(j.ID) != "expired" {
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
	}
}

// purgeCases: the job store cases of Purge: it deletes old finished jobs,
// and a body with its last job.
func purgeCases() []testCase[Jobs] {
	return []testCase[Jobs]{
		{"PurgeRemovesOnlyOldFinished", func(t *testing.T, s Jobs) {
			for _, id := range []string{"old-ok", "old-dead", "new-ok", "queued", "leased"} {
				enqueue(t, s, job(t, id, id+".example", base))
			}
			finish := func(id string, isDead bool, at time.Time) {
				mustLease(t, s, base, "t-"+id, hostsExcept(id)...)
				if isDead {
					mustNil(t, settle(t, s, dead(id, "t-"+id, 1, "x", at)), "fail")
				} else {
					mustNil(t, settle(t, s, succeeded(id, "t-"+id, 1, at)), "complete")
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
				_, err := s.Get(ctx(t), JobID(id))
				if (err == nil) != want {
					t.Errorf("%s present = %v, want %v", id, err == nil, want)
				}
			}
		}},
		{"BodyGoesWithItsLastJob", func(t *testing.T, s Jobs) {
			payload := []byte(`{"id":"https://local.example/activities/purge","type":"Create"}`)
			id := domain.BodyOf(payload)
			a, b := job(t, "a", "a.example", base), job(t, "b", "b.example", base)
			a.Payload, b.Payload = payload, payload
			other := job(t, "other", "other.example", base) // its own body
			enqueue(t, s, a, b, other)
			finish := func(id string, at time.Time) {
				t.Helper()
				var skip []string
				for _, h := range []string{"a", "b", "c", "d", "e", "other"} {
					if h != id {
						skip = append(skip, h+".example")
					}
				}
				mustLease(t, s, base, "t-"+id, skip...)
				mustNil(t, settle(t, s, succeeded(id, "t-"+id, 1, at)), "complete "+id)
			}
			refersTo := func(jobID, body string) domain.Job {
				t.Helper()
				r := job(t, jobID, jobID+".example", base)
				r.Payload, r.BodyID = nil, body
				enqueue(t, s, r)
				return get(t, s, jobID)
			}
			// The first of two jobs purged: the body stays for the other.
			finish("a", base)
			n, err := s.Purge(ctx(t), base.Add(time.Hour))
			mustNil(t, err, "purge a")
			if n != 1 {
				t.Fatalf("purged %d, want 1", n)
			}
			if got := get(t, s, "b"); string(got.Payload) != string(payload) {
				t.Fatalf("b lost its body when a was purged: %q", got.Payload)
			}
			if got := refersTo("c", id); string(got.Payload) != string(payload) {
				t.Fatalf("the body is gone after its first job's purge: %q", got.Payload)
			}
			// Its last jobs purged: the body goes with them; the other
			// job's body stays.
			finish("b", base)
			finish("c", base)
			n, err = s.Purge(ctx(t), base.Add(time.Hour))
			mustNil(t, err, "purge b, c")
			if n != 2 {
				t.Fatalf("purged %d, want 2", n)
			}
			if got := refersTo("d", id); len(got.Payload) != 0 || got.BodyID != id {
				t.Fatalf("the body outlived its last job: job d has body %q payload %q", got.BodyID, got.Payload)
			}
			if got := get(t, s, "other"); string(got.Payload) != string(other.Payload) {
				t.Fatalf("another job's body went too: %q", got.Payload)
			}
			// Enqueued again with the payload, the body is back.
			e := job(t, "e", "e.example", base)
			e.Payload = payload
			enqueue(t, s, e)
			if got := get(t, s, "e"); string(got.Payload) != string(payload) {
				t.Fatalf("a body stored again after its purge: %q", got.Payload)
			}
		}},
	}
}

// deferHostCases: the job store cases of DeferHost: it holds a quarantined
// host's queued jobs; ResumeHost makes them due again.
func deferHostCases() []testCase[Jobs] {
	return []testCase[Jobs]{
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
			if j := mustLease(t, s, base, "t1"); JobName(j.ID) != "other-host" {
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
	}
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
