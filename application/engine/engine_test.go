package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

func TestEngineWakesOnEnqueue(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	b.waitState("j1", domain.JobSucceeded)
	if got := b.clock.Now(); !got.Equal(t0) {
		t.Fatalf("delivery needed the clock to move to %v; the wake-up did not work", got)
	}
}

func TestEnginePollsEveryFiveSeconds(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	b.start()
	b.enqueueSilently(b.job("j1", "a.example"))
	b.advance(5*time.Second - time.Millisecond)
	if n := len(b.deliverer.Calls()); n != 0 {
		t.Fatalf("delivered %d before the 5 s poll", n)
	}
	b.clock.Advance(time.Millisecond)
	b.waitState("j1", domain.JobSucceeded)
}

func TestEngineLeasesForTwoMinutes(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, engine.Config{}, acceptOnRelease(release))
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	j := b.waitState("j1", domain.JobLeased)
	close(release)
	if !j.LeaseUntil.Equal(t0.Add(2*time.Minute)) || j.LeaseToken == "" {
		t.Fatalf("lease until %v token %q; want %v", j.LeaseUntil, j.LeaseToken, t0.Add(2*time.Minute))
	}
}

func TestEngineDeliversOldestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{Workers: 1}, nil)
	var jobs []domain.Job
	for i, off := range []int{3, 1, 4, 2} {
		j := b.job(fmt.Sprintf("j%d", i), fmt.Sprintf("h%d.example", i))
		j.RunAt = t0.Add(-time.Duration(off) * time.Second)
		jobs = append(jobs, j)
	}
	b.enqueueSilently(jobs...)
	b.start()
	b.eventually("4 deliveries", func() bool { return len(b.deliverer.Calls()) == 4 })
	var order []string
	for _, c := range b.deliverer.Calls() {
		order = append(order, c.Inbox)
	}
	want := []string{"https://h2.example/inbox", "https://h0.example/inbox", "https://h3.example/inbox", "https://h1.example/inbox"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

func TestEngineRunsEightAtATimeTwoPerHost(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, engine.Config{}, acceptOnRelease(release))
	b.start()
	var jobs []domain.Job
	for h := 0; h < 10; h++ {
		for i := 0; i < 5; i++ {
			jobs = append(jobs, b.job(fmt.Sprintf("h%d-%d", h, i), fmt.Sprintf("h%d.example", h)))
		}
	}
	b.enqueue(jobs...)
	b.waitInFlight(8)
	b.settleIdle()
	total, perHost := b.deliverer.MaxInFlight()
	if total != 8 {
		t.Fatalf("max in flight %d, want 8", total)
	}
	for h, n := range perHost {
		if n > 2 {
			t.Fatalf("host %s had %d deliveries at once", h, n)
		}
	}
	close(release)
	b.waitCount("all 50 delivered", domain.JobSucceeded, 50)
	total, perHost = b.deliverer.MaxInFlight()
	if total > 8 {
		t.Fatalf("max in flight %d", total)
	}
	for h, n := range perHost {
		if n > 2 {
			t.Fatalf("host %s had %d deliveries at once", h, n)
		}
	}
}

// A dead host with many jobs holds two slots; every other host's jobs flow.
func TestEngineDeadHostHoldsTwoSlotsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, func(ctx context.Context, d ports.Delivery) domain.Outcome {
		if d.Inbox == "https://dead.example/inbox" {
			<-ctx.Done() // a server that never answers
			return domain.NetworkFailure(ctx.Err())
		}
		return domain.Classify(202, "", time.Time{})
	})
	var jobs []domain.Job
	for i := 0; i < 200; i++ {
		jobs = append(jobs, b.job(fmt.Sprintf("dead-%03d", i), "dead.example"))
	}
	for i := 0; i < 300; i++ {
		j := b.job(fmt.Sprintf("ok-%03d", i), fmt.Sprintf("ok%d.example", i%30))
		j.RunAt = t0.Add(time.Millisecond) // behind every dead-host job in the queue
		jobs = append(jobs, j)
	}
	b.enqueueSilently(jobs...)
	b.clock.Set(t0.Add(time.Millisecond))
	b.start()
	b.waitCount("every healthy job delivered", domain.JobSucceeded, 300)
	_, perHost := b.deliverer.MaxInFlight()
	if perHost["dead.example"] != 2 {
		t.Fatalf("dead host held %d slots at most, want exactly 2", perHost["dead.example"])
	}
	if n := b.deliverer.CallsTo("https://dead.example/inbox"); n != 2 {
		t.Fatalf("%d dead-host deliveries started, want 2 (both still hanging)", n)
	}
}

func TestEngineRetriesOnTheCurve(t *testing.T) {
	t.Parallel()
	var b *bundle
	var mu sync.Mutex
	var attemptAt []time.Time
	b = setup(t, engine.Config{}, func(context.Context, ports.Delivery) domain.Outcome {
		mu.Lock()
		attemptAt = append(attemptAt, b.clock.Now())
		mu.Unlock()
		return domain.Classify(503, "", time.Time{})
	})
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	for n := 1; n <= 4; n++ {
		var j domain.Job
		b.eventually(fmt.Sprintf("attempt %d recorded", n), func() bool {
			j = b.get("j1")
			return j.State == domain.JobQueued && j.Attempts == n
		})
		mu.Lock()
		want := attemptAt[n-1].Add(domain.RetryDelay(n, 0))
		mu.Unlock()
		if !j.RunAt.Equal(want) || j.LastError == "" {
			t.Fatalf("after attempt %d: runAt %v (want %v), error %q", n, j.RunAt, want, j.LastError)
		}
		b.advance(j.RunAt.Sub(b.clock.Now()) - time.Millisecond)
		if got := len(b.deliverer.Calls()); got != n {
			t.Fatalf("attempt %d ran before its time (%d calls)", n+1, got)
		}
		// Due now; the next 5 s poll takes it.
		b.clock.Advance(5 * time.Second)
	}
}

func TestEngineRetryJitter(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, status(500))
	b.rebuild(engine.Config{}, func(d *engine.Deps) { d.Random = fake.Random(0.5) })
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	var j domain.Job
	b.eventually("first attempt", func() bool { j = b.get("j1"); return j.Attempts == 1 })
	if want := t0.Add(domain.RetryDelay(1, 0.5)); !j.RunAt.Equal(want) {
		t.Fatalf("runAt %v, want %v (jitter from the injected source)", j.RunAt, want)
	}
}

// 429 proves the host is up, so the breaker stays out of this test and the
// job meets the attempt limit alone.
func TestEngineDeadAfterSixteenAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, status(429))
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	for n := 1; n < domain.MaxAttempts; n++ {
		var j domain.Job
		b.eventually(fmt.Sprintf("attempt %d", n), func() bool { j = b.get("j1"); return j.Attempts == n && j.State == domain.JobQueued })
		b.clock.Set(j.RunAt)
	}
	j := b.waitState("j1", domain.JobDead)
	if j.Attempts != domain.MaxAttempts || len(b.deliverer.Calls()) != domain.MaxAttempts || j.FinishedAt.IsZero() || j.LastError == "" {
		t.Fatalf("dead job %+v after %d calls", j, len(b.deliverer.Calls()))
	}
}

// A 4xx other than 408 and 429 is final at once: dead after its one
// attempt. The others are retried at the curve's first step (SPEC §2).
func TestEngineStatuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		codes []int
		final bool
	}{
		{[]int{400, 401, 403, 404, 410, 422}, true},
		{[]int{408, 429, 500, 502, 503, 504}, false},
	} {
		for _, code := range tc.codes {
			t.Run(fmt.Sprint(code), func(t *testing.T) {
				t.Parallel()
				b := setup(t, engine.Config{}, status(code))
				b.start()
				b.enqueue(b.job("j1", "a.example"))
				if tc.final {
					j := b.waitState("j1", domain.JobDead)
					if j.Attempts != 1 || j.LastError == "" || len(b.deliverer.Calls()) != 1 {
						t.Fatalf("%d: %+v", code, j)
					}
					return
				}
				var j domain.Job
				b.eventually("attempt recorded", func() bool { j = b.get("j1"); return j.Attempts == 1 && j.State == domain.JobQueued })
				if !j.RunAt.Equal(t0.Add(domain.RetryDelay(1, 0))) {
					t.Fatalf("%d: runAt %v", code, j.RunAt)
				}
			})
		}
	}
}

func TestEngineNetworkErrorRetries(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, func(context.Context, ports.Delivery) domain.Outcome {
		return domain.NetworkFailure(fmt.Errorf("dial tcp: connection refused"))
	})
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	var j domain.Job
	b.eventually("retry", func() bool { j = b.get("j1"); return j.Attempts == 1 && j.State == domain.JobQueued })
	if j.LastError != "dial tcp: connection refused" {
		t.Fatalf("reason %q", j.LastError)
	}
}

func TestEngine429WaitsRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		retryAfter string
		want       time.Duration
	}{
		{"delta-seconds longer than the curve", "600", 600 * time.Second},
		{"HTTP-date", t0.Add(time.Hour).Format(http1123), time.Hour},
		{"shorter than the curve waits the curve", "1", domain.RetryDelay(1, 0)},
		{"absurd value is bounded", "99999999", domain.MaxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b *bundle
			b = setup(t, engine.Config{}, func(context.Context, ports.Delivery) domain.Outcome {
				return domain.Classify(429, tt.retryAfter, b.clock.Now())
			})
			b.start()
			b.enqueue(b.job("j1", "a.example"))
			var j domain.Job
			b.eventually("retry", func() bool { j = b.get("j1"); return j.Attempts == 1 && j.State == domain.JobQueued })
			if got := j.RunAt.Sub(t0); got != tt.want {
				t.Fatalf("waits %v, want %v", got, tt.want)
			}
		})
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

func TestEngineBreakerQuarantinesAfterTenFailures(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	healthy := false
	b := setup(t, engine.Config{PerHost: 1}, func(context.Context, ports.Delivery) domain.Outcome {
		mu.Lock()
		defer mu.Unlock()
		if healthy {
			return domain.Classify(202, "", time.Time{})
		}
		return domain.Classify(503, "", time.Time{})
	})
	b.start()
	b.enqueue(b.onHost("sick.example", 30)...)
	// Each failure holds the host's other jobs for the first step of the
	// curve (holdFailedHosts): the clock moves a step at a time until the
	// tenth consecutive failure opens the breaker.
	var quarantinedAt time.Time
	for step := 0; ; step++ {
		if step > 4*domain.BreakerThreshold {
			t.Fatal("no quarantine")
		}
		n := len(b.deliverer.Calls())
		b.waitCount("the attempt settled", domain.JobLeased, 0)
		if r, err := b.instances.Get(context.Background(), "sick.example"); err == nil && r.Quarantined(b.clock.Now()) {
			quarantinedAt = b.clock.Now()
			break
		}
		b.clock.Advance(domain.RetryDelay(1, 0))
		b.eventually("the next attempt", func() bool { return len(b.deliverer.Calls()) > n })
	}
	if n := len(b.deliverer.Calls()); n != domain.BreakerThreshold {
		t.Fatalf("%d attempts before the quarantine, want %d", n, domain.BreakerThreshold)
	}
	r, _ := b.instances.Get(context.Background(), "sick.example")
	if !r.QuarantinedUntil.Equal(quarantinedAt.Add(time.Hour)) {
		t.Fatalf("quarantined until %v, want %v", r.QuarantinedUntil, quarantinedAt.Add(time.Hour))
	}
	// While quarantined, nothing is attempted and no attempt is spent.
	b.advance(59 * time.Minute)
	if n := len(b.deliverer.Calls()); n != domain.BreakerThreshold {
		t.Fatalf("%d attempts during the quarantine", n)
	}
	all, _ := b.jobs.List(context.Background(), ports.JobFilter{})
	attempts := 0
	for _, j := range all {
		attempts += j.Attempts
		if j.Attempts == 0 && j.RunAt.Before(r.QuarantinedUntil) {
			t.Fatalf("job %s due %v inside the quarantine", j.ID, j.RunAt)
		}
	}
	if attempts != domain.BreakerThreshold {
		t.Fatalf("%d attempts spent in all, want %d", attempts, domain.BreakerThreshold)
	}
	// The host recovers; after the quarantine every job is delivered.
	mu.Lock()
	healthy = true
	mu.Unlock()
	b.clock.Set(quarantinedAt.Add(time.Hour + 5*time.Minute)) // past the quarantine and every retry of the failed ten
	b.waitCount("all delivered after the quarantine", domain.JobSucceeded, 30)
	r, _ = b.instances.Get(context.Background(), "sick.example")
	if !r.Healthy() {
		t.Fatalf("success did not reset the breaker: %+v", r)
	}
}

func TestEngineQuarantinedHostJobsKeepAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	until := t0.Add(time.Hour)
	if _, err := b.instances.Update(context.Background(), "q.example", func(r *domain.RemoteInstance) {
		r.ConsecutiveFailures, r.QuarantineLevel, r.QuarantinedUntil = 10, 1, until
	}); err != nil {
		t.Fatal(err)
	}
	b.start()
	j := b.job("j1", "q.example")
	j.Attempts = 3
	b.enqueue(j, b.job("ok", "ok.example"))
	b.waitState("ok", domain.JobSucceeded)
	var got domain.Job
	b.eventually("deferred", func() bool { got = b.get("j1"); return got.State == domain.JobQueued && got.RunAt.Equal(until) })
	if got.Attempts != 3 || b.deliverer.CallsTo("https://q.example/inbox") != 0 {
		t.Fatalf("quarantined job attempted or charged: %+v", got)
	}
	b.clock.Set(until)
	got = b.waitState("j1", domain.JobSucceeded)
	if got.Attempts != 4 {
		t.Fatalf("attempts %d after one real attempt, want 4", got.Attempts)
	}
}

// The per-host cap lets a second attempt be in flight when the first one's
// failure opens the breaker: when that second attempt fails too, its retry
// waits for the end of the quarantine, not for the curve's first step,
// which falls inside the quarantine where nothing would move it.
func TestEngineRetryOfAnAttemptInFlightWaitsForTheQuarantine(t *testing.T) {
	t.Parallel()
	// Both attempts are in flight before the first one fails: the first
	// waits for the second to start, the second for the test.
	secondStarted, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	calls := 0
	b := setup(t, engine.Config{PerHost: 2}, func(ctx context.Context, _ ports.Delivery) domain.Outcome {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		wait := release
		switch n {
		case 1:
			wait = secondStarted
		case 2:
			close(secondStarted)
		}
		select {
		case <-wait:
		case <-ctx.Done():
		}
		return domain.Classify(503, "", time.Time{})
	})
	if _, err := b.instances.Update(context.Background(), "sick.example", func(r *domain.RemoteInstance) {
		r.ConsecutiveFailures = domain.BreakerThreshold - 1
	}); err != nil {
		t.Fatal(err)
	}
	b.start()
	b.enqueue(b.job("j1", "sick.example"), b.job("j2", "sick.example"))
	var r domain.RemoteInstance
	b.eventually("the first failure quarantines the host", func() bool {
		var err error
		r, err = b.instances.Get(context.Background(), "sick.example")
		return err == nil && r.Quarantined(b.clock.Now())
	})
	close(release)
	for _, id := range []string{"j1", "j2"} {
		var j domain.Job
		b.eventually(id+" settled", func() bool { j = b.get(id); return j.State == domain.JobQueued && j.Attempts == 1 })
		if !j.RunAt.Equal(r.QuarantinedUntil) {
			t.Errorf("%s retries at +%s, want the end of the quarantine +%s", id, j.RunAt.Sub(t0), r.QuarantinedUntil.Sub(t0))
		}
	}
}

func TestLiftQuarantineRunsJobsNow(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	until := t0.Add(4 * time.Hour)
	if _, err := b.instances.Update(context.Background(), "q.example", func(r *domain.RemoteInstance) {
		r.ConsecutiveFailures, r.QuarantineLevel, r.QuarantinedUntil = 12, 3, until
	}); err != nil {
		t.Fatal(err)
	}
	j := b.job("j1", "q.example")
	j.RunAt = until
	b.enqueueSilently(j)
	b.start()
	lift := application.LiftQuarantineHandler{Instances: b.instances, Jobs: b.jobs, Clock: b.clock, Waker: b.engine}
	res, err := lift.Handle(context.Background(), "Q.example")
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 1 || res.Instance.Quarantined(b.clock.Now()) {
		t.Fatalf("lift: %+v", res)
	}
	b.waitState("j1", domain.JobSucceeded)
	if _, err := lift.Handle(context.Background(), "never.example"); err == nil {
		t.Fatal("lifting an unknown host succeeded")
	}
}

func TestEngineReaperRecoversExpiredLeases(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	b.enqueueSilently(b.job("j1", "a.example"))
	// A worker of a process that then died took the job.
	if got, err := b.jobs.LeaseBatch(context.Background(), ports.LeaseRequest{Owner: "dead", Token: "dead-token", Now: t0, Until: t0.Add(2 * time.Minute)}); err != nil || len(got) != 1 {
		t.Fatal(err, got)
	}
	b.start()
	for i := 0; i < 4; i++ { // reaper passes at 30, 60, 90 and 120 s: the lease still holds
		b.advance(30 * time.Second)
	}
	if j := b.get("j1"); j.State != domain.JobLeased || len(b.deliverer.Calls()) != 0 {
		t.Fatalf("reaped before the lease expired: %+v", j)
	}
	b.clock.Advance(30 * time.Second) // the pass at 150 s finds it expired
	j := b.waitState("j1", domain.JobSucceeded)
	if j.Attempts != 2 {
		t.Fatalf("attempts %d: the reap must count as one", j.Attempts)
	}
}

func TestEngineRetentionPurge(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	b.waitState("j1", domain.JobSucceeded)
	b.advance(7 * 24 * time.Hour) // the purge of this hour sees FinishedAt exactly 7 days old: kept
	if _, err := b.jobs.Get(context.Background(), contract.JobID("j1")); err != nil {
		t.Fatalf("purged at exactly 7 days: %v", err)
	}
	b.advance(time.Hour)
	b.eventually("purged after 7 days", func() bool {
		_, err := b.jobs.Get(context.Background(), contract.JobID("j1"))
		return err != nil
	})
}

func TestEngineStaleResultIsDropped(t *testing.T) {
	t.Parallel()
	var b *bundle
	b = setup(t, engine.Config{}, func(ctx context.Context, d ports.Delivery) domain.Outcome {
		// While this delivery hangs, its lease expires, the reaper requeues
		// the job and another process takes it.
		later := t0.Add(3 * time.Minute)
		if _, err := b.jobs.Reap(ctx, later, domain.MaxAttempts); err != nil {
			panic(err)
		}
		if got, err := b.jobs.LeaseBatch(ctx, ports.LeaseRequest{Owner: "other", Token: "other-token", Now: later, Until: later.Add(2 * time.Minute)}); err != nil || len(got) != 1 {
			panic(fmt.Sprint(err, got))
		}
		return domain.Classify(410, "", time.Time{})
	})
	b.start()
	b.enqueue(b.job("j1", "a.example"))
	b.eventually("delivery returned", func() bool { return len(b.deliverer.Calls()) == 1 && b.deliverer.InFlight() == 0 })
	b.eventually("slot freed", func() bool { return b.engine.InFlight() == 0 })
	j := b.get("j1")
	if j.State != domain.JobLeased || j.LeaseToken != "other-token" {
		t.Fatalf("a stale holder overwrote the next holder: %+v", j)
	}
}

func TestEngineSenderGoneIsDead(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, nil)
	b.start()
	j := b.job("j1", "a.example")
	j.SenderID = "deleted-actor"
	b.enqueue(j)
	got := b.waitState("j1", domain.JobDead)
	if len(b.deliverer.Calls()) != 0 || got.LastError == "" {
		t.Fatalf("%+v", got)
	}
}

func TestEngineGracefulShutdown(t *testing.T) {
	t.Parallel()
	finish := make(chan struct{})
	b := setup(t, engine.Config{Grace: 30 * time.Second}, func(ctx context.Context, d ports.Delivery) domain.Outcome {
		if d.Inbox == "https://quick.example/inbox" {
			<-finish
			return domain.Classify(202, "", time.Time{})
		}
		<-ctx.Done() // never answers within the grace period
		return domain.NetworkFailure(ctx.Err())
	})
	b.start()
	b.enqueue(b.job("quick", "quick.example"), b.job("slow", "slow.example"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.deliverer.WaitFor(ctx, func(calls, inFlight int) bool { return inFlight == 2 })
	b.cancel()
	// Leasing stopped: a job enqueued now is not taken.
	b.enqueue(b.job("late", "late.example"))
	close(finish)
	b.waitState("quick", domain.JobSucceeded)
	if !b.clock.BlockUntil(ctx, 1) { // the grace timer
		t.Fatal("no grace timer")
	}
	b.clock.Advance(30 * time.Second)
	select {
	case <-b.done:
		b.cancel = nil
	case <-ctx.Done():
		t.Fatal("engine did not stop after the grace period")
	}
	slow := b.get("slow")
	if slow.State != domain.JobQueued || slow.Attempts != 0 || slow.LeaseToken != "" {
		t.Fatalf("cut-off delivery not released cleanly: %+v", slow)
	}
	if late := b.get("late"); late.State != domain.JobQueued || b.deliverer.CallsTo("https://late.example/inbox") != 0 {
		t.Fatalf("leased after shutdown began: %+v", late)
	}
}

// Hosts whose last attempt failed share FailingSlots (Workers/4 = 2) slots:
// dead servers waiting out their timeouts cannot fill the 8 slots while
// hosts that answer have work.
func TestEngineFailingHostsShareTheirSlots(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	release := make(chan struct{})
	deadNow, deadMax := 0, 0
	b := setup(t, engine.Config{}, func(ctx context.Context, d ports.Delivery) domain.Outcome {
		if !strings.Contains(d.Inbox, "dead") {
			return domain.Classify(202, "", time.Time{})
		}
		mu.Lock()
		deadNow++
		deadMax = max(deadMax, deadNow)
		ch := release
		mu.Unlock()
		select { // a server that does not answer until the test says so
		case <-ch:
		case <-ctx.Done():
		}
		mu.Lock()
		deadNow--
		mu.Unlock()
		return domain.NetworkFailure(fmt.Errorf("timeout"))
	})
	b.start()
	// Phase 1: a first wave to eight dead hosts the engine knows nothing of
	// yet (it fills the 8 slots); the attempts fail and the hosts are known
	// failing from then on.
	var first []domain.Job
	for h := 0; h < 8; h++ {
		first = append(first, b.job(fmt.Sprintf("w1-%d", h), fmt.Sprintf("dead%d.example", h)))
	}
	b.enqueue(first...)
	b.eventually("first wave in flight", func() bool { mu.Lock(); defer mu.Unlock(); return deadNow == 8 })
	mu.Lock()
	close(release)
	release = make(chan struct{})
	mu.Unlock()
	b.eventually("first wave failed", func() bool {
		all, _ := b.jobs.List(context.Background(), ports.JobFilter{})
		failed := 0
		for _, j := range all {
			if j.Attempts == 1 {
				failed++
			}
		}
		return failed == 8
	})
	mu.Lock()
	deadMax = 0
	mu.Unlock()
	// Phase 2: more jobs to the failing hosts, ahead of 100 to hosts that
	// answer.
	var second []domain.Job
	for h := 0; h < 8; h++ {
		for i := 0; i < 3; i++ {
			second = append(second, b.job(fmt.Sprintf("w2-%d-%d", h, i), fmt.Sprintf("dead%d.example", h)))
		}
	}
	for i := 0; i < 100; i++ {
		j := b.job(fmt.Sprintf("ok-%03d", i), fmt.Sprintf("ok%d.example", i%20))
		j.RunAt = b.clock.Now().Add(time.Millisecond)
		second = append(second, j)
	}
	b.enqueue(second...)
	// The healthy jobs are due; the failing hosts' are held until the
	// first step of the curve (holdFailedHosts), which this passes.
	b.clock.Advance(domain.RetryDelay(1, 0) + time.Second)
	b.eventually("every healthy job delivered while the failing hosts hang", func() bool {
		n := 0
		for i := 0; i < 100; i++ {
			if b.get(fmt.Sprintf("ok-%03d", i)).State == domain.JobSucceeded {
				n++
			}
		}
		return n == 100
	})
	mu.Lock()
	got := deadMax
	mu.Unlock()
	if got != 2 {
		t.Fatalf("failing hosts had %d deliveries at once, want their 2 shared slots used and no more", got)
	}
	mu.Lock()
	close(release)
	mu.Unlock()
}
