package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// Two processes enqueue the same fan-out at once, in opposite orders. In
// caller order their inserts would wait on each other's keys, which
// PostgreSQL breaks as a deadlock; Enqueue inserts in dedupe-key order, so
// one waits for the other instead, both succeed and every job is inserted
// once.
func TestConcurrentEnqueueOfOneFanOut(t *testing.T) {
	t.Parallel()
	s, a := migratedSchema(t)
	b := s.pool(t)
	now := time.Now()
	for round := range 2 {
		jobs := make([]domain.Job, 3000)
		for i := range jobs {
			jobs[i] = newJob(t, fmt.Sprintf("r%d-%05d", round, i), fmt.Sprintf("h%04d.example", i), now)
		}
		reversed := slices.Clone(jobs)
		slices.Reverse(reversed)
		var wg sync.WaitGroup
		var na, nb int
		var ea, eb error
		wg.Go(func() { na, ea = postgres.NewJobStore(a).Enqueue(testCtx(t), jobs) })
		wg.Go(func() { nb, eb = postgres.NewJobStore(b).Enqueue(testCtx(t), reversed) })
		wg.Wait()
		if ea != nil || eb != nil {
			t.Fatalf("round %d: %v / %v", round, ea, eb)
		}
		if na+nb != len(jobs) {
			t.Fatalf("round %d: inserted %d + %d of %d", round, na, nb, len(jobs))
		}
	}
}

// A key another transaction inserts after the batch's snapshot (it has not
// committed when the batch's probe looks: enqueueSQL) is skipped all the
// same: the insert waits for that transaction, meets its key, and Enqueue
// sends the batch again in the form that waits and skips.
func TestEnqueueSkipsAKeyCommittedWhileItWaits(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	now := time.Now()
	first := newJob(t, "first", "a.example", now)
	store := postgres.NewJobStore(p)
	tx := begin(t, p)
	key, _ := postgres.DedupeColumns(first)
	insertJobRow(t, tx, jobRow{id: contract.JobID("other"), key: key, inboxRef: first.Inbox, host: "a.example", state: "queued", at: now})
	second := newJob(t, "second", "b.example", now)
	var n int
	err := behind(t, p, tx, func() error {
		var err error
		n, err = store.Enqueue(ctx, []domain.Job{first, second})
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("enqueue: inserted %d, %v; want 1 (second), nil", n, err)
	}
	if got := column(t, p, `SELECT `+sqlJobName("id")+` FROM jobs ORDER BY id`); !slices.Equal(got, []string{"other", "second"}) {
		t.Fatalf("jobs %v, want [other second]", got)
	}
}
