package proof_test

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// outageFor is how long the database is away in the outage proof: longer
// than every backoff step below the engine's poll period, shorter than the
// lease.
const outageFor = 4 * time.Second

// The database goes away mid-run: a TCP proxy between the 4 worker
// processes and PostgreSQL closes every connection and refuses new ones for
// 4 s, then lets them through again (the shared PostgreSQL server is not
// touched). The workers log the failure, back off instead of spinning,
// log the recovery of their listener, deliver again, and every job ends
// succeeded, delivered exactly once.
//
// Exactly once holds because the outage is shorter than the lease (10 s
// here; 2 min in production): a delivery that finished while the database
// was away keeps retrying its Complete, with backoff, for as long as its
// lease holds, and gets it recorded once the database is back. A Complete
// that was committed but whose answer was lost finds its token gone on the
// retry (ErrLeaseLost) and is dropped: the job is already succeeded. A
// lease committed but unanswered leaves a job nobody works on, which the
// reaper requeues after its lease ends, and it is delivered once then. Only
// an outage longer than the lease can cause a duplicate: see
// TestOutageLongerThanTheLease.
func TestDatabaseOutageMidRun(t *testing.T) {
	requirePG(t, "recovery of the worker processes from a PostgreSQL outage (connections cut and refused) without loss or duplicates")
	t.Parallel()
	res := runOutage(t, 10*time.Second, outageFor)
	checkDelivered(t, res.sink, crashJobs, 0)
	// No worker gave up on a result: the lease outlasted the outage.
	if n := res.gaveUp(); n > 0 {
		t.Errorf("%d results given up at lease end during a %s outage with a %s lease", n, res.outage, res.lease)
	}
	// What the reaper recovered (a job is then at attempts=2) can only be
	// a lease the server committed while its answer was lost: at most the
	// leases in flight at the cut, which together ask for at most the free
	// slots plus one batch ahead (leaseRoom) per process: 8 workers + 8
	// leased ahead. (Before lease-ahead a process had one lease in flight
	// and the bound was the 8 workers; a run has since reaped 38 jobs of 4
	// processes, two leases lost at once in one of them.)
	bound := proofProcs * (proofWorkers + proofLeaseAhead)
	if n := res.states["succeeded/attempts=2"]; n > bound || res.states["succeeded/attempts=1"]+n != crashJobs {
		t.Errorf("jobs by state %v: want every job succeeded, at most %d of them after a reap", res.states, bound)
	}
	res.checkLogs(t)
	t.Logf("%s", res)
}

// The database is away for longer than the lease (6 s against 4 s). Then
// the design allows a duplicate: a worker that delivered a job but could not
// record it before its lease ended gives up ("the reaper will requeue it"),
// and the job is delivered again after the outage. The bound is the jobs in
// flight or unwritten when the database went away (per process: 8 workers,
// 8 waits, the completer's unwritten results and the jobs leased ahead);
// nothing is lost.
func TestOutageLongerThanTheLease(t *testing.T) {
	requirePG(t, "the bound on duplicates (jobs in flight) when PostgreSQL is away for longer than the lease")
	t.Parallel()
	res := runOutage(t, 4*time.Second, 6*time.Second)
	if bound := proofProcs * proofMaxLeased; res.leasedAtCut > bound {
		t.Errorf("%d jobs leased when the database went away, more than %d processes x (%d workers + %d waits + %d unwritten results + %d leased ahead)",
			res.leasedAtCut, proofProcs, proofWorkers, proofWaits, proofFlushMax, proofLeaseAhead)
	}
	tl := checkDelivered(t, res.sink, crashJobs, res.leasedAtCut)
	// A duplicate is a job whose first holder gave up on it.
	gaveUp := res.gaveUp()
	if tl.redeliveries > gaveUp {
		t.Errorf("%d re-deliveries but only %d results given up on", tl.redeliveries, gaveUp)
	}
	res.checkLogs(t)
	t.Logf("%s; %d results given up at lease end, %d re-deliveries (bound: the %d jobs in flight at the cut)", res, gaveUp, tl.redeliveries, res.leasedAtCut)
}

type outageRun struct {
	sink                    *sink
	fleet                   *fleet
	proxy                   *proxy
	cutAt, restoredAt, last time.Time
	beforeCut, during       int
	leasedAtCut             int // jobs leased, read straight from PostgreSQL just after the cut
	firstAfter              time.Time
	lease, outage           time.Duration
	states                  map[string]int
}

func (r outageRun) String() string {
	return fmt.Sprintf("%d jobs, %d processes through a proxy; cut after %d deliveries for %s (lease %s), %d jobs leased at the cut: %d deliveries while cut, "+
		"first delivery %s after the restore, all done %s after it; %d proxied connections; jobs by state %v",
		crashJobs, proofProcs, r.beforeCut, r.outage, r.lease, r.leasedAtCut, r.during,
		r.firstAfter.Sub(r.restoredAt).Round(time.Millisecond), r.last.Sub(r.restoredAt).Round(time.Millisecond), r.proxy.connections(), r.states)
}

// gaveUp counts the results workers gave up recording because their
// lease was about to end.
func (r outageRun) gaveUp() int {
	n := 0
	for _, p := range r.fleet.all {
		n += len(p.Logs("could not record the job's result before its lease ends; the reaper will requeue it"))
	}
	return n
}

func runOutage(t *testing.T, lease, outage time.Duration) outageRun {
	t.Helper()
	d := newDatabase(t, true)
	u, err := url.Parse(d.url)
	if err != nil || u.Host == "" {
		t.Skipf("UNVERIFIED: DATABASE_URL is not a postgres:// URL, so the proxy cannot be put in front of it; the outage proof did not run")
	}
	target := u.Host
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(u.Host, "5432")
	}
	px := newProxy(t, target)
	u.Host = px.addr
	s := newSink(t, proofHosts, inboxDelay)
	s.keepTimes = true
	pg := &pgStore{d: d}
	sender := createSender(t, pg)
	f := newFleet(t, []string{"-store", "postgres", "-database-url", u.String()}, workerArgs(lease, time.Second)...)
	for i := range proofProcs {
		f.start(fmt.Sprintf("w%d", i+1))
	}
	f.waitReady()

	enqueueJobs(t, pg, sender, s.inboxes, crashJobs, hostRun)
	s.waitReceived(t, crashJobs/3, crashJobs)
	r := outageRun{sink: s, fleet: f, proxy: px, lease: lease, outage: outage}
	r.beforeCut = s.received()
	r.cutAt = time.Now()
	px.cut()
	// The server may finish a statement whose client was just cut off
	// (a lease among them); then the leases stay as they are until the
	// workers are back.
	time.Sleep(200 * time.Millisecond)
	r.leasedAtCut = d.count(t, `SELECT count(*) FROM jobs WHERE state = 'leased'`)
	time.Sleep(outage - time.Since(r.cutAt))
	r.during = s.received() - r.beforeCut
	r.restoredAt = time.Now()
	px.restore(t)
	r.last = waitAllDone(t, pg, crashJobs)
	r.states = pg.states(t)
	f.stop()
	for _, a := range s.tally().arrivals {
		if a.at.After(r.restoredAt) && (r.firstAfter.IsZero() || a.at.Before(r.firstAfter)) {
			r.firstAfter = a.at
		}
	}
	return r
}

// checkLogs: every process logged the loss of its database connection
// with the error, backed off (a bounded number of failed lease attempts,
// not a spin), logged its listener's recovery, and delivered again after
// the restore.
func (r outageRun) checkLogs(t *testing.T) {
	t.Helper()
	after := map[string]int{}
	for _, a := range r.sink.tally().arrivals {
		if a.at.After(r.restoredAt) {
			after[a.proc]++
		}
	}
	// The dispatcher's backoff doubles from 100 ms up to the 5 s poll, so a
	// 4 s outage costs about 7 failed leases per process. Allow 4 a second
	// (plus the first and the last): a loop retrying every 100 ms, or
	// spinning, fails this.
	maxLeaseFailures := 2 + int(4*r.outage/time.Second)
	for _, p := range r.fleet.procs {
		down := p.Logs("postgres listener is down; workers poll until it is back")
		ready := p.Logs("postgres listener ready")
		leaseFailed := p.Logs("lease failed; backing off")
		refused := p.Logs("store refused the job's result; retrying")
		if len(down) == 0 {
			t.Errorf("%s never logged that its listener lost the database", p.name)
		}
		for _, l := range append(append(down, leaseFailed...), refused...) {
			if e, _ := l["err"].(string); e == "" {
				t.Errorf("%s logged %q without the error", p.name, l["msg"])
			}
		}
		if len(leaseFailed)+len(refused) == 0 {
			t.Errorf("%s logged no failed lease and no refused result during the outage", p.name)
		}
		if len(leaseFailed) > maxLeaseFailures {
			t.Errorf("%s failed %d leases in a %s outage: not backing off (at most %d expected)", p.name, len(leaseFailed), r.outage, maxLeaseFailures)
		}
		recovered := 0
		for _, l := range ready {
			if at, _ := l["_at"].(time.Time); at.After(r.restoredAt) {
				recovered++
			}
		}
		if recovered == 0 {
			t.Errorf("%s's listener never reported being back after the restore", p.name)
		}
		if after[p.name] == 0 {
			t.Errorf("%s delivered nothing after the database came back", p.name)
		}
		t.Logf("%s: %d lease failures, %d refused results, listener down %d times / ready %d times, %d deliveries after the restore; first error: %s",
			p.name, len(leaseFailed), len(refused), len(down), len(ready), after[p.name], firstErr(leaseFailed, refused, down))
	}
}

func firstErr(sets ...[]map[string]any) string {
	for _, set := range sets {
		for _, l := range set {
			if e, _ := l["err"].(string); e != "" {
				return strconv.Quote(strings.TrimSpace(e))
			}
		}
	}
	return "none"
}
