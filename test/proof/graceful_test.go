package proof_test

import (
	"fmt"
	"testing"
	"time"
)

// SIGTERM to one of 4 worker processes mid-run, while all 8 of its
// deliveries are in flight (the inboxes hold its requests), then a new
// process in its place: the stopped process leases nothing more, lets its
// deliveries finish within the grace, records every result and leaves no
// lease behind; nothing is sent twice and nothing is lost (every job at
// attempts 1: a graceful stop spends no attempt and the reaper recovers
// nothing). SPEC §2, graceful shutdown, across real processes on one store
// (test/lifecycle proves it for whole servers, one at a time).
func TestGracefulStopOfOneProcessDeliversEveryJobExactlyOnce(t *testing.T) {
	requirePG(t, "the graceful stop of one of 4 worker processes mid-run on PostgreSQL (no lease left, nothing sent twice)")
	t.Parallel()
	gracefulStop(t, newPGStore(t), crashJobs, 15*time.Second)
}

// The same proof on the Mongo store (MONGODB_URI; in CI FerretDB v2), on
// mongoCrashJobs jobs with SPEC §2's lease (mongoLease says why).
func TestGracefulStopOfOneProcessDeliversEveryJobExactlyOnceOnMongo(t *testing.T) {
	requireMongo(t, "the graceful stop of one of 4 worker processes mid-run (no lease left, nothing sent twice)")
	// No t.Parallel: the Mongo proofs run one at a time (store_test.go).
	gracefulStop(t, newMongoStore(t), jobsToRun(t, "HERALD_PROOF_MONGO_CRASH_JOBS", mongoCrashJobs), mongoLease)
}

func gracefulStop(t *testing.T, st proofStore, n int, lease time.Duration) {
	s := newSink(t, proofHosts, inboxDelay)
	s.keepTimes = true
	sender := createSender(t, st)
	f := newFleet(t, st.workerFlags(), workerArgs(lease, time.Second)...)
	for i := range proofProcs {
		f.start(fmt.Sprintf("w%d", i+1))
	}
	f.waitReady()
	victim := f.procs[1]

	enqueueJobs(t, st, sender, s.inboxes, n, hostRun)
	s.waitReceived(t, n/4, n)
	s.hold(victim.name)
	// On Mongo a process may lease nothing for seconds (a batch lease takes
	// seconds, and between the 2 s of busy polling and the 5 s poll it
	// waits): wait for its first held request, then for the rest.
	eventually(time.Minute, func() bool { return s.heldCount() > 0 })
	eventually(lease/5, func() bool { return s.heldCount() >= proofWorkers })
	stopped := make(chan struct{})
	go func() { defer close(stopped); victim.stop(t) }() // SIGTERM, then waits for the exit
	// The victim's requests stay held a moment after the signal, so its
	// deliveries are still in flight while it stops leasing.
	time.Sleep(300 * time.Millisecond)
	heldAtStop := s.heldCount()
	unheldAt := time.Now()
	s.unhold()
	<-stopped
	stoppedAt := time.Now()
	f.remove(victim)
	// With every slot held at the signal, nothing of the victim's could be
	// on its way: a request of it arriving after the release was leased
	// after SIGTERM.
	if heldAtStop >= proofWorkers {
		for _, a := range s.tally().arrivals {
			if a.proc == victim.name && a.at.After(unheldAt) {
				t.Errorf("%s sent a delivery %s after its requests were released, past SIGTERM: it kept leasing", victim.name, a.at.Sub(unheldAt))
				break
			}
		}
	}
	if heldAtStop == 0 {
		t.Fatalf("the stop found no delivery of %s in flight: nothing was proven", victim.name)
	}
	left := st.leasedBy(t, fmt.Sprintf("%s/%d", victim.name, victim.cmd.Process.Pid))
	if len(left) > 0 {
		t.Errorf("%s left %d jobs leased after its graceful stop", victim.name, len(left))
	}
	sum := victim.Events("summary")
	if len(sum) != 1 {
		t.Fatalf("%s wrote %d summaries", victim.name, len(sum))
	}
	if u, late := num(sum[0]["unsettled_leases"]), num(sum[0]["settled_after_lease_end"]); u > 0 || late > 0 {
		t.Errorf("%s stopped with %d leases unsettled and %d settled after their lease ended", victim.name, u, late)
	}
	deliveredByVictim := s.tally().perProc[victim.name]

	restarted := f.start(victim.name + "-restarted")
	restarted.waitFor(t, "ready", 30*time.Second, func() bool { return len(restarted.Events("ready")) > 0 })
	last := waitAllDone(t, st, n)
	sums := f.stop()

	tl := checkDelivered(t, s, n, 0)
	checkCap(t, tl, proofPerHost)
	if got := tl.perProc[victim.name]; got != deliveredByVictim {
		t.Errorf("%s delivered %d before its exit, the inboxes later counted %d from it", victim.name, deliveredByVictim, got)
	}
	if got := num(sum[0]["delivered"]); got != deliveredByVictim {
		t.Errorf("%s reports %d deliveries, the inboxes saw %d from it", victim.name, got, deliveredByVictim)
	}
	if states := st.states(t); states["succeeded/attempts=1"] != n {
		t.Errorf("jobs by state %v, want all %d succeeded at their first attempt (a graceful stop spends none)", states, n)
	}
	if requeued, dead, passes := f.reaped(); requeued+dead > 0 {
		t.Errorf("%d reaper passes recovered %d jobs (%d dead): a lease was left behind", passes, requeued, dead)
	}
	for name, sm := range sums {
		if got := num(sm["settled_after_lease_end"]); got > 0 {
			t.Errorf("%s settled %d jobs after their lease had ended", name, got)
		}
	}
	t.Logf("%s: %d jobs, %d processes; %s stopped with SIGTERM after %d deliveries, %d of its requests in flight at the signal, "+
		"all of them recorded, 0 leases left; 0 re-deliveries; %s-restarted and the others delivered the rest, all done %s after its exit",
		st.kind(), n, proofProcs, victim.name, deliveredByVictim, heldAtStop, victim.name, last.Sub(stoppedAt).Round(time.Millisecond))
}
