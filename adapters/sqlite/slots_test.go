package sqlite_test

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func mustNoDrift(t *testing.T, db *sqlite.DB, when string) {
	t.Helper()
	r, err := readSlots(t, db)
	if err != nil || r.Drift != 0 {
		t.Fatalf("%s: %d hosts' slot counts differ from their leased jobs (%v)", when, r.Drift, err)
	}
}

func readSlots(t *testing.T, db *sqlite.DB) (r contract.SlotReading, err error) {
	err = sqlite.QueryRow(testCtx(t), db, contract.SlotReadingSQL).Scan(&r.Drift, &r.Worst, &r.Held)
	return r, err
}

func inFlight(t *testing.T, db *sqlite.DB, host string) int {
	t.Helper()
	var n int
	err := sqlite.QueryRow(testCtx(t), db, `SELECT coalesce((SELECT in_flight FROM host_slots WHERE host = ?), 0)`, host).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two handles on one file (the server's and an operator's, the two writers
// SQLite can have here) lease batches with a cap of 2, settle with every
// kind of outcome, let some leases expire under a reaper running alongside,
// and settle some of those late (lost): while they run and after,
// host_slots equals the leased rows host by host, and no host ever has more
// than 2 leased. One statement reads both tables in one snapshot, and the
// triggers of migration 004 move a host's count in the statement that
// moves its job into or out of leased, so the two agree at every commit.
func TestHostSlotsMatchLeasedRowsUnderChaos(t *testing.T) {
	t.Parallel()
	leaseChaos(t, func(owner *sqlite.DB) (contract.SlotReading, error) { return readSlots(t, owner) })
}

// leaseChaos runs contract.LeaseChaos on two handles of one new database
// file, the server's and an operator's, reading the store with read; it
// returns the server's handle.
func leaseChaos(t *testing.T, read func(owner *sqlite.DB) (contract.SlotReading, error)) *sqlite.DB {
	t.Helper()
	dir := t.TempDir()
	owner := migratedIn(t, dir)
	other, err := sqlite.OpenShared(testCtx(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	contract.LeaseChaos(t, contract.Chaos{
		Stores: []ports.JobStore{sqlite.NewJobStore(owner), sqlite.NewJobStore(other)},
		Read:   func() (contract.SlotReading, error) { return read(owner) },
		Hosts:  12, Jobs: 600, Workers: 8,
		// Longer than on PostgreSQL: every write here is an fsync'd commit
		// through one writer. Under -race most 30 ms leases expired, and on
		// a loaded machine (load 30, make test beside other builds) most
		// 100 ms ones did too, so the run stopped finishing its jobs: the
		// lease is far above a commit's time and only the slow batches
		// outlive it.
		Lease: time.Second, Slow: 1200 * time.Millisecond,
	})
	return owner
}

// The triggers count every way into and out of leased, not only the
// store's own statements: a job enqueued leased, the same job enqueued
// again (a no-op that must not count twice), an operator's delete or
// change of host of a leased job.
func TestHostSlotsFollowEveryWriteOfALeasedJob(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	s := sqlite.NewJobStore(db)
	ctx := testCtx(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	j := newJob(t, "j1", "a.example", now)
	j.State, j.LeaseToken, j.LeaseOwner, j.LeaseUntil = domain.JobLeased, "tok", "w", now.Add(time.Minute)
	steps := []struct {
		name string
		do   func() error
		want map[string]int
	}{
		{"enqueued leased", func() error { _, err := s.Enqueue(ctx, []domain.Job{j}); return err }, map[string]int{"a.example": 1}},
		{"enqueued again (dedupe no-op)", func() error { _, err := s.Enqueue(ctx, []domain.Job{j}); return err }, map[string]int{"a.example": 1}},
		{"host changed", func() error { return sqlite.Exec(ctx, db, `UPDATE jobs SET host = 'b.example' WHERE id = ?`, j.ID) },
			map[string]int{"a.example": 0, "b.example": 1}},
		{"other columns changed", func() error { return sqlite.Exec(ctx, db, `UPDATE jobs SET last_error = 'x' WHERE id = ?`, j.ID) },
			map[string]int{"b.example": 1}},
		{"deleted", func() error { return sqlite.Exec(ctx, db, `DELETE FROM jobs WHERE id = ?`, j.ID) }, map[string]int{"b.example": 0}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for host, want := range st.want {
			if got := inFlight(t, db, host); got != want {
				t.Fatalf("%s: %s has %d in flight, want %d", st.name, host, got, want)
			}
		}
		mustNoDrift(t, db, st.name)
	}
}
