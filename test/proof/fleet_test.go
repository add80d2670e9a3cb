package proof_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/domain"
)

// senderKeys is one RSA-2048 key pair for every proof's sending actor.
var senderKeys = sync.OnceValues(security.RSAKeys{}.GenerateKeyPair)

const senderKeyID = "http://proof.invalid/users/proofsender#main-key"

// createSender saves the local actor whose key signs every delivery.
func createSender(t *testing.T, st proofStore) string {
	t.Helper()
	keys, err := senderKeys()
	if err != nil {
		t.Fatalf("keys: %v", err)
	}
	a, err := domain.NewAvatar(system.IDs{}.NewID(), "", "proofsender", keys, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.actors().CreateAvatar(testCtx(t), a); err != nil {
		t.Fatalf("create sender: %v", err)
	}
	return a.ID
}

// activityID is the id of job i's activity, what the sink counts by.
func activityID(i int) string { return fmt.Sprintf("http://proof.invalid/activities/%06d", i) }

// enqueueJobs queues n deliveries, one activity each, over the sink's
// inboxes in runs of `run` consecutive jobs per host (so the head of the
// queue always holds several jobs of one host and the per-host cap has
// work to refuse), and returns when they are committed. Job i is due a
// microsecond after job i-1: the lease takes the oldest RunAt first, so the
// queue has this order whatever order the store gives ties.
func enqueueJobs(t *testing.T, st proofStore, sender string, inboxes []string, n, run int) {
	t.Helper()
	jobs := makeProofJobs(t, sender, inboxes, n, run)
	got, err := st.jobs().Enqueue(testCtx(t), jobs)
	if err != nil || got != n {
		t.Fatalf("enqueue: %d of %d, %v", got, n, err)
	}
}

// makeProofJobs builds the n jobs enqueueJobs queues.
func makeProofJobs(t *testing.T, sender string, inboxes []string, n, run int) []domain.Job {
	t.Helper()
	now := time.Now().Add(-time.Second)
	jobs := make([]domain.Job, 0, n)
	for i := range n {
		id := activityID(i)
		payload := fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","id":%q,"type":"Create","actor":"http://proof.invalid/users/proofsender","object":{"type":"Note","content":"proof %d"}}`, id, i)
		j, err := domain.NewJob(system.IDs{}.NewID(), id, inboxes[(i/run)%len(inboxes)], sender, senderKeyID, []byte(payload), now)
		if err != nil {
			t.Fatal(err)
		}
		j.RunAt = now.Add(time.Duration(i) * time.Microsecond)
		jobs = append(jobs, j)
	}
	return jobs
}

// fleet is the worker processes of one proof.
type fleet struct {
	t     *testing.T
	args  []string
	procs []*proc
	all   []*proc // every process ever started, killed ones included
}

// newFleet makes the fleet of workers that open their store with
// storeFlags (a proofStore's workerFlags) and take args.
func newFleet(t *testing.T, storeFlags []string, args ...string) *fleet {
	return &fleet{t: t, args: append(append([]string(nil), storeFlags...), args...)}
}

// start starts a worker named name (waitReady waits until it listens for
// enqueue notifications, or on the stores without them, is connected).
func (f *fleet) start(name string) *proc {
	f.t.Helper()
	args := append([]string{"-name", name}, f.args...)
	p := startProc(f.t, name, workerBin, nil, args...)
	f.procs = append(f.procs, p)
	f.all = append(f.all, p)
	return p
}

func (f *fleet) waitReady() {
	f.t.Helper()
	for _, p := range f.procs {
		p.waitFor(f.t, "ready (LISTEN up)", 30*time.Second, func() bool { return len(p.Events("ready")) > 0 })
	}
}

// remove forgets a process (it was killed).
func (f *fleet) remove(p *proc) {
	for i, q := range f.procs {
		if q == p {
			f.procs = append(f.procs[:i], f.procs[i+1:]...)
			return
		}
	}
}

// stop sends SIGTERM to every live worker and returns their summaries.
func (f *fleet) stop() map[string]map[string]any {
	f.t.Helper()
	var wg sync.WaitGroup
	for _, p := range f.procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop(f.t) }()
	}
	wg.Wait()
	out := map[string]map[string]any{}
	for _, p := range f.procs {
		s := p.Events("summary")
		if len(s) != 1 {
			f.t.Errorf("%s wrote %d summaries", p.name, len(s))
			continue
		}
		out[p.name] = s[0]
	}
	return out
}

// failed lists the failed delivery attempts every process reported (killed
// processes included, up to their death), one line each.
func (f *fleet) failed() []string {
	var out []string
	for _, p := range f.all {
		for _, e := range p.Events("failed") {
			out = append(out, fmt.Sprintf("%s: %v %v (HTTP %v) %v", p.name, e["host"], e["kind"], e["status"], e["reason"]))
		}
	}
	return out
}

// reaped sums what every process's reaper passes recovered, as they
// reported it on stdout (killed processes included, up to their death).
func (f *fleet) reaped() (requeued, dead, passes int) {
	for _, p := range f.all {
		for _, e := range p.Events("reaped") {
			requeued += num(e["requeued"])
			dead += num(e["dead"])
			passes++
		}
	}
	return
}

// waitAllDone waits until every one of n jobs is finished and returns the
// time the last one finished (by the workers' clocks). It fails at once if
// any job died, and when the jobs stop moving (progressing).
func waitAllDone(t *testing.T, st proofStore, n int) time.Time {
	t.Helper()
	waitFinished(t, n, st.finished, func() any { return st.states(t) })
	return st.lastFinished(t)
}

// checkDeliveredOnce fails unless every one of n activities reached the
// sink, nothing unknown or malformed did, and at most maxRedeliveries were
// sent more than once; it returns the tally.
func checkDelivered(t *testing.T, s *sink, n, maxRedeliveries int) tally {
	t.Helper()
	tl := s.tally()
	if len(tl.bad) > 0 {
		t.Errorf("the inboxes got %d malformed requests, first: %s", len(tl.bad), tl.bad[0])
	}
	var missing []string
	for i := range n {
		if tl.deliveredByID[activityID(i)] == 0 {
			missing = append(missing, activityID(i))
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d activities never delivered (lost), first: %s", len(missing), n, missing[0])
	}
	if tl.distinct != n {
		t.Errorf("the inboxes saw %d distinct activities, want %d", tl.distinct, n)
	}
	if tl.redeliveries > maxRedeliveries {
		t.Errorf("%d re-deliveries (%d activities delivered more than once), want at most %d; e.g. %s",
			tl.redeliveries, len(tl.redelivered), maxRedeliveries, firstRedelivered(tl))
	}
	return tl
}

func firstRedelivered(tl tally) string {
	ids := make([]string, 0, len(tl.redelivered))
	for id := range tl.redelivered {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return "none"
	}
	return ids[0] + " by " + strings.Join(tl.redelivered[ids[0]], ", ")
}

// checkCap fails if any process ever had more than perHost requests at
// once on one host.
func checkCap(t *testing.T, tl tally, perHost int) {
	t.Helper()
	if tl.maxPerProcHost > perHost {
		t.Errorf("process %s had %d requests at once on host %s, cap %d",
			tl.worstProcHost.proc, tl.maxPerProcHost, tl.worstProcHost.host, perHost)
	}
	if tl.maxPerProcHost < perHost {
		t.Errorf("no process ever had %d requests at once on one host: the cap was never put to the test", perHost)
	}
}
