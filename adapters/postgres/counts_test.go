package postgres_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// countDriftSQL counts the (state, host) pairs whose kept count (the sum
// of their job_counts deltas, migration 028) differs from their jobs, in
// one statement and so one snapshot.
const countDriftSQL = `
SELECT count(*) FROM (
	SELECT state, host FROM job_counts
	UNION SELECT state, host FROM jobs
) k
WHERE coalesce((SELECT sum(n) FROM job_counts c WHERE c.state = k.state AND c.host = k.host), 0)
	<> (SELECT count(*) FROM jobs j WHERE j.state = k.state AND j.host = k.host)`

func mustNoCountDrift(t *testing.T, p *pgxpool.Pool, when string) {
	t.Helper()
	if n := count(t, p, countDriftSQL); n != 0 {
		t.Fatalf("%s: %d (state, host) counts differ from the jobs", when, n)
	}
}

// Three pools (three processes) lease, settle every way, late, beside a
// reaper that folds the counts every 15 ms (the host slots' chaos): at
// every reading the kept counts equal the jobs, state by state and host by
// host, and after it too, while a second process folds them too.
func TestJobCountsMatchJobsUnderChaos(t *testing.T) {
	t.Parallel()
	s := newSchema(t)
	first, second := s.pool(t), s.pool(t)
	mustMigrate(t, first)
	contract.LeaseChaos(t, contract.Chaos{
		Stores: []ports.JobStore{postgres.NewJobStore(first), postgres.NewJobStore(second), postgres.NewJobStore(s.pool(t))},
		Read: func() (r contract.SlotReading, err error) {
			// Another process's reaper folding beside the chaos's.
			if _, err = second.Exec(testCtx(t), postgres.FoldCountsSQL); err != nil {
				return r, err
			}
			if err = first.QueryRow(testCtx(t), contract.SlotReadingSQL).Scan(&r.Drift, &r.Worst, &r.Held); err != nil {
				return r, err
			}
			var drift int
			err = first.QueryRow(testCtx(t), countDriftSQL).Scan(&drift)
			r.Drift += drift
			return r, err
		},
		Hosts: 12, Jobs: 1200, Workers: 12,
		Lease: 30 * time.Millisecond, Slow: 60 * time.Millisecond, // as TestHostSlotsMatchLeasedRowsUnderChaos
	})
	mustNoCountDrift(t, first, "after the chaos")
}

// The triggers count every statement that changes jobs, not only the
// store's own: an enqueue (and the same jobs again, a no-op), a lease, a
// settlement, an operator's change of host, other columns changed, the end
// of a domain's jobs, a retry of the dead, a purge, a delete, a truncate.
// A reaper pass folds the deltas and changes no count.
func TestJobCountsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	s := postgres.NewJobStore(p)
	ctx := testCtx(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var jobs []domain.Job
	for i, host := range []string{"a.example", "a.example", "a.example", "b.example", "c.example"} {
		jobs = append(jobs, newJob(t, fmt.Sprintf("j%d", i), host, now.Add(time.Duration(i-10)*time.Millisecond)))
	}
	type want struct {
		states map[domain.JobState]int
		queued string // CountsByHost(queued), "host=n" joined by spaces
	}
	exec := func(sql string, args ...any) func() error {
		return func() error { _, err := p.Exec(ctx, sql, args...); return err }
	}
	reap := func() error { _, err := s.Reap(ctx, now, domain.MaxAttempts); return err }
	steps := []struct {
		name string
		do   func() error
		want want
	}{
		{"enqueued", func() error { _, err := s.Enqueue(ctx, jobs); return err },
			want{map[domain.JobState]int{domain.JobQueued: 5}, "a.example=3 b.example=1 c.example=1"}},
		{"enqueued again (dedupe no-op)", func() error { _, err := s.Enqueue(ctx, jobs); return err },
			want{map[domain.JobState]int{domain.JobQueued: 5}, "a.example=3 b.example=1 c.example=1"}},
		{"two of a.example leased", func() error {
			got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t1", Now: now, Until: now.Add(time.Minute), Limit: 2, PerHost: 2,
				SkipHosts: []string{"b.example", "c.example"}})
			if err == nil && (len(got) != 2 || got[0].ID != jobs[0].ID || got[1].ID != jobs[1].ID) {
				err = fmt.Errorf("leased %v, want a.example's two oldest", got)
			}
			return err
		}, want{map[domain.JobState]int{domain.JobQueued: 3, domain.JobLeased: 2}, "a.example=1 b.example=1 c.example=1"}},
		{"folded", reap, want{map[domain.JobState]int{domain.JobQueued: 3, domain.JobLeased: 2}, "a.example=1 b.example=1 c.example=1"}},
		{"one succeeded, one dead", func() error {
			_, err := s.Settle(ctx, []ports.Settlement{
				{ID: jobs[0].ID, Token: "t1", State: domain.JobSucceeded, Attempts: 1, FinishedAt: now},
				{ID: jobs[1].ID, Token: "t1", State: domain.JobDead, Attempts: 1, LastError: "410", FinishedAt: now},
			})
			return err
		}, want{map[domain.JobState]int{domain.JobQueued: 3, domain.JobSucceeded: 1, domain.JobDead: 1}, "a.example=1 b.example=1 c.example=1"}},
		{"an operator moves a job to another host", exec(`UPDATE jobs SET host = 'b.example' WHERE id = $1`, jobs[2].ID),
			want{map[domain.JobState]int{domain.JobQueued: 3, domain.JobSucceeded: 1, domain.JobDead: 1}, "b.example=2 c.example=1"}},
		{"other columns changed", exec(`UPDATE jobs SET attempts = 3`),
			want{map[domain.JobState]int{domain.JobQueued: 3, domain.JobSucceeded: 1, domain.JobDead: 1}, "b.example=2 c.example=1"}},
		{"two updates of jobs in one statement", exec(`
WITH a AS (UPDATE jobs SET state = 'dead', finished_at = $2 WHERE id = $1 RETURNING 1),
	b AS (UPDATE jobs SET state = 'dead', finished_at = $2 WHERE id = $3 RETURNING 1)
SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)`, jobs[2].ID, now, jobs[3].ID),
			want{map[domain.JobState]int{domain.JobQueued: 1, domain.JobSucceeded: 1, domain.JobDead: 3}, "c.example=1"}},
		{"b.example's dead retried", func() error { _, err := s.RetryDead(ctx, "", "b.example", now); return err },
			want{map[domain.JobState]int{domain.JobQueued: 3, domain.JobSucceeded: 1, domain.JobDead: 1}, "b.example=2 c.example=1"}},
		{"c.example's jobs ended", func() error { _, err := s.EndDomainJobs(ctx, "c.example", "suspended", now); return err },
			want{map[domain.JobState]int{domain.JobQueued: 2, domain.JobSucceeded: 1, domain.JobDead: 2}, "b.example=2"}},
		{"folded again", reap, want{map[domain.JobState]int{domain.JobQueued: 2, domain.JobSucceeded: 1, domain.JobDead: 2}, "b.example=2"}},
		{"finished jobs purged", func() error { _, err := s.Purge(ctx, now.Add(time.Hour)); return err },
			want{map[domain.JobState]int{domain.JobQueued: 2}, "b.example=2"}},
		{"deleted", exec(`DELETE FROM jobs WHERE id = $1`, jobs[2].ID),
			want{map[domain.JobState]int{domain.JobQueued: 1}, "b.example=1"}},
		{"truncated", exec(`TRUNCATE jobs`), want{map[domain.JobState]int{}, ""}},
		{"enqueued after the truncate", func() error { _, err := s.Enqueue(ctx, jobs[4:]); return err },
			want{map[domain.JobState]int{domain.JobQueued: 1}, "c.example=1"}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		mustNoCountDrift(t, p, st.name)
		counts, err := s.Counts(ctx)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for _, state := range domain.JobStates() {
			if counts[state] != st.want.states[state] {
				t.Errorf("%s: Counts %v, want %v", st.name, counts, st.want.states)
				break
			}
		}
		hc, err := s.CountsByHost(ctx, domain.JobQueued, 10)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var got []string
		for _, c := range hc {
			got = append(got, fmt.Sprintf("%s=%d", c.Host, c.Count))
		}
		if g := strings.Join(got, " "); g != st.want.queued {
			t.Errorf("%s: queued by host %q, want %q", st.name, g, st.want.queued)
		}
		if strings.HasPrefix(st.name, "folded") {
			if n := count(t, p, `SELECT count(*) FROM (SELECT 1 FROM job_counts GROUP BY state, host HAVING count(*) > 1 OR sum(n) = 0) d`); n != 0 {
				t.Errorf("%s: %d (state, host) pairs not folded into one row with a count", st.name, n)
			}
		}
	}
}

// The operator's readings read job_counts, never jobs.
func TestCountsReadNoJobs(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	for _, q := range []struct {
		sql  string
		args []any
	}{{postgres.CountsSQL, nil}, {postgres.CountsByHostSQL, []any{"queued", 20}}, {postgres.FoldCountsSQL, nil}} {
		var raw []byte
		if err := p.QueryRow(testCtx(t), `EXPLAIN (FORMAT JSON) `+q.sql, q.args...).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var plan []struct{ Plan planNode }
		if err := json.Unmarshal(raw, &plan); err != nil {
			t.Fatal(err)
		}
		counts := false
		plan[0].Plan.walk(func(n planNode) {
			counts = counts || n.RelationName == "job_counts"
			if n.RelationName == "jobs" {
				t.Errorf("%s reads jobs: %s", q.sql, raw)
			}
		})
		if !counts {
			t.Errorf("%s does not read job_counts: %s", q.sql, raw)
		}
	}
}
