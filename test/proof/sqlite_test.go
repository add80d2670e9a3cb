package proof_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// sqliteStore is one SQLite proof's data directory, as the test process
// sees it: opened beside the worker that owns it (sqlite.OpenShared), as an
// operator's command would.
type sqliteStore struct {
	dir  string
	jobs *sqlite.JobStore
}

// newSQLiteStore makes a data directory, migrates it and saves the sending
// actor (with the directory's lock, released before any worker starts),
// then opens it shared for the test's reads and enqueues.
func newSQLiteStore(t *testing.T) (*sqliteStore, string) {
	t.Helper()
	ctx := testCtx(t)
	dir := filepath.Join(t.TempDir(), "herald-data")
	db, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.MigrateUp(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	if err := sqlite.EnsureIndexes(ctx, db); err != nil {
		t.Fatal(err)
	}
	keys, err := senderKeys()
	if err != nil {
		t.Fatal(err)
	}
	a, err := domain.NewAvatar(system.IDs{}.NewID(), "", "proofsender", keys, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.NewAccountStore(db).CreateAvatar(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	shared, err := sqlite.OpenShared(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Close() })
	return &sqliteStore{dir: dir, jobs: sqlite.NewJobStore(shared)}, a.ID
}

// enqueue queues the n deliveries enqueueJobs queues on PostgreSQL.
func (s *sqliteStore) enqueue(t *testing.T, sender string, inboxes []string, n, run int) {
	t.Helper()
	if got, err := s.jobs.Enqueue(testCtx(t), makeProofJobs(t, sender, inboxes, n, run)); err != nil || got != n {
		t.Fatalf("enqueue: %d of %d, %v", got, n, err)
	}
}

// list returns the jobs in one state (every job for "").
func (s *sqliteStore) list(t *testing.T, state domain.JobState) []domain.Job {
	t.Helper()
	js, err := s.jobs.List(testCtx(t), ports.JobFilter{State: state})
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// waitAllDone waits until every one of n jobs succeeded, failing at once if
// one died or when the jobs stop moving (progressing), and returns when the
// last one finished.
func (s *sqliteStore) waitAllDone(t *testing.T, n int) time.Time {
	t.Helper()
	finished := func(ctx context.Context) (succeeded, dead int, err error) {
		c, err := s.jobs.Counts(ctx)
		return c[domain.JobSucceeded], c[domain.JobDead], err
	}
	waitFinished(t, n, finished, func() any { c, _ := s.jobs.Counts(testCtx(t)); return c })
	var last time.Time
	for _, j := range s.list(t, domain.JobSucceeded) {
		if j.FinishedAt.After(last) {
			last = j.FinishedAt
		}
	}
	return last
}

// The kill -9 proof on SQLite, where one process owns the data directory:
// the worker is killed with SIGKILL while all 8 of its deliveries are in
// flight (the inboxes hold them: every slot has delivered and none has
// recorded it), and a new process starts on the same directory (the
// kernel dropped the dead one's lock). Its reaper recovers exactly the
// jobs the dead process held, every job is done, none is lost, and the
// re-deliveries are at most the jobs it held at the kill: its deliveries in
// flight plus the results its completer had not yet written (at most
// proofFlushMax), as in the PostgreSQL proof. Lease 5 s and reaper 1 s, as
// there.
func TestKillNineOnSQLiteLosesNothingAndRedeliversOnlyInFlight(t *testing.T) {
	t.Parallel()
	lease, reap := 5*time.Second, time.Second
	st, sender := newSQLiteStore(t)
	s := newSink(t, proofHosts, inboxDelay)
	// No wake-up crosses processes on SQLite: the worker polls (5 s in
	// production; 200 ms here, which only shortens the wait).
	args := append([]string{"-data-dir", st.dir, "-poll", "200ms"}, workerArgs(lease, reap)...)
	startWorker := func(name string) *proc {
		p := startProc(t, name, workerBin, nil, append([]string{"-name", name}, args...)...)
		p.waitFor(t, "ready", 30*time.Second, func() bool { return len(p.Events("ready")) > 0 })
		return p
	}
	victim := startWorker("w1")

	st.enqueue(t, sender, s.inboxes, crashJobs, hostRun)
	s.waitReceived(t, crashJobs/4, crashJobs)
	s.hold(victim.name)
	eventually(time.Second, func() bool { return s.heldCount() >= proofWorkers })
	victim.kill9(t)
	heldAtKill := s.heldCount()
	s.unhold()
	killedAt := time.Now()
	if heldAtKill == 0 {
		t.Fatalf("the kill found no delivery of %s in flight: nothing was proven", victim.name)
	}
	owner := fmt.Sprintf("%s/%d", victim.name, victim.cmd.Process.Pid)
	orphans := map[string]bool{}
	for _, j := range st.list(t, domain.JobLeased) {
		if j.LeaseOwner == owner {
			orphans[j.ActivityID] = true
		}
	}
	// Its leases at death: the deliveries in flight (slots and waits),
	// those delivered whose results the completer had not yet written, and
	// the jobs leased ahead, not yet started.
	if len(orphans) > proofMaxLeased {
		t.Errorf("%s held %d leases at its death, more than its %d workers + %d waits + %d unwritten results + %d leased ahead",
			victim.name, len(orphans), proofWorkers, proofWaits, proofFlushMax, proofLeaseAhead)
	}
	if len(orphans) < heldAtKill {
		t.Errorf("%s held %d leases at its death but %d of its deliveries were in flight", victim.name, len(orphans), heldAtKill)
	}

	restarted := startWorker(victim.name + "-restarted")
	last := st.waitAllDone(t, crashJobs)
	restarted.stop(t)

	// Re-delivered: at most the deliveries whose results died with it,
	// and only jobs it held (the check below); the ones leased ahead go
	// through the reaper undelivered.
	tl := checkDelivered(t, s, crashJobs, min(len(orphans), proofMaxInFlight))
	checkCap(t, tl, proofPerHost)
	for id, procs := range tl.redelivered {
		if !orphans[id] || procs[0] != victim.name {
			t.Errorf("%s was delivered by %s: re-delivered but not in flight at %s's death", id, strings.Join(procs, ", "), victim.name)
		}
	}
	// Every orphan, and only they, went through the reaper: one attempt
	// spent by the reap, one by the delivery that succeeded.
	attempts := map[int]int{}
	for _, j := range st.list(t, "") {
		attempts[j.Attempts]++
	}
	if attempts[2] != len(orphans) || attempts[1] != crashJobs-len(orphans) {
		t.Errorf("jobs by attempts: %v; want %d at 2 (reaped, then delivered) and %d at 1", attempts, len(orphans), crashJobs-len(orphans))
	}
	var requeued, dead, passes int
	for _, p := range []*proc{victim, restarted} {
		for _, e := range p.Events("reaped") {
			requeued += num(e["requeued"])
			dead += num(e["dead"])
			passes++
		}
	}
	if requeued != len(orphans) || dead != 0 {
		t.Errorf("reapers recovered %d jobs (%d dead) in %d passes, want the %d orphans", requeued, dead, passes, len(orphans))
	}
	if sum := restarted.Events("summary"); len(sum) != 1 || num(sum[0]["settled_after_lease_end"]) > 0 {
		t.Errorf("summary of %s: %v", restarted.name, sum)
	}
	t.Logf("%d jobs on SQLite; %s killed with SIGKILL after %d deliveries, %d of its requests in flight, %d leases orphaned "+
		"(%d delivered but not yet written, or leased ahead); %d re-deliveries (bound %d workers + %d waits + %d unwritten); %d reaped in %d passes; all done %s after the kill",
		crashJobs, victim.name, tl.perProc[victim.name], heldAtKill, len(orphans), len(orphans)-heldAtKill,
		tl.redeliveries, proofWorkers, proofWaits, proofFlushMax, requeued, passes, last.Sub(killedAt).Round(time.Millisecond))
}
