package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// countingJobs records the engine's lease and settle round trips.
type countingJobs struct {
	*memory.JobStore
	mu      sync.Mutex
	leases  []leaseCall
	settles []int
}

type leaseCall struct{ limit, got int }

func (c *countingJobs) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	jobs, err := c.JobStore.LeaseBatch(ctx, req)
	c.mu.Lock()
	c.leases = append(c.leases, leaseCall{req.Limit, len(jobs)})
	c.mu.Unlock()
	return jobs, err
}

func (c *countingJobs) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	c.mu.Lock()
	c.settles = append(c.settles, len(batch))
	c.mu.Unlock()
	return c.JobStore.Settle(ctx, batch)
}

func (c *countingJobs) calls() ([]leaseCall, []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]leaseCall(nil), c.leases...), append([]int(nil), c.settles...)
}

// countingInstances records the engine's breaker round trips.
type countingInstances struct {
	*memory.InstanceStore
	mu                         sync.Mutex
	gets, lists, updates, many int
}

func (c *countingInstances) Get(ctx context.Context, host string) (domain.RemoteInstance, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.InstanceStore.Get(ctx, host)
}

func (c *countingInstances) List(ctx context.Context, at time.Time) ([]domain.RemoteInstance, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.InstanceStore.List(ctx, at)
}

func (c *countingInstances) Update(ctx context.Context, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error) {
	c.mu.Lock()
	c.updates++
	c.mu.Unlock()
	return c.InstanceStore.Update(ctx, host, fn)
}

func (c *countingInstances) UpdateMany(ctx context.Context, hosts []string, fn func(*domain.RemoteInstance)) (map[string]domain.RemoteInstance, error) {
	c.mu.Lock()
	c.many++
	c.mu.Unlock()
	return c.InstanceStore.UpdateMany(ctx, hosts, fn)
}

// withCounters rebuilds b's engine over counting stores.
func withCounters(t *testing.T, b *bundle, cfg engine.Config) (*countingJobs, *countingInstances) {
	t.Helper()
	jobs := &countingJobs{JobStore: b.jobs}
	inst := &countingInstances{InstanceStore: b.instances}
	b.rebuild(cfg, func(d *engine.Deps) { d.Jobs, d.Instances = jobs, inst })
	return jobs, inst
}

// One lease round trip fills every free slot, and the results are written
// in batches, not one write per job: 40 jobs on 40 hosts with 8 workers are
// leased in batches (the first for the 8 free slots, then, while leases
// come back full, up to 8 more ahead of the running batch),
// never more than 8 delivered at once, and written in batches of at most
// flushMax. The flush window is long here so that only the two other
// triggers write: flushMax results waiting, and the dispatcher idle. It goes idle
// only once the queue is drained (every job leased), and then each result
// may be written as its delivery ends, since results held back could be
// what keeps hosts at their cap; when that is depends on the machine's
// load (a loaded CI wrote [32 4 1 3]). So the writes are bounded by one
// flushMax batch before the drain, the results pending at the drain, and
// one per job unfinished then: at most the 8 running and the 8 ahead.
func TestEngineLeasesAndSettlesInBatches(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	cfg := engine.WithFlushEvery(engine.Config{}, time.Hour)
	jobs, _ := withCounters(t, b, cfg)
	b.startWithBacklog(40)
	b.waitCount("all 40 succeeded", domain.JobSucceeded, 40)
	leases, settles := jobs.calls()
	leased, settled := 0, 0
	_, flushMax, ahead := b.engine.Budgets()
	for _, l := range leases {
		leased += l.got
		if l.got > l.limit || l.limit > 8+ahead {
			t.Errorf("lease of limit %d got %d: more than the 8 slots and %d ahead", l.limit, l.got, ahead)
		}
	}
	for _, n := range settles {
		settled += n
		if n > flushMax {
			t.Errorf("a settle of %d results, more than flushMax %d", n, flushMax)
		}
	}
	if leases[0] != (leaseCall{8, 8}) {
		t.Errorf("first lease %+v, want all 8 slots filled in one round trip", leases[0])
	}
	if leased != 40 || settled != 40 {
		t.Errorf("leased %d, settled %d, want 40 each", leased, settled)
	}
	if bound := 40/flushMax + 1 + 8 + ahead; len(settles) > bound {
		t.Errorf("%d settle round trips for 40 jobs (%v), want at most %d", len(settles), settles, bound)
	}
	if total, _ := b.deliverer.MaxInFlight(); total > 8 {
		t.Errorf("%d deliveries at once, more than the 8 slots", total)
	}
}

// The next batch is leased while the current one is in flight: with all 8
// slots busy on a backlog, the jobs leased ahead (a batch, 8) wait, leased
// and undelivered, and take each slot the moment it frees, with no round
// trip between; never more than 8 deliveries at once.
func TestEngineLeasesTheNextBatchAhead(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, engine.Config{}, acceptOnRelease(release))
	jobs, _ := withCounters(t, b, engine.Config{})
	b.startWithBacklog(40)
	b.waitInFlight(8)
	b.waitCount("the jobs leased ahead", domain.JobLeased, 16)
	b.settleIdle()
	if c, _ := b.jobs.Counts(context.Background()); c[domain.JobLeased] != 16 {
		t.Fatalf("leased %d with 8 in flight, want 8 ahead of them", c[domain.JobLeased])
	}
	if n := len(b.deliverer.Calls()); n != 8 {
		t.Fatalf("%d deliveries started with 8 slots", n)
	}
	before, _ := jobs.calls()
	close(release)
	b.waitCount("all 40 succeeded", domain.JobSucceeded, 40)
	if total, _ := b.deliverer.MaxInFlight(); total != 8 {
		t.Fatalf("%d deliveries at once, want the 8 slots", total)
	}
	after, _ := jobs.calls()
	t.Logf("leases before the release %v, after %v", before, after[len(before):])
}

// The breaker costs no round trip per job: 50 jobs to 50 hosts read the
// quarantined hosts once (the view, at start) and never a host's state, and
// their first successes are written together (UpdateMany, at most once per
// successWriteEvery on the engine's clock, which stands still here, and at
// stop), never with a per-host Update.
func TestEngineBreakerReadsAreNotPerJob(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	_, inst := withCounters(t, b, engine.WithFlushEvery(engine.Config{}, time.Hour))
	all := b.startWithBacklog(50)
	b.waitCount("all 50 succeeded", domain.JobSucceeded, 50)
	b.stop() // the last flush writes the successes still gathered
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.gets != 0 || inst.updates != 0 || inst.lists != 1 || inst.many == 0 || inst.many > 2 {
		t.Fatalf("breaker round trips for 50 jobs: %d Get, %d List, %d Update, %d UpdateMany; want 0, 1, 0, 1-2",
			inst.gets, inst.lists, inst.updates, inst.many)
	}
	for _, j := range all {
		r, err := b.instances.Get(context.Background(), j.Host)
		if err != nil || !r.LastSuccessAt.Equal(t0) {
			t.Fatalf("the success of %s was not recorded: %+v %v", j.Host, r, err)
		}
	}
}

// The staleness bound of the quarantine view: a quarantine another process
// opened is not known here until the view is read again, breakerCacheTTL
// (10 s) after the last read; a job of that host that came due in between
// is not held back. From the next read on, its jobs wait out the
// quarantine without spending attempts. (The jobs here have lost their
// sender, so neither is attempted and no breaker write informs the engine
// sooner: the first dies, as it does when nothing holds it back; the
// second is deferred, which comes first.)
func TestEngineSeesAnotherProcessQuarantineWithinTheTTL(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	b.start() // the view is read now: nothing is quarantined
	until := t0.Add(time.Hour)
	if _, err := b.instances.Update(context.Background(), "q.example", func(r *domain.RemoteInstance) {
		r.ConsecutiveFailures, r.QuarantineLevel, r.QuarantinedUntil = 10, 1, until
	}); err != nil {
		t.Fatal(err)
	}
	early, late := b.job("early", "q.example"), b.job("late", "q.example")
	early.SenderID, late.SenderID = "gone", "gone"
	b.enqueue(early)
	b.waitState("early", domain.JobDead) // inside the 10 s: not known yet
	b.advance(10 * time.Second)          // the view is read again
	b.enqueue(late)
	var got domain.Job
	b.eventually("late deferred to the quarantine's end", func() bool {
		got = b.get("late")
		return got.State == domain.JobQueued && got.RunAt.Equal(until)
	})
	if got.Attempts != 0 || len(b.deliverer.Calls()) != 0 {
		t.Fatalf("late %+v, %d deliveries", got, len(b.deliverer.Calls()))
	}
}

// Every result is written before Run returns: deliveries that end after
// shutdown began (within the grace period) are recorded, none left leased.
func TestEngineWritesEveryResultBeforeRunReturns(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, engine.Config{}, acceptOnRelease(release))
	b.rebuild(engine.WithFlushEvery(engine.Config{Grace: time.Hour}, time.Hour), nil)
	b.start()
	all := b.spread(8)
	b.enqueue(all...)
	b.waitInFlight(8)
	b.cancel()
	close(release)
	select {
	case <-b.done:
		b.cancel = nil
	case <-time.After(10 * time.Second):
		t.Fatal("engine did not stop")
	}
	c, _ := b.jobs.Counts(context.Background())
	if c[domain.JobSucceeded] != 8 || c[domain.JobLeased] != 0 {
		t.Fatalf("after Run returned: %v, want all 8 succeeded", c)
	}
}

// Another process holds a host at the per-host cap; when it settles, this
// engine, which was woken for that host's jobs and found them capped,
// leases them within BusyPoll (100 ms), not at the next 5 s poll: without
// it, on a quiet machine one process took a whole fan-out (SPEC §9). Once
// BusyFor (2 s) has passed with nothing found, it is back to 5 s polls.
func TestEngineLooksAgainSoonWhileOtherProcessesHoldTheCap(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	jobs, _ := withCounters(t, b, engine.Config{})
	b.start()
	b.enqueueSilently(b.job("j1", "a.example"), b.job("j2", "a.example"), b.job("j3", "a.example"))
	// The other process: two leases of a.example, the cap.
	held, err := b.jobs.LeaseBatch(context.Background(), ports.LeaseRequest{
		Owner: "other", Token: "other-token", Now: t0, Until: t0.Add(2 * time.Minute), Limit: 2, PerHost: 2,
	})
	if err != nil || len(held) != 2 {
		t.Fatalf("other process leased %d (%v), want 2", len(held), err)
	}
	before, _ := jobs.calls()
	b.engine.Wake() // as the enqueue's NOTIFY would
	b.eventually("a lease after the wake-up", func() bool { l, _ := jobs.calls(); return len(l) > len(before) })
	if l, _ := jobs.calls(); l[len(l)-1].got != 0 {
		t.Fatalf("leased %d of a host at its cap", l[len(l)-1].got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !b.clock.BlockUntil(ctx, idleWaiters+1) { // the busy poll beside the 5 s one
		t.Fatal("the engine armed no busy poll")
	}
	if n := len(b.deliverer.Calls()); n != 0 {
		t.Fatalf("delivered %d while the other process held the cap", n)
	}
	var done []ports.Settlement
	for _, j := range held {
		done = append(done, ports.Settlement{ID: j.ID, Token: j.LeaseToken, State: domain.JobSucceeded, Attempts: 1, FinishedAt: t0})
	}
	if lost, err := b.jobs.Settle(context.Background(), done); err != nil || lost[0] != nil || lost[1] != nil {
		t.Fatalf("other process's settle: %v %v", lost, err)
	}
	b.clock.Advance(100 * time.Millisecond)
	b.eventually("the third job leased after BusyPoll", func() bool { return len(b.deliverer.Calls()) == 1 })

	// Idle for longer than BusyFor: a job another process enqueues waits
	// for the 5 s poll again.
	b.waitState("j3", domain.JobSucceeded)
	l, _ := jobs.calls()
	b.advance(3 * time.Second) // fires the last busy poll, past BusyFor
	b.eventually("the last busy poll's lease", func() bool { l2, _ := jobs.calls(); return len(l2) > len(l) })
	b.settleIdle()
	b.enqueueSilently(b.job("j4", "b.example"))
	b.advance(time.Second)
	if n := len(b.deliverer.Calls()); n != 1 {
		t.Fatalf("delivered %d: polled faster than every 5 s while idle", n)
	}
	b.advance(time.Second)
	b.eventually("j4 at the 5 s poll", func() bool { return len(b.deliverer.Calls()) == 2 })
}

// blockedSettle holds every Settle until release is closed: a store that
// has fallen behind.
type blockedSettle struct {
	*memory.JobStore
	release chan struct{}
}

func (s *blockedSettle) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.JobStore.Settle(ctx, batch)
}

// What a kill -9 may re-deliver is bounded however far the store falls
// behind: while no result can be written, the engine starts deliveries only
// until those running and the results unwritten number Workers + waits +
// flushMax (8 + 8 + 32), then waits for a write. Without the bound all 200
// jobs (200 hosts, nothing capped) would be delivered with none written.
func TestEngineDeliversNoMoreThanItCanLoseWhileResultsWait(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	store := &blockedSettle{JobStore: b.jobs, release: make(chan struct{})}
	b.rebuild(engine.Config{}, func(d *engine.Deps) { d.Jobs = store })
	cfg := b.engine.Config()
	waits, flushMax, _ := b.engine.Budgets()
	bound := cfg.Workers + waits + flushMax
	b.startWithBacklog(200)
	b.eventually("the bound reached", func() bool { return len(b.deliverer.Calls()) >= bound })
	// The dispatcher has nothing to wait for but a write: more turns of
	// its loop (polls, busy polls) start nothing.
	for range 5 {
		b.advance(5 * time.Second)
	}
	time.Sleep(50 * time.Millisecond) // the flush window (10 ms, wall clock), several times over
	if n := len(b.deliverer.Calls()); n != bound {
		t.Fatalf("%d deliveries with no result written, want the bound %d (workers %d + waits %d + flush max %d)",
			n, bound, cfg.Workers, waits, flushMax)
	}
	close(store.release)
	b.waitCount("all 200 succeeded once the store caught up", domain.JobSucceeded, 200)
	if n := len(b.deliverer.Calls()); n != 200 {
		t.Fatalf("%d deliveries for 200 jobs", n)
	}
}

// A job leased ahead that waited more than an eighth of its lease for a
// slot goes back unattempted and is leased afresh, rather than start with
// its lease run down: the 8 jobs leased ahead of 8 blocked deliveries,
// 16 s later (past 2 min / 8), are leased twice and delivered once each,
// at their first attempt.
func TestEngineJobLeasedAheadTooLongGoesBack(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, engine.Config{}, acceptOnRelease(release))
	jobs, _ := withCounters(t, b, engine.Config{})
	all := b.startWithBacklog(16)
	b.eventually("8 running and 8 leased ahead", func() bool {
		c, _ := b.jobs.Counts(context.Background())
		return c[domain.JobLeased] == 16 && len(b.deliverer.Calls()) == 8
	})
	b.clock.Advance(16 * time.Second) // the running ones park (1 s): slots free for the jobs ahead, too late
	b.eventually("the jobs leased ahead leased again", func() bool {
		l, _ := jobs.calls()
		n := 0
		for _, c := range l {
			n += c.got
		}
		return n == 24
	})
	close(release)
	b.waitCount("all 16 succeeded", domain.JobSucceeded, 16)
	for _, j := range all {
		if got := b.get(j.ID); got.Attempts != 1 {
			t.Errorf("%s took %d attempts, want 1: going back spends none", j.ID, got.Attempts)
		}
	}
	if n := len(b.deliverer.Calls()); n != 16 {
		t.Fatalf("%d deliveries of 16 jobs", n)
	}
}

// slowFirstLease is a job store whose first lease round trip takes took on
// the engine's clock: the store grants the lease from the request's now,
// and the jobs reach the engine took later.
type slowFirstLease struct {
	*countingJobs
	clock interface{ Advance(time.Duration) }
	took  time.Duration
	once  sync.Once
}

func (s *slowFirstLease) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	jobs, err := s.countingJobs.LeaseBatch(ctx, req)
	s.once.Do(func() { s.clock.Advance(s.took) })
	return jobs, err
}

// A slow lease round trip is not a wait for a slot: the jobs of a lease
// that took 20 s of its 2 min start when they arrive (the wait in ahead
// counts from the answer), not go back and be leased again as if they had
// waited. Only a round trip that left less than 5/8 of the lease (50 s of
// 2 min: 70 s left, less than 75 s) sends its jobs back unattempted, to
// be leased afresh and delivered once each.
func TestEngineSlowLeaseRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		took   time.Duration
		leased int // jobs leased in all, for 8 delivered
	}{
		{took: 20 * time.Second, leased: 8},
		{took: 50 * time.Second, leased: 16},
	} {
		t.Run(tc.took.String(), func(t *testing.T) {
			t.Parallel()
			b := setup(t, engine.Config{}, status(202))
			counting := &countingJobs{JobStore: b.jobs}
			slow := &slowFirstLease{countingJobs: counting, clock: b.clock, took: tc.took}
			b.rebuild(engine.Config{}, func(d *engine.Deps) { d.Jobs = slow })
			all := b.startWithBacklog(8)
			b.waitCount("all 8 succeeded", domain.JobSucceeded, 8)
			leases, _ := counting.calls()
			got := 0
			for _, c := range leases {
				got += c.got
			}
			if got != tc.leased {
				t.Errorf("%d jobs leased in %d round trips, want %d", got, len(leases), tc.leased)
			}
			if n := len(b.deliverer.Calls()); n != 8 {
				t.Errorf("%d deliveries of 8 jobs", n)
			}
			for _, j := range all {
				if got := b.get(j.ID); got.Attempts != 1 {
					t.Errorf("%s took %d attempts, want 1: going back spends none", j.ID, got.Attempts)
				}
			}
		})
	}
}

// partFailedLease is a job store whose first lease leases its jobs and
// then fails, handing them back beside its error, as a store that leases
// in rounds does when a later round fails.
type partFailedLease struct {
	*memory.JobStore
	once sync.Once
}

func (s *partFailedLease) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	jobs, err := s.JobStore.LeaseBatch(ctx, req)
	failed := false
	s.once.Do(func() { failed = true })
	if failed && err == nil {
		return jobs, errors.New("the second round of the lease failed")
	}
	return jobs, err
}

// The jobs a failed lease handed back go back to the queue at once,
// unattempted, and are leased again after the lease's backoff (100 ms):
// not left leased for the reaper a whole lease later, which would spend an
// attempt on each.
func TestEngineJobsOfAFailedLeaseGoBack(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, status(202))
	b.rebuild(engine.Config{}, func(d *engine.Deps) { d.Jobs = &partFailedLease{JobStore: b.jobs} })
	all := b.startWithBacklog(8)
	b.eventually("the failed lease's jobs queued again", func() bool {
		c, _ := b.jobs.Counts(context.Background())
		return c[domain.JobQueued] == 8
	})
	b.clock.Advance(100 * time.Millisecond) // the lease's backoff, far short of the lease (2 min)
	b.waitCount("all 8 succeeded", domain.JobSucceeded, 8)
	for _, j := range all {
		if got := b.get(j.ID); got.Attempts != 1 {
			t.Errorf("%s took %d attempts, want 1", j.ID, got.Attempts)
		}
	}
}
