package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/test/contract"
)

// countDriftSQL counts the (state, host) pairs whose kept count
// (job_counts, migration 019) differs from their jobs, in one statement
// and so one snapshot.
const countDriftSQL = `
SELECT count(*) FROM (
	SELECT state, host FROM job_counts
	UNION SELECT state, host FROM jobs
) k
WHERE coalesce((SELECT n FROM job_counts c WHERE c.state = k.state AND c.host = k.host), 0)
	<> (SELECT count(*) FROM jobs j WHERE j.state = k.state AND j.host = k.host)`

func countDrift(t *testing.T, db *sqlite.DB) (int, error) {
	var n int
	err := sqlite.QueryRow(testCtx(t), db, countDriftSQL).Scan(&n)
	return n, err
}

func mustNoCountDrift(t *testing.T, db *sqlite.DB, when string) {
	t.Helper()
	if n, err := countDrift(t, db); err != nil || n != 0 {
		t.Fatalf("%s: %d (state, host) counts differ from the jobs (%v)", when, n, err)
	}
}

// The chaos of the host slots' test (two handles on one file leasing,
// settling every way, late, beside a reaper) moves jobs through every
// state: at every reading the kept counts equal the jobs, state by state
// and host by host.
func TestJobCountsMatchJobsUnderChaos(t *testing.T) {
	t.Parallel()
	owner := leaseChaos(t, func(owner *sqlite.DB) (contract.SlotReading, error) {
		r, err := readSlots(t, owner)
		if err != nil {
			return r, err
		}
		drift, err := countDrift(t, owner)
		r.Drift += drift
		return r, err
	})
	mustNoCountDrift(t, owner, "after the chaos")
}

// The triggers count the statements that change jobs by hand too (an
// operator's, beside the store): a change of host, of other columns, a
// delete. The store's own writes are the contract's counts case, which
// TestContract runs with mustNoCountDrift after each.
func TestJobCountsFollowStatementsByHand(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	exec := func(ctx context.Context, sql string, args ...any) error { return sqlite.Exec(ctx, db, sql, args...) }
	check := func(t *testing.T, after string) { mustNoCountDrift(t, db, after) }
	contract.CountsFollowStatements(t, sqlite.NewJobStore(db), exec, check, []contract.Statement{
		{Name: "an operator moves a job to another host", SQL: `UPDATE jobs SET host = 'b.example' WHERE id = ?`, Args: []any{contract.JobID("j2")},
			Want: contract.Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "b.example=2 c.example=1"}},
		{Name: "other columns changed", SQL: `UPDATE jobs SET last_error = 'x', attempts = 3`,
			Want: contract.Counts{Queued: 3, Succeeded: 1, Dead: 1, QueuedByHost: "b.example=2 c.example=1"}},
		{Name: "deleted", SQL: `DELETE FROM jobs WHERE host = 'b.example'`,
			Want: contract.Counts{Queued: 1, Succeeded: 1, Dead: 1, QueuedByHost: "c.example=1"}},
	})
}

// The operator's readings read job_counts by its key, never jobs.
func TestCountsReadNoJobs(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	for _, q := range []struct {
		sql  string
		args []any
	}{{sqlite.CountsSQL, nil}, {sqlite.CountsByHostSQL, []any{"queued", 20}}} {
		plan, err := sqlite.Plan(ctx, db, q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(plan, "\n")
		if strings.Contains(all, " jobs ") || !strings.Contains(all, "job_counts") {
			t.Errorf("%s:\n%s", q.sql, all)
		}
	}
}
