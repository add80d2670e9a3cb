package contract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// countedJobs are the counts cases' five jobs: j0 to j2 of a.example, j3
// of b.example, j4 of c.example, oldest first.
func countedJobs(t *testing.T) []domain.Job {
	t.Helper()
	hosts := []string{"a.example", "a.example", "a.example", "b.example", "c.example"}
	jobs := make([]domain.Job, len(hosts))
	for i, h := range hosts {
		jobs[i] = job(t, fmt.Sprintf("j%d", i), h, base.Add(time.Duration(i-10)*time.Millisecond))
	}
	return jobs
}

// settleTwo settles j0 as succeeded and j1 as dead, both leased with token.
func settleTwo(t *testing.T, s Jobs, token string) {
	t.Helper()
	lost, err := s.Settle(ctx(t), []ports.Settlement{succeeded("j0", token, 1, base), dead("j1", token, 1, "410", base)})
	mustNil(t, err, "settle")
	mustNil(t, errors.Join(lost...), "settle's outcomes")
}

// countsFollowEveryWrite takes five jobs of three hosts through every
// kind of write the ports make (an enqueue and the same jobs again, a
// lease, a settlement of each outcome, a Reap with nothing expired and one
// with, a deferral and its resumption, the end of a domain's jobs, a retry
// of the dead, a purge) and reads Counts and CountsByHost after each, with
// the store's own check of what it keeps (KeptCounts) where it has one.
func countsFollowEveryWrite(t *testing.T, s Jobs, o options) {
	jobs := countedJobs(t)
	moved := func(what string, want int) func(int, error) {
		return func(n int, err error) {
			t.Helper()
			mustNil(t, err, what)
			if n != want {
				t.Fatalf("%s moved %d jobs, want %d", what, n, want)
			}
		}
	}
	leased := func(token string, until time.Time, limit int, want ...string) {
		t.Helper()
		got := leaseBatch(t, s, ports.LeaseRequest{Token: token, Now: base, Until: until, Limit: limit, PerHost: 2, SkipHosts: []string{"b.example", "c.example"}})
		if fmt.Sprint(jobIDs(got)) != fmt.Sprint(want) {
			t.Fatalf("leased %v, want %v", jobIDs(got), want)
		}
	}
	reaped := func(now time.Time, want int) {
		t.Helper()
		r, err := s.Reap(ctx(t), now, domain.MaxAttempts)
		mustNil(t, err, "reap")
		if r.Requeued != want || r.Dead != 0 {
			t.Fatalf("reap %+v, want %d requeued", r, want)
		}
	}
	for _, st := range []struct {
		name   string
		reaped bool
		write  func()
		want   Counts
	}{
		{"enqueued", false, func() { enqueue(t, s, jobs...) },
			Counts{Queued: 5, QueuedByHost: "a.example=3 b.example=1 c.example=1"}},
		{"enqueued again (dedupe no-op)", false, func() { moved("enqueue again", 0)(s.Enqueue(ctx(t), jobs)) },
			Counts{Queued: 5, QueuedByHost: "a.example=3 b.example=1 c.example=1"}},
		{"two of a.example leased", false, func() { leased("t1", base.Add(lease), 2, "j0", "j1") },
			Counts{Queued: 3, Leased: 2, QueuedByHost: "a.example=1 b.example=1 c.example=1"}},
		{"reaped with no lease expired", true, func() { reaped(base, 0) },
			Counts{Queued: 3, Leased: 2, QueuedByHost: "a.example=1 b.example=1 c.example=1"}},
		{"one succeeded, one dead", false, func() { settleTwo(t, s, "t1") }, Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "a.example=1 b.example=1 c.example=1"}},
		{"a.example's last leased", false, func() { leased("t2", base.Add(lease), 1, "j2") },
			Counts{Queued: 2, Leased: 1, Succeeded: 1, Dead: 1, QueuedByHost: "b.example=1 c.example=1"}},
		{"retried", false, func() { mustNil(t, settle(t, s, retried("j2", "t2", 1, base, "HTTP 503")), "retry") },
			Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "a.example=1 b.example=1 c.example=1"}},
		{"a.example's last leased again", false, func() { leased("t3", base.Add(time.Minute), 1, "j2") },
			Counts{Queued: 2, Leased: 1, Succeeded: 1, Dead: 1, QueuedByHost: "b.example=1 c.example=1"}},
		{"its expired lease reaped", true, func() { reaped(base.Add(2*time.Minute), 1) },
			Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "a.example=1 b.example=1 c.example=1"}},
		{"b.example deferred", false, func() { moved("defer", 1)(s.DeferHost(ctx(t), "b.example", base.Add(time.Hour))) },
			Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "a.example=1 b.example=1 c.example=1"}},
		{"b.example resumed", false, func() { moved("resume", 1)(s.ResumeHost(ctx(t), "b.example", base.Add(time.Hour), base)) },
			Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "a.example=1 b.example=1 c.example=1"}},
		{"c.example's jobs ended", false, func() { moved("end", 1)(s.EndDomainJobs(ctx(t), "c.example", "suspended", base)) },
			Counts{Queued: 2, Succeeded: 1, Dead: 2, QueuedByHost: "a.example=1 b.example=1"}},
		{"a.example's dead retried", false, func() { moved("retry dead", 1)(s.RetryDead(ctx(t), "", "a.example", base)) },
			Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "a.example=2 b.example=1"}},
		{"finished jobs purged", false, func() { moved("purge", 2)(s.Purge(ctx(t), base.Add(time.Hour))) },
			Counts{Queued: 3, QueuedByHost: "a.example=2 b.example=1"}},
	} {
		st.write()
		if o.kept != nil {
			o.kept(t, s, st.name, st.reaped)
		}
		WantCounts(t, s, st.name, st.want)
	}
}

// Counts is what WantCounts reads from a store: the number of jobs in each
// state, and CountsByHost of the queued ones as "host=n" joined by spaces,
// largest first and ties by host.
type Counts struct {
	Queued, Leased, Succeeded, Dead int
	QueuedByHost                    string
}

// WantCounts fails the test unless the store's Counts (every state
// present) and CountsByHost of the queued jobs read want, after the write
// named by when. A store's own tests use it for the writes it alone can
// make (a statement of SQL by hand).
func WantCounts(t *testing.T, s ports.JobAdmin, when string, want Counts) {
	t.Helper()
	c, err := s.Counts(ctx(t))
	mustNil(t, err, when+": counts")
	states := map[domain.JobState]int{domain.JobQueued: want.Queued, domain.JobLeased: want.Leased, domain.JobSucceeded: want.Succeeded, domain.JobDead: want.Dead}
	for _, state := range domain.JobStates() {
		if n, ok := c[state]; !ok || n != states[state] {
			t.Errorf("%s: Counts %v, want %v", when, c, states)
			break
		}
	}
	hc, err := s.CountsByHost(ctx(t), domain.JobQueued, 10)
	mustNil(t, err, when+": counts by host")
	got := make([]string, len(hc))
	for i, c := range hc {
		got[i] = fmt.Sprintf("%s=%d", c.Host, c.Count)
	}
	if g := strings.Join(got, " "); g != want.QueuedByHost {
		t.Errorf("%s: queued by host %q, want %q", when, g, want.QueuedByHost)
	}
}

// A Statement is a write made by hand beside the store (an operator's
// SQL), and the counts it leaves.
type Statement struct {
	Name string
	SQL  string
	Args []any
	Want Counts
}

// CountsFollowStatements checks that a store's counts follow the writes
// made beside it: from five jobs (j0 to j2 of a.example, j3 of b.example,
// j4 of c.example; name them with JobID), j0 succeeded and j1 dead, it
// runs each statement with exec, then the store's own check of what it
// keeps, then WantCounts.
func CountsFollowStatements(t *testing.T, s Jobs, exec func(ctx context.Context, sql string, args ...any) error, check func(t *testing.T, after string), statements []Statement) {
	t.Helper()
	enqueue(t, s, countedJobs(t)...)
	leaseBatch(t, s, ports.LeaseRequest{Token: "t1", Now: base, Limit: 2, PerHost: 2})
	settleTwo(t, s, "t1")
	WantCounts(t, s, "set up", Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "a.example=1 b.example=1 c.example=1"})
	for _, st := range statements {
		mustNil(t, exec(ctx(t), st.SQL, st.Args...), st.Name)
		check(t, st.Name)
		WantCounts(t, s, st.Name, st.Want)
	}
}
