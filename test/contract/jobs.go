package contract

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// Jobs is what a job store adapter implements: the queue and its admin view.
type Jobs interface {
	ports.JobStore
	ports.JobAdmin
}

const lease = 2 * time.Minute

// newJobs is s behind ports/checked.
func newJobs(s Jobs) Jobs { return checked.NewJobs(s) }

// job builds a valid queued job to inbox on host, due at runAt.
func job(t *testing.T, id, host string, runAt time.Time) domain.Job {
	t.Helper()
	inbox := "https://" + host + "/inbox"
	j, err := domain.NewJob(JobID(id), "https://local.example/activities/"+id, inbox, "actor-1",
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
	jobs, err := s.LeaseBatch(ctx(t), ports.LeaseRequest{Owner: "worker-" + token, Token: token, Now: now, Until: now.Add(lease), Limit: 1, SkipHosts: skip})
	if err != nil {
		return domain.Job{}, err
	}
	switch len(jobs) {
	case 0:
		return domain.Job{}, domain.ErrNoJob
	case 1:
		return jobs[0], nil
	}
	t.Fatalf("a lease of limit 1 returned %d jobs", len(jobs))
	return domain.Job{}, nil
}

func mustLease(t *testing.T, s Jobs, now time.Time, token string, skip ...string) domain.Job {
	t.Helper()
	j, err := leaseAt(t, s, now, token, skip...)
	mustNil(t, err, "lease")
	return j
}

// leaseBatch leases with req's Owner, Until and Limit filled in when zero.
func leaseBatch(t *testing.T, s Jobs, req ports.LeaseRequest) []domain.Job {
	t.Helper()
	if req.Owner == "" {
		req.Owner = "worker-" + req.Token
	}
	if req.Until.IsZero() {
		req.Until = req.Now.Add(lease)
	}
	jobs, err := s.LeaseBatch(ctx(t), req)
	mustNil(t, err, "lease batch")
	for i, j := range jobs {
		if j.State != domain.JobLeased || j.LeaseToken != req.Token || !j.LeaseUntil.Equal(req.Until) {
			t.Fatalf("leased job %d of the batch: %+v", i, j)
		}
		if i > 0 && j.RunAt.Before(jobs[i-1].RunAt) {
			t.Fatalf("batch not oldest first: %s (%v) after %s (%v)", j.ID, j.RunAt, jobs[i-1].ID, jobs[i-1].RunAt)
		}
	}
	return jobs
}

func jobIDs(jobs []domain.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = JobName(j.ID)
	}
	return out
}

// settle applies one settlement and returns its outcome: the store's
// error, else the job's (nil, or ErrLeaseLost).
func settle(t *testing.T, s Jobs, st ports.Settlement) error {
	t.Helper()
	lost, err := s.Settle(ctx(t), []ports.Settlement{st})
	if err != nil {
		return err
	}
	if len(lost) != 1 {
		t.Fatalf("settle of one job returned %d results", len(lost))
	}
	return lost[0]
}

func succeeded(id, token string, attempts int, at time.Time) ports.Settlement {
	return ports.Settlement{ID: JobID(id), Token: token, State: domain.JobSucceeded, Attempts: attempts, FinishedAt: at}
}

func retried(id, token string, attempts int, runAt time.Time, reason string) ports.Settlement {
	return ports.Settlement{ID: JobID(id), Token: token, State: domain.JobQueued, Attempts: attempts, RunAt: runAt, LastError: reason}
}

func dead(id, token string, attempts int, reason string, at time.Time) ports.Settlement {
	return ports.Settlement{ID: JobID(id), Token: token, State: domain.JobDead, Attempts: attempts, LastError: reason, FinishedAt: at}
}

// released puts a leased job back without spending an attempt: its
// attempts and last error as they were.
func released(j domain.Job, runAt time.Time) ports.Settlement {
	return ports.Settlement{ID: j.ID, Token: j.LeaseToken, State: domain.JobQueued, Attempts: j.Attempts, RunAt: runAt, LastError: j.LastError, Host: j.Host}
}

func get(t *testing.T, s Jobs, id string) domain.Job {
	t.Helper()
	j, err := s.Get(ctx(t), JobID(id))
	mustNil(t, err, "get "+id)
	return j
}

// JobStore runs the contract of ports.JobStore and ports.JobAdmin: a
// group of subtests per port method, its cases in the file of its concern
// (jobs_enqueue.go, jobs_lease.go, jobs_settle.go, jobs_maintenance.go,
// jobs_admin.go), each case on a fresh store from newStore. Skip names a
// case alone, as it is unique over the groups.
func JobStore(t *testing.T, newStore func(t *testing.T) Jobs, opts ...Option) {
	newStore = behindChecks(newStore, newJobs)
	o := buildOptions(opts)
	for _, g := range []struct {
		method string
		cases  []testCase[Jobs]
	}{
		{"Enqueue", enqueueCases()},
		{"LeaseBatch", leaseBatchCases(o)},
		{"Settle", settleCases()},
		{"Reap", reapCases()},
		{"Purge", purgeCases()},
		{"DeferHost", deferHostCases()},
		{"Counts", countsCases(o)},
		{"RetryDead", retryDeadCases()},
		{"EndDomainJobs", endDomainJobsCases(o, newStore)},
	} {
		t.Run(g.method, func(t *testing.T) { runCases(t, newStore, opts, g.cases) })
	}
}
