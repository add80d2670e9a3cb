package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/migrations/migrationtest"
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
	owner := open(t, dir)
	mustMigrate(t, owner)
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

// Migration 004 counts the jobs leased before it ran.
func TestMigration004CountsLeasedJobs(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	downTo(t, db, 3)
	if v, _, err := sqlite.MigrationVersion(ctx, db); v != 3 || err != nil {
		t.Fatalf("version %d after two steps down (%v); this test is about 004", v, err)
	}
	s := sqlite.NewJobStore(db)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var jobs []domain.Job
	for i, host := range []string{"a.example", "a.example", "b.example", "c.example"} {
		j := newJob(t, fmt.Sprintf("j%d", i), host, now)
		if host != "c.example" {
			j.State, j.LeaseToken, j.LeaseUntil = domain.JobLeased, "tok", now.Add(time.Minute)
		}
		jobs = append(jobs, j)
	}
	// Written as the schema of version 3 has them (a payload per job):
	// today's store writes bodies, which 3 has not got.
	for _, j := range jobs {
		var until any
		if !j.LeaseUntil.IsZero() {
			until = j.LeaseUntil.UnixNano()
		}
		mustExec(t, db, `INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload, state,
			run_at, lease_token, lease_until, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			j.ID, j.DedupeKey, j.ActivityID, j.Inbox, j.Host, j.SenderID, j.KeyID, j.Payload, string(j.State),
			j.RunAt.UnixNano(), j.LeaseToken, until, j.CreatedAt.UnixNano())
	}
	mustMigrate(t, db)
	for host, want := range map[string]int{"a.example": 2, "b.example": 1, "c.example": 0} {
		if got := inFlight(t, db, host); got != want {
			t.Errorf("%s: %d in flight after 004, want %d", host, got, want)
		}
	}
	mustNoDrift(t, db, "after 004")
	// And the cap reads them: a.example is full, b.example has one slot.
	c := newJob(t, "more-a", "a.example", now)
	d := newJob(t, "more-b", "b.example", now)
	if _, err := s.Enqueue(ctx, []domain.Job{c, d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t2", Now: now, Until: now.Add(time.Minute), Limit: 10, PerHost: 2})
	var ids []string
	for _, j := range got {
		ids = append(ids, j.ID)
	}
	if err != nil || len(got) != 2 || got[0].Host == "a.example" || got[1].Host == "a.example" {
		t.Fatalf("leased %v, %v: want c.example's job and more-b, none of the full a.example", ids, err)
	}
}

// downTo steps the schema down to version v (migrationtest.DownTo).
func downTo(t *testing.T, db *sqlite.DB, v uint) {
	t.Helper()
	ctx := testCtx(t)
	migrationtest.DownTo(t, v, func() (uint, error) {
		got, _, err := sqlite.MigrationVersion(ctx, db)
		return got, err
	}, func() error { return sqlite.MigrateDown(ctx, db, 1, testLog(t)) })
}

// Migration 017 fills each host's ready_at from the queued jobs already
// there (their oldest run_at; none for a host without queued jobs), so a
// lease finds them after the upgrade; its down step drops the column.
func TestMigration017ReadyHosts(t *testing.T) {
	t.Parallel()
	db := migrated(t)
	ctx := testCtx(t)
	downTo(t, db, 15)
	s := sqlite.NewJobStore(db)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	leased := newJob(t, "a-leased", "a.example", now)
	leased.State, leased.LeaseToken, leased.LeaseUntil = domain.JobLeased, "tok", now.Add(time.Minute)
	dead := newJob(t, "b-dead", "b.example", now)
	dead.State, dead.FinishedAt = domain.JobDead, now
	if _, err := s.Enqueue(ctx, []domain.Job{newJob(t, "a2", "a.example", now.Add(2*time.Second)), newJob(t, "a1", "a.example", now.Add(time.Second)),
		leased, dead, newJob(t, "c1", "c.example", now)}); err != nil {
		t.Fatal(err)
	}
	mustMigrate(t, db)
	ready := func(host string) (at sql.NullInt64) {
		t.Helper()
		if err := sqlite.QueryRow(ctx, db, `SELECT ready_at FROM host_slots WHERE host = ?`, host).Scan(&at); err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		return at
	}
	for host, want := range map[string]time.Time{"a.example": now.Add(time.Second), "c.example": now} {
		if got := ready(host); !got.Valid || got.Int64 != want.UnixNano() {
			t.Fatalf("%s ready_at after 017: %v, want %v", host, got, want)
		}
	}
	if got := ready("b.example"); got.Valid {
		t.Fatalf("b.example, without queued jobs, ready at %v", got)
	}
	got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t", Now: now.Add(time.Minute), Until: now.Add(2 * time.Minute), Limit: 10, PerHost: 2})
	if err != nil || len(got) != 2 || contract.JobName(got[0].ID) != "c1" || contract.JobName(got[1].ID) != "a1" {
		t.Fatalf("leased after 017: %v, %v; want c1 and a1 (a.example has one slot left)", got, err)
	}
	downTo(t, db, 15)
	var n int
	if err := sqlite.QueryRow(ctx, db, `SELECT count(*) FROM pragma_table_info('host_slots') WHERE name = 'ready_at'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("host_slots.ready_at after 017's down: %d (%v)", n, err)
	}
}
