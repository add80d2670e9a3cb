package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// hanging answers 202 except for inboxes on hosts containing "hang", which
// wait until released (or the delivery is cut off) and then time out.
type hanging struct {
	mu      sync.Mutex
	release chan struct{}
}

func newHanging() *hanging { return &hanging{release: make(chan struct{})} }

func (h *hanging) respond(ctx context.Context, d ports.Delivery) domain.Outcome {
	if !strings.Contains(d.Inbox, "hang") {
		return domain.Classify(202, "", time.Time{})
	}
	h.mu.Lock()
	ch := h.release
	h.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	return domain.NetworkFailure(fmt.Errorf("timeout"))
}

func (h *hanging) free() {
	h.mu.Lock()
	close(h.release)
	h.release = make(chan struct{})
	h.mu.Unlock()
}

func (b *bundle) succeeded(prefix string) int {
	b.t.Helper()
	all, _ := b.jobs.List(context.Background(), ports.JobFilter{})
	n := 0
	for _, j := range all {
		if strings.HasPrefix(contract.JobName(j.ID), prefix) && j.State == domain.JobSucceeded {
			n++
		}
	}
	return n
}

// A delivery to a host that has not answered gives its slot back after
// ParkAfter and waits beside the slots; when the waits are full, it keeps
// its slot. Hosts that answer never have more than Workers deliveries.
func TestEngineWaitsOnSilentHostsLeaveTheSlots(t *testing.T) {
	t.Parallel()
	h := newHanging()
	b := setup(t, engine.Config{Workers: 2}, h.respond)
	b.start()
	defer h.free()
	b.enqueue(b.job("hang-a", "hang-a.example"), b.job("hang-b", "hang-b.example"))
	b.eventually("both slots waiting on silent hosts", func() bool { return b.deliverer.InFlight() == 2 })
	b.enqueue(b.job("ok-0", "ok0.example"))
	b.settleIdle()
	if n := b.succeeded("ok-"); n != 0 {
		t.Fatalf("%d healthy jobs delivered with every slot taken", n)
	}

	b.clock.Advance(time.Second - time.Millisecond)
	b.settleIdle()
	if n := b.succeeded("ok-"); n != 0 {
		t.Fatal("the waits gave their slots back before ParkAfter")
	}
	b.clock.Advance(time.Millisecond)
	b.waitState("ok-0", domain.JobSucceeded)

	// The waits are full: a third silent host keeps its slot after ParkAfter.
	b.enqueue(b.job("hang-c", "hang-c.example"))
	b.eventually("third wait started", func() bool { return b.deliverer.InFlight() == 3 })
	b.advance(2 * time.Second)
	var oks []domain.Job
	for i := 1; i <= 20; i++ {
		oks = append(oks, b.job(fmt.Sprintf("ok-%d", i), fmt.Sprintf("ok%d.example", i%5)))
	}
	b.enqueue(oks...)
	b.eventually("healthy jobs delivered on the one free slot", func() bool { return b.succeeded("ok-") == 21 })
	if total, _ := b.deliverer.MaxInFlight(); total > 2+2 {
		t.Fatalf("%d deliveries at once, want at most the 2 slots and 2 waits", total)
	}
	if total, _ := b.deliverer.MaxInFlight(); total < 3 {
		t.Fatalf("at most %d deliveries at once: the healthy jobs waited behind the silent hosts", total)
	}
}

// A host not heard from lately whose first delivery has waited ParkAfter
// without an answer gets no second delivery until that one answers or
// fails: a dead server in a fan-out costs one delivery timeout, not one
// for each of its per-host places. The lease passes over its jobs; the
// other hosts' jobs go on.
func TestEngineSilentHostGetsOneDeliveryUntilItAnswers(t *testing.T) {
	t.Parallel()
	h := newHanging()
	b := setup(t, engine.Config{Workers: 2, PerHost: 2}, h.respond)
	b.start()
	defer h.free()
	b.enqueue(b.job("hang-1", "hang.example"))
	b.eventually("first delivery started", func() bool { return b.deliverer.InFlight() == 1 })
	b.advance(time.Second) // ParkAfter: it waits beside the slots
	b.enqueue(b.job("hang-2", "hang.example"), b.job("ok-0", "ok.example"))
	b.waitState("ok-0", domain.JobSucceeded)
	b.advance(2 * time.Second)
	if n := b.deliverer.InFlight(); n != 1 {
		t.Fatalf("%d deliveries to a host that has not answered its first, want 1", n)
	}
	if st := b.get("hang-2").State; st != domain.JobQueued {
		t.Fatalf("the silent host's second job is %s, want it queued", st)
	}
	// The first times out: the host is held, its second job not attempted.
	h.free()
	b.eventually("first delivery failed", func() bool { return b.get("hang-1").Attempts == 1 && b.get("hang-1").State == domain.JobQueued })
	b.settleIdle()
	if j := b.get("hang-2"); j.Attempts != 0 || j.State != domain.JobQueued || !j.RunAt.After(b.clock.Now()) {
		t.Fatalf("after the first delivery failed, the second job is %+v: want it held, unattempted", j)
	}
}

// A host that answered lately is trusted to answer again: its slow delivery
// keeps its slot however long it takes, so hosts that answer never get more
// than Workers slots.
func TestEngineHostThatAnsweredKeepsItsSlot(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	slow := false
	release := make(chan struct{})
	defer close(release)
	b := setup(t, engine.Config{Workers: 1}, acceptSlowOnRelease(release, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slow
	}))
	b.start()
	b.enqueue(b.job("first", "slow.example"))
	b.waitState("first", domain.JobSucceeded)
	mu.Lock()
	slow = true
	mu.Unlock()
	b.enqueue(b.job("second", "slow.example"))
	b.eventually("slow delivery started", func() bool { return b.deliverer.InFlight() == 1 })
	b.enqueue(b.job("other", "other.example"))
	b.advance(5 * time.Second)
	if st := b.get("other").State; st != domain.JobQueued {
		t.Fatalf("other job %s while the one slot was busy with a host that answers", st)
	}
}

// A host that answers, but slower than ParkAfter, is not trusted with a
// slot (issue 36: five slow servers held every slot under sustained load):
// its next delivery waits beside the slots from its start, even with every
// slot taken; with the waits taken it holds a slot only until a wait
// frees. The clock stands still from the first answer on: nothing here
// waits for ParkAfter.
func TestEngineSlowHostWaitsBesideTheSlots(t *testing.T) {
	t.Parallel()
	var gate gates
	// Workers 1: one slot and one wait. A delivery to slow.example, or of
	// a job whose id begins "held", ends when its gate is closed.
	b := setup(t, engine.Config{Workers: 1}, func(ctx context.Context, d ports.Delivery) domain.Outcome {
		if id := inboxID(d); strings.Contains(d.Inbox, "slow.example") || strings.HasPrefix(id, "held") {
			gate.wait(ctx, id)
		}
		return domain.Classify(202, "", time.Time{})
	})
	job := func(id, host string) domain.Job { return inboxJob(t, b, id, host) }
	b.start()
	// First contact with slow.example: it answers after 3 s.
	b.enqueue(job("slow-1", "slow.example"))
	b.eventually("the first slow delivery started", func() bool { return b.deliverer.InFlight() == 1 })
	b.advance(3 * time.Second)
	close(gate.of("slow-1"))
	b.waitState("slow-1", domain.JobSucceeded)
	// prompt.example answers at once, then holds the slot.
	b.enqueue(job("prompt-1", "prompt.example"))
	b.waitState("prompt-1", domain.JobSucceeded)
	// held-1 first (an older RunAt): the lease for the one slot comes
	// back full, so slow-2 is leased ahead, and starts in the wait.
	held := job("held-1", "prompt.example")
	held.RunAt = held.RunAt.Add(-time.Second)
	b.enqueue(held, job("slow-2", "slow.example"))
	b.eventually("the slow delivery started in the wait beside the taken slot", func() bool { return b.deliverer.InFlight() == 2 })
	close(gate.of("held-1"))
	b.waitState("held-1", domain.JobSucceeded)

	// The wait is slow-2's: slow-3 takes the slot, and prompt-2 waits for
	// it until slow-2 ends and slow-3 moves to the wait.
	b.enqueue(job("slow-3", "slow.example"))
	b.eventually("the third slow delivery started", func() bool { return b.deliverer.InFlight() == 2 })
	b.enqueue(job("prompt-2", "prompt.example"))
	b.settleIdle()
	if st := b.get("prompt-2").State; st == domain.JobSucceeded {
		t.Fatal("prompt-2 ran while slow-2 held the wait and slow-3 the slot")
	}
	close(gate.of("slow-2"))
	b.waitState("prompt-2", domain.JobSucceeded)
	if st := b.get("slow-3").State; st == domain.JobSucceeded {
		t.Fatal("slow-3 finished early: the test did not hold it")
	}
	close(gate.of("slow-3"))
	b.waitState("slow-3", domain.JobSucceeded)
}

// After a host failure the host's other jobs are held, unattempted, until
// the first step of the curve; then they run. A 429's Retry-After holds
// them as long.
func TestEngineHoldsAHostAfterItFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		respond func(b *bundle) domain.Outcome
		hold    time.Duration
	}{
		{"no answer", func(*bundle) domain.Outcome { return domain.NetworkFailure(fmt.Errorf("timeout")) }, domain.RetryDelay(1, 0)},
		{"503", func(*bundle) domain.Outcome { return domain.Classify(503, "", time.Time{}) }, domain.RetryDelay(1, 0)},
		{"429 Retry-After 600", func(b *bundle) domain.Outcome { return domain.Classify(429, "600", b.clock.Now()) }, 600 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b *bundle
			var mu sync.Mutex
			fail := true
			b = setup(t, engine.Config{PerHost: 1}, func(context.Context, ports.Delivery) domain.Outcome {
				mu.Lock()
				defer mu.Unlock()
				if fail {
					return tt.respond(b)
				}
				return domain.Classify(202, "", time.Time{})
			})
			b.start()
			b.enqueue(b.onHost("sick.example", 5)...)
			b.eventually("first attempt settled", func() bool { return b.get("j0").Attempts == 1 && b.get("j0").State == domain.JobQueued })
			b.settleIdle()
			if n := len(b.deliverer.Calls()); n != 1 {
				t.Fatalf("%d attempts; the host's other jobs were not held", n)
			}
			for i := 1; i < 5; i++ {
				j := b.get(fmt.Sprintf("j%d", i))
				if j.State != domain.JobQueued || j.Attempts != 0 || !j.RunAt.Equal(t0.Add(tt.hold)) {
					t.Fatalf("held job %s: %s, %d attempts, due %v; want queued, 0, %v", j.ID, j.State, j.Attempts, j.RunAt, t0.Add(tt.hold))
				}
			}
			// A job enqueued during the hold waits too.
			b.enqueue(b.job("late", "sick.example"))
			b.advance(tt.hold - time.Millisecond)
			if n := len(b.deliverer.Calls()); n != 1 {
				t.Fatalf("%d attempts during the hold", n)
			}
			mu.Lock()
			fail = false
			mu.Unlock()
			b.clock.Advance(time.Millisecond)
			b.clock.Advance(5 * time.Second) // the poll, if the wake-up was spent
			for i := 1; i < 5; i++ {
				b.waitState(fmt.Sprintf("j%d", i), domain.JobSucceeded)
			}
			b.waitState("late", domain.JobSucceeded)
		})
	}
}

// NoHold turns the hold off: every job of a failing host is
// attempted when leased (what the benchmark compares against).
func TestEngineNoHoldDoesNotHold(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{PerHost: 1, NoHold: true}, status(503))
	b.start()
	b.enqueue(b.onHost("sick.example", 5)...)
	b.eventually("every job attempted once, no clock moved", func() bool { return len(b.deliverer.Calls()) == 5 })
}

// gates are channels, one a job id, that a test's deliverer waits on until
// the test closes them.
type gates struct {
	mu sync.Mutex
	by map[string]chan struct{}
}

func (g *gates) of(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.by == nil {
		g.by = map[string]chan struct{}{}
	}
	if g.by[id] == nil {
		g.by[id] = make(chan struct{})
	}
	return g.by[id]
}

// wait blocks until id's gate is closed or ctx ends.
func (g *gates) wait(ctx context.Context, id string) {
	select {
	case <-g.of(id):
	case <-ctx.Done():
	}
}

// inboxJob is a job to host whose inbox path begins with its id, which the
// deliverer reads back with inboxID.
func inboxJob(t *testing.T, b *bundle, id, host string) domain.Job {
	t.Helper()
	j, err := domain.NewJob(contract.JobID(id), "https://local.example/activities/"+id, "https://"+host+"/"+id+"/inbox", "sender-1",
		"https://local.example/users/alice#main-key", []byte(`{"type":"Create"}`), b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func inboxID(d ports.Delivery) string { return strings.Split(d.Inbox, "/")[3] }
