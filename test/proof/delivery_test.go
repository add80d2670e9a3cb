package proof_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Proof numbers of issue 5. HERALD_PROOF_JOBS may lower the job count of
// the throughput proof for a quick local run; make test uses the issue's.
// The Mongo proof runs mongoProofJobs by default (HERALD_PROOF_MONGO_JOBS
// scales it, up to the 20,000): a capped Mongo lease of a batch is
// about 25 commands (adapters/mongo/jobs_batch.go), and on FerretDB v2
// each of them sorts the queued jobs (DocumentDB takes the sort from no
// index): a lease of 8 took 1.9 s with 600 jobs queued and 11 s with
// 20,000 on this loaded 2-core machine, so 20,000 jobs would take hours.
const (
	proofProcs     = 4
	proofWorkers   = 8
	proofPerHost   = 2
	proofHosts     = 200
	proofJobs      = 20000
	mongoProofJobs = 1000
	hostRun        = 10 // consecutive jobs per host in the queue
	// mongoLease is the lease of the Mongo proofs that need no reaper
	// (exactly once, SIGTERM, the per-host cap): SPEC §2's 2 minutes, not the PostgreSQL
	// proofs' 15 s. A lease's LeaseUntil is fixed when its round trip
	// starts, and on FerretDB v2 beside the rest of `make test` on 2 cores
	// a lease round trip took 6–7 s on average and a delivery's lease, its
	// hold and the write of its result over 30 s in all: with 30 s leases
	// a live worker's results came after its lease had ended, and the
	// reaper counted an attempt against jobs that were never orphaned.
	mongoLease = 2 * time.Minute
	// mongoCrashLease is the kill -9 proof's on Mongo: the orphans wait
	// for it before the reaper, so it is shorter than mongoLease, twice
	// the 30 s that proved too short for the exactly-once proof.
	mongoCrashLease = time.Minute
	inboxDelay      = 5 * time.Millisecond
	// The engine's budgets at proofWorkers (application/engine/config.go,
	// tuning): they are not configurable, and a change to them shows here
	// as a proof that fails.
	//
	// proofFlushMax is the most results a worker's completer writes at
	// once (4×workers, at least 32): what a kill -9 may leave delivered and
	// unwritten, on top of the deliveries in flight.
	proofFlushMax = 32
	// proofWaits is the engine's budget of waits on hosts that have not
	// answered, beside the slots (as many as the slots): deliveries in
	// flight may be proofWorkers + proofWaits.
	proofWaits = proofWorkers
	// proofLeaseAhead is how many jobs a worker leases beyond its free
	// slots (a batch, as many as the slots): leased, not delivered, at a
	// kill -9.
	proofLeaseAhead = proofWorkers
	// proofMaxInFlight is the most deliveries of one process whose results
	// a kill -9 can lose, so the most it re-delivers: every delivery in
	// flight (slots and waits) and every result not yet written.
	proofMaxInFlight = proofWorkers + proofWaits + proofFlushMax
	// proofMaxLeased is the most leases one process holds: those, and the
	// jobs leased ahead, which the reaper requeues undelivered.
	proofMaxLeased = proofMaxInFlight + proofLeaseAhead
)

// jobsToRun is the job count of the throughput proof: def, or the
// environment variable env.
func jobsToRun(t *testing.T, env string, def int) int {
	if v := os.Getenv(env); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q", env, v)
		}
		t.Logf("%s=%d: %d jobs instead of %d", env, n, n, def)
		return n
	}
	return def
}

func workerArgs(lease, reap time.Duration) []string {
	return []string{"-workers", strconv.Itoa(proofWorkers), "-per-host", strconv.Itoa(proofPerHost),
		"-lease", lease.String(), "-reap", reap.String()}
}

// 4 processes of 8 workers deliver 20,000 jobs on 200 hosts: every job is
// done exactly once (the inboxes' counts and the store agree), no lease
// expires (no reaper pass recovers anything, no job is settled after its
// lease ended, every job took one attempt), and no process ever has more
// than 2 requests at once on one host.
//
// The lease is 15 s and the reaper runs every second, so that "no lease
// expired" is checked many times during the run; production has 2 min and
// 30 s, which a run of this length could not tell from no reaper at all.
// (The longest a job was held, lease to settlement, was 2 s on a 2-core
// machine at a load average of 20.)
func TestFourProcessesDeliverEveryJobExactlyOnce(t *testing.T) {
	requirePG(t, "exactly-once delivery, lease holding and the per-host cap across 4 processes on PostgreSQL")
	t.Parallel()
	fourProcesses(t, newPGStore(t), jobsToRun(t, "HERALD_PROOF_JOBS", proofJobs), nil)
}

// The same proof on the Mongo store, on the server at MONGODB_URI (in CI
// FerretDB v2 on DocumentDB): 4 worker processes over the Mongo stores
// bootstrap wires for HERALD_STORE=mongo. This server has no change
// streams, so the workers find the batch within the Mongo waker's 1 s read
// of the enqueue signal, as `herald serve` processes would; the figures
// count from the enqueue. The lease is mongoLease, SPEC §2's.
func TestFourProcessesDeliverEveryJobExactlyOnceOnMongo(t *testing.T) {
	requireMongo(t, "exactly-once delivery, lease holding and the per-host cap across 4 processes")
	// No t.Parallel: the Mongo proofs run one at a time (store_test.go).
	n := jobsToRun(t, "HERALD_PROOF_MONGO_JOBS", mongoProofJobs)
	fourProcesses(t, newMongoStore(t), n, []string{"-lease", mongoLease.String()})
}

// fourProcesses is proof 1 on st: n jobs, all done; extra worker flags
// override workerArgs' (lease 15 s, reaper every second).
func fourProcesses(t *testing.T, st proofStore, n int, extra []string) {
	lease, reap := 15*time.Second, time.Second
	s := newSink(t, proofHosts, inboxDelay)
	sender := createSender(t, st)
	f := newFleet(t, st.workerFlags(), append(workerArgs(lease, reap), extra...)...)
	for i := range proofProcs {
		f.start(fmt.Sprintf("w%d", i+1))
	}
	f.waitReady()

	cpu0 := processCPU()
	serverCPU := st.serverCPU(t)
	start := time.Now()
	enqueueJobs(t, st, sender, s.inboxes, n, hostRun)
	enqueued := time.Since(start)
	last := waitAllDone(t, st, n)
	took := last.Sub(start)
	srvCPU, srvWhat, srvOK := serverCPU()
	sums := f.stop()
	testCPU := processCPU() - cpu0

	tl := checkDelivered(t, s, n, 0)
	if tl.total != n {
		t.Errorf("the inboxes got %d requests for %d jobs", tl.total, n)
	}
	checkCap(t, tl, proofPerHost)
	states := st.states(t)
	if got := states["succeeded/attempts=1"]; got != n {
		t.Errorf("jobs by state: %v; want all %d succeeded at their first attempt (none retried or reaped); failed attempts: %q", states, n, f.failed())
	}
	if requeued, dead, passes := f.reaped(); requeued+dead > 0 {
		t.Errorf("%d reaper passes recovered %d jobs (%d dead): a lease expired during the run", passes, requeued, dead)
	}
	delivered := 0
	var workerCPU float64
	for name, sum := range sums {
		delivered += num(sum["delivered"])
		cpu, _ := sum["cpu_seconds"].(float64)
		workerCPU += cpu
		if got := num(sum["settled_after_lease_end"]); got > 0 {
			t.Errorf("%s settled %d jobs after their lease had ended", name, got)
		}
		if got := num(sum["reaped_requeued"]) + num(sum["reaped_dead"]); got > 0 {
			t.Errorf("%s's reaper recovered %d jobs", name, got)
		}
		if got, want := num(sum["delivered"]), tl.perProc[name]; got != want {
			t.Errorf("%s reports %d deliveries, the inboxes saw %d from it", name, got, want)
		}
		if tl.perProc[name] == 0 {
			t.Errorf("%s delivered nothing: the work did not spread", name)
		}
		t.Logf("%s: %d deliveries of %d jobs leased, max %d in flight, max hold %.0f ms, mean lease %.2f ms, %d leases (%d empty), %.1f s CPU",
			name, num(sum["delivered"]), num(sum["leased_jobs"]), num(sum["max_in_flight"]), sum["max_hold_ms"], sum["mean_lease_ms"],
			num(sum["leases"]), num(sum["leases"])-num(sum["leases_found"]), sum["cpu_seconds"])
	}
	if delivered != n {
		t.Errorf("the engines report %d deliveries for %d jobs", delivered, n)
	}
	t.Logf("%s: %d jobs, %d processes x %d workers, %d hosts: enqueued in %s, all done %s after the enqueue began: %.0f deliveries/s; "+
		"max %d at once per (process, host), max %d at once per host over all processes",
		st.kind(), n, proofProcs, proofWorkers, proofHosts, enqueued.Round(time.Millisecond), took.Round(time.Millisecond),
		float64(n)/took.Seconds(), tl.maxPerProcHost, tl.maxPerHost)
	srv := "not measured (server not local)"
	if srvOK {
		srv = fmt.Sprintf("%.2f ms", srvCPU.Seconds()*1000/float64(n))
	}
	t.Logf("CPU per delivery: workers %.2f ms, %s %s, test process (the inboxes, and any proof running alongside) %.2f ms",
		workerCPU*1000/float64(n), srvWhat, srv, testCPU.Seconds()*1000/float64(n))
}

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU sums the CPU time of the PostgreSQL backends serving the
// schema, read from /proc: only when the server runs on this machine (and
// only for the figures of the report; nothing is asserted on it).
func backendCPU(t *testing.T, d *database) (time.Duration, bool) {
	t.Helper()
	rows, err := d.pool.Query(testCtx(t), `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, d.schema)
	if err != nil {
		return 0, false
	}
	defer rows.Close()
	var total time.Duration
	found := false
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			return 0, false
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, false
		}
		// Fields after the command name: utime and stime are the 12th
		// and 13th, in clock ticks (100 a second on Linux).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return 0, false
		}
		u, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		total += time.Duration(u+st) * 10 * time.Millisecond
		found = true
	}
	return total, found
}
