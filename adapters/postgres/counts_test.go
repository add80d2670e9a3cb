package postgres_test

import (
	"context"
	"encoding/json"
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
	s, first := migratedSchema(t)
	second := s.pool(t)
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

// mustFoldedCounts fails unless job_counts holds one row with a count per
// (state, host): what a reaper pass leaves.
func mustFoldedCounts(t *testing.T, p *pgxpool.Pool, when string) {
	t.Helper()
	if n := count(t, p, `SELECT count(*) FROM (SELECT 1 FROM job_counts GROUP BY state, host HAVING count(*) > 1 OR sum(n) = 0) d`); n != 0 {
		t.Errorf("%s: %d (state, host) pairs not folded into one row with a count", when, n)
	}
}

// The triggers count the statements that change jobs by hand too (an
// operator's, beside the store): a change of host, of other columns, two
// updates of jobs in one statement, a delete, a truncate. The store's own
// writes are the contract's counts case, which TestContract runs with
// mustNoCountDrift after each and mustFoldedCounts after each Reap.
func TestJobCountsFollowStatementsByHand(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	s := postgres.NewJobStore(p)
	exec := func(ctx context.Context, sql string, args ...any) error {
		_, err := p.Exec(ctx, sql, args...)
		return err
	}
	check := func(t *testing.T, after string) { mustNoCountDrift(t, p, after) }
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	contract.CountsFollowStatements(t, s, exec, check, []contract.Statement{
		{Name: "an operator moves a job to another host", SQL: `UPDATE jobs SET host = 'b.example' WHERE id = $1`, Args: []any{contract.JobID("j2")},
			Want: contract.Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "b.example=2 c.example=1"}},
		{Name: "other columns changed", SQL: `UPDATE jobs SET attempts = 3`,
			Want: contract.Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "b.example=2 c.example=1"}},
		{Name: "two updates of jobs in one statement", SQL: `
WITH a AS (UPDATE jobs SET state = 'dead', finished_at = $2 WHERE id = $1 RETURNING 1),
	b AS (UPDATE jobs SET state = 'dead', finished_at = $2 WHERE id = $3 RETURNING 1)
SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)`, Args: []any{contract.JobID("j2"), now, contract.JobID("j3")},
			Want: contract.Counts{Queued: 1, Succeeded: 1, Dead: 3, QueuedByHost: "c.example=1"}},
		{Name: "deleted", SQL: `DELETE FROM jobs WHERE id = $1`, Args: []any{contract.JobID("j2")},
			Want: contract.Counts{Queued: 1, Succeeded: 1, Dead: 2, QueuedByHost: "c.example=1"}},
		{Name: "truncated", SQL: `TRUNCATE jobs`},
	})
	// Counting starts again from nothing after the truncate.
	if _, err := s.Enqueue(testCtx(t), []domain.Job{newJob(t, "again", "c.example", now)}); err != nil {
		t.Fatal(err)
	}
	check(t, "enqueued after the truncate")
	contract.WantCounts(t, s, "enqueued after the truncate", contract.Counts{Queued: 1, QueuedByHost: "c.example=1"})
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
