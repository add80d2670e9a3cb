package application_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

var opT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type countingWaker struct{ n atomic.Int64 }

func (w *countingWaker) Wake() { w.n.Add(1) }

type opBundle struct {
	op        *application.Operator
	jobs      *memory.JobStore
	instances *memory.InstanceStore
	names     *memory.NameRegistry
	clock     *fake.Clock
	waker     *countingWaker
	ids       *fake.IDs
}

func newOperator(t *testing.T) *opBundle {
	t.Helper()
	b := &opBundle{jobs: memory.NewJobStore(), instances: memory.NewInstanceStore(), names: memory.NewNameRegistry(),
		clock: fake.NewClock(opT0), waker: &countingWaker{}, ids: fake.NewIDs("job")}
	policy, err := domain.NewNamePolicy("herald", []string{"billing"})
	if err != nil {
		t.Fatal(err)
	}
	b.op = application.NewOperator(application.OperatorDeps{
		JobAdmin: b.jobs, Jobs: b.jobs, Instances: b.instances, Names: b.names, Policy: policy,
		InstanceActor: "herald", Clock: b.clock, Waker: b.waker,
	})
	return b
}

// enqueue adds one job to inbox and returns it.
func (b *opBundle) enqueue(t *testing.T, inbox string) domain.Job {
	t.Helper()
	id := b.ids.NewID()
	j, err := domain.NewJob(contract.JobID(id), "https://local.example/activities/"+id, inbox, "sender", "https://local.example/users/a#main-key", []byte(`{}`), b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.jobs.Enqueue(t.Context(), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	return j
}

// kill enqueues a job to inbox and makes it dead with reason.
func (b *opBundle) kill(t *testing.T, inbox, reason string) domain.Job {
	t.Helper()
	j := b.enqueue(t, inbox)
	ctx := t.Context()
	now := b.clock.Now()
	settle := func(st ports.Settlement) {
		t.Helper()
		if lost, err := b.jobs.Settle(ctx, []ports.Settlement{st}); err != nil || lost[0] != nil {
			t.Fatal(err, lost)
		}
	}
	for {
		batch, err := b.jobs.LeaseBatch(ctx, ports.LeaseRequest{Owner: "t", Token: "tok-" + j.ID, Now: now, Until: now.Add(time.Minute), Limit: 1})
		if err != nil || len(batch) != 1 {
			t.Fatal(err, batch)
		}
		got := batch[0]
		if got.ID == j.ID {
			settle(ports.Settlement{ID: j.ID, Token: "tok-" + j.ID, State: domain.JobDead, Attempts: 3, LastError: reason, FinishedAt: now})
			return j
		}
		// Another queued job: put it back untouched.
		settle(ports.Settlement{ID: got.ID, Token: "tok-" + j.ID, State: domain.JobQueued, Attempts: got.Attempts, RunAt: now.Add(time.Hour), LastError: got.LastError})
	}
}

func TestOperatorQueue(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	b.enqueue(t, "https://a.example/inbox")
	b.enqueue(t, "https://a.example/inbox2")
	b.enqueue(t, "https://b.example/inbox")
	b.kill(t, "https://c.example/inbox", "410 gone")
	s, err := b.op.Queue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.ByState[domain.JobQueued] != 3 || s.ByState[domain.JobDead] != 1 || s.Total != 4 {
		t.Fatalf("by state %v total %d", s.ByState, s.Total)
	}
	if len(s.Queued) != 2 || s.Queued[0].Host != "a.example" || s.Queued[0].Count != 2 {
		t.Fatalf("queued by host %+v", s.Queued)
	}
	if len(s.Dead) != 1 || s.Dead[0].Host != "c.example" || len(s.Leased) != 0 {
		t.Fatalf("dead %+v leased %+v", s.Dead, s.Leased)
	}
}

func TestOperatorJobsPages(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	var dead []string
	for i := range 5 {
		dead = append(dead, b.kill(t, fmt.Sprintf("https://h%d.example/inbox", i), "boom").ID)
	}
	b.enqueue(t, "https://q.example/inbox")
	ctx := t.Context()
	var seen []string
	after := ""
	for pages := 0; ; pages++ {
		p, err := b.op.Jobs(ctx, application.JobsQuery{State: domain.JobDead, After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range p.Jobs {
			if j.State != domain.JobDead || j.LastError != "boom" {
				t.Fatalf("job %+v", j)
			}
			seen = append(seen, j.ID)
		}
		if p.Next == "" {
			if pages != 2 {
				t.Fatalf("%d pages, want 3", pages+1)
			}
			break
		}
		after = p.Next
	}
	if strings.Join(seen, ",") != strings.Join(dead, ",") {
		t.Fatalf("seen %v, want %v", seen, dead)
	}
	// A page that is exactly full has no next page.
	if p, _ := b.op.Jobs(ctx, application.JobsQuery{State: domain.JobQueued, Limit: 1}); len(p.Jobs) != 1 || p.Next != "" {
		t.Fatalf("exact page %+v", p)
	}
}

func TestOperatorJobsBadInput(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	for _, q := range []application.JobsQuery{
		{State: "zombie"},
		{Limit: -1},
		{Limit: application.MaxJobPage + 1},
	} {
		if _, err := b.op.Jobs(t.Context(), q); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("%+v: err %v, want ErrInvalidInput", q, err)
		}
	}
}

func TestOperatorRetryJob(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	ctx := t.Context()
	d := b.kill(t, "https://a.example/inbox", "500")
	q := b.enqueue(t, "https://a.example/inbox2")
	b.clock.Advance(time.Hour)

	if _, err := b.op.RetryJob(ctx, "nope"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
	if _, err := b.op.RetryJob(ctx, " "); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("empty id: %v", err)
	}
	if _, err := b.op.RetryJob(ctx, q.ID); !errors.Is(err, domain.ErrInvalidInput) || !strings.Contains(err.Error(), "queued") {
		t.Fatalf("queued job: %v", err)
	}
	if b.waker.n.Load() != 0 {
		t.Fatal("woke for nothing")
	}
	j, err := b.op.RetryJob(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != domain.JobQueued || j.Attempts != 0 || !j.RunAt.Equal(b.clock.Now()) || !j.FinishedAt.IsZero() {
		t.Fatalf("retried job %+v", j)
	}
	if b.waker.n.Load() != 1 {
		t.Fatal("the workers were not woken")
	}
	if _, err := b.op.RetryJob(ctx, d.ID); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("second retry: %v", err)
	}
}

func TestOperatorRetryHostDead(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	ctx := t.Context()
	b.kill(t, "https://a.example/1", "x")
	b.kill(t, "https://a.example/2", "x")
	b.kill(t, "https://b.example/1", "x")
	n, err := b.op.RetryHostDead(ctx, " A.example ")
	if err != nil || n != 2 {
		t.Fatalf("retried %d, %v", n, err)
	}
	c, _ := b.jobs.Counts(ctx)
	if c[domain.JobDead] != 1 || c[domain.JobQueued] != 2 {
		t.Fatalf("counts %v", c)
	}
	if n, err := b.op.RetryHostDead(ctx, "a.example"); n != 0 || err != nil {
		t.Fatalf("again: %d %v", n, err)
	}
	for _, bad := range []string{"", "https://a.example/", "a b"} {
		if _, err := b.op.RetryHostDead(ctx, bad); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("host %q: %v", bad, err)
		}
	}
	if b.waker.n.Load() != 1 {
		t.Fatalf("woken %d times, want 1", b.waker.n.Load())
	}
}

func quarantine(t *testing.T, b *opBundle, host string, failures int) {
	t.Helper()
	_, err := b.instances.Update(t.Context(), host, func(r *domain.RemoteInstance) {
		for range failures {
			r.RecordFailure(b.clock.Now(), "503 unavailable")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOperatorInstancesAndLift(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	ctx := t.Context()
	quarantine(t, b, "dead.example", domain.BreakerThreshold)
	quarantine(t, b, "flaky.example", 3)
	quarantine(t, b, "fine.example", 0)
	j := b.enqueue(t, "https://dead.example/inbox")
	if _, err := b.jobs.DeferHost(ctx, "dead.example", b.clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	all, err := b.op.Instances(ctx, false)
	if err != nil || len(all) != 3 {
		t.Fatalf("all %v %v", all, err)
	}
	q, err := b.op.Instances(ctx, true)
	if err != nil || len(q) != 1 || q[0].Host != "dead.example" || !q[0].Quarantined || q[0].QuarantineLevel != 1 {
		t.Fatalf("quarantined %+v %v", q, err)
	}
	top, _ := b.op.TopFailing(ctx, 5)
	if len(top) != 2 || top[0].Host != "dead.example" || top[1].Host != "flaky.example" {
		t.Fatalf("top failing %+v", top)
	}

	if _, err := b.op.Lift(ctx, "never.example"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown host: %v", err)
	}
	if _, err := b.op.Lift(ctx, ""); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("empty host: %v", err)
	}
	r, err := b.op.Lift(ctx, "DEAD.example")
	if err != nil || r.Resumed != 1 || r.Instance.Quarantined(b.clock.Now()) {
		t.Fatalf("lift %+v %v", r, err)
	}
	got, _ := b.jobs.Get(ctx, j.ID)
	if !got.RunAt.Equal(b.clock.Now()) {
		t.Fatalf("job still waits until %v", got.RunAt)
	}
	if q, _ := b.op.Instances(ctx, true); len(q) != 0 {
		t.Fatalf("still quarantined: %+v", q)
	}
}

func TestOperatorNames(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	ctx := t.Context()
	reserve(t, b.names, "alice", domain.NameKindPersona, "a1")
	reserve(t, b.names, "herald", domain.NameKindInstance, "i1")
	if rn, err := b.op.ReserveName(ctx, "Ops_Team"); err != nil || rn.Name != "ops_team" || rn.Kind != domain.NameKindSystem {
		t.Fatalf("reserve %+v %v", rn, err)
	}
	if got, _ := b.op.SystemNames(ctx); len(got) != 1 || got[0].Name != "ops_team" {
		t.Fatalf("system names %+v", got)
	}

	tests := []struct {
		name    string
		release string
		want    error
		says    string
	}{
		{"fixed list", "postmaster", domain.ErrForbidden, "fixed list"},
		{"fixed list folded", "Admin", domain.ErrForbidden, "fixed list"},
		{"instance actor", "herald", domain.ErrForbidden, "instance actor"},
		{"configured", "billing", domain.ErrForbidden, "HERALD_RESERVED_NAMES"},
		{"a persona's", "alice", domain.ErrForbidden, "persona"},
		{"nobody's", "carol", domain.ErrNotFound, ""},
		{"invalid", "no spaces", domain.ErrInvalidName, ""},
	}
	for _, tt := range tests {
		err := b.op.ReleaseName(ctx, tt.release)
		if !errors.Is(err, tt.want) || !strings.Contains(fmt.Sprint(err), tt.says) {
			t.Errorf("%s: release %q: %v, want %v saying %q", tt.name, tt.release, err, tt.want, tt.says)
		}
	}
	if _, err := b.names.Get(ctx, "alice"); err != nil {
		t.Fatal("a refused release removed the persona's name")
	}

	if _, err := b.op.ReserveName(ctx, "alice"); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("reserve a taken name: %v", err)
	}
	if _, err := b.op.ReserveName(ctx, "bad name"); !errors.Is(err, domain.ErrInvalidName) {
		t.Fatalf("reserve an invalid name: %v", err)
	}
	if err := b.op.ReleaseName(ctx, "OPS_TEAM"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, err := b.names.Get(ctx, "ops_team"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatal("released name still held")
	}
}

func TestOperatorRecentDead(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	first := b.kill(t, "https://a.example/1", "old")
	b.clock.Advance(time.Minute)
	second := b.kill(t, "https://a.example/2", "new")
	got, err := b.op.RecentDead(t.Context(), 1, 100)
	if err != nil || len(got) != 1 || got[0].ID != second.ID {
		t.Fatalf("recent %+v %v (first %s)", got, err, first.ID)
	}
}

// slowCounts is a store that counts by reading its jobs: each Counts counts,
// takes 300 ms on the test's clock and, while the gate is shut, waits for
// it before it answers.
type slowCounts struct {
	*memory.JobStore
	clock   *fake.Clock
	started chan struct{} // one a reading that began

	mu   sync.Mutex
	gate chan struct{} // nil: open
	fail error
}

func (a *slowCounts) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	a.mu.Lock()
	gate, fail := a.gate, a.fail
	a.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	// The jobs are counted as they stand when the reading begins.
	c, err := a.JobStore.Counts(ctx)
	select {
	case a.started <- struct{}{}:
	default: // the test reads no more of them
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	a.clock.Advance(300 * time.Millisecond)
	return c, err
}

func (a *slowCounts) set(gate chan struct{}, fail error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gate, a.fail = gate, fail
}

func newSlowQueue(t *testing.T) (*opBundle, *slowCounts) {
	t.Helper()
	b := newOperator(t)
	a := &slowCounts{JobStore: b.jobs, clock: b.clock, started: make(chan struct{}, 100)}
	b.op = application.NewOperator(application.OperatorDeps{JobAdmin: a, Jobs: b.jobs, Instances: b.instances, Clock: b.clock})
	return b, a
}

// within fails the test when ch yields nothing in 10 s: a call that should
// not wait, waiting.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing after 10 s", what)
		panic("unreachable")
	}
}

func queueAsync(op *application.Operator) <-chan application.QueueStats {
	ch := make(chan application.QueueStats, 1)
	go func() {
		s, _ := op.Queue(context.Background())
		ch <- s
	}()
	return ch
}

// queuedEventually asks until the view shows want queued jobs.
func queuedEventually(t *testing.T, op *application.Operator, want int) application.QueueStats {
	t.Helper()
	var s application.QueueStats
	waitFor(t, fmt.Sprintf("the view to show %d queued", want), func() bool {
		var err error
		s, err = op.Queue(t.Context())
		return err == nil && s.ByState[domain.JobQueued] == want
	})
	return s
}

func TestQueueViewReadsAfreshWhereReadingsAreFast(t *testing.T) {
	t.Parallel()
	b := newOperator(t)
	for i := range 3 {
		s, err := b.op.Queue(t.Context())
		if err != nil || s.ByState[domain.JobQueued] != i || !s.At.Equal(b.clock.Now()) {
			t.Fatalf("reading %d: %v at %v, %v", i, s.ByState, s.At, err)
		}
		b.enqueue(t, "https://a.example/inbox")
	}
}

func TestQueueViewAnswersFromTheLatestReadingWhereReadingsAreSlow(t *testing.T) {
	t.Parallel()
	b, a := newSlowQueue(t)
	b.enqueue(t, "https://a.example/inbox")
	first, err := b.op.Queue(t.Context())
	if err != nil || first.ByState[domain.JobQueued] != 1 {
		t.Fatalf("first reading %v, %v", first.ByState, err)
	}
	within(t, a.started, "the first reading")

	// A reading took 300 ms: the next requests answer from it without
	// waiting for the store, and one reading runs behind them.
	b.enqueue(t, "https://a.example/inbox")
	gate := make(chan struct{})
	a.set(gate, nil)
	var answers []<-chan application.QueueStats
	for range 20 {
		answers = append(answers, queueAsync(b.op))
	}
	for i, ch := range answers {
		s := within(t, ch, "a request while the store is slow")
		if s.ByState[domain.JobQueued] != 1 || !s.At.Equal(first.At) {
			t.Fatalf("answer %d: %v at %v, want the first reading's (1 queued at %v)", i, s.ByState, s.At, first.At)
		}
	}
	within(t, a.started, "the reading behind the requests")
	select {
	case <-a.started:
		t.Fatal("a second reading ran beside the first: twenty requests, one reading at a time")
	case <-time.After(200 * time.Millisecond):
	}

	// The reading done, the view shows what it read.
	close(gate)
	s := queuedEventually(t, b.op, 2)
	if !s.At.After(first.At) {
		t.Fatalf("the new reading is dated %v, the first %v", s.At, first.At)
	}

	// A reading older than QueueReadingMaxAge is not shown: the request
	// reads afresh.
	application.WaitQueueReadings(b.op)
	b.enqueue(t, "https://a.example/inbox")
	due := b.clock.Now().Add(application.QueueReadingMaxAge)
	b.clock.Advance(application.QueueReadingMaxAge)
	s, err = b.op.Queue(t.Context())
	if err != nil || s.ByState[domain.JobQueued] != 3 || s.At.Before(due) {
		t.Fatalf("after %v: %v at %v (due %v), %v", application.QueueReadingMaxAge, s.ByState, s.At, due, err)
	}
}

func TestQueueViewKeepsTheReadingBegunLast(t *testing.T) {
	t.Parallel()
	b, a := newSlowQueue(t)
	b.enqueue(t, "https://a.example/inbox")
	// Two readings side by side: the first counts one job and is held; the
	// second, begun after a second job came, ends first.
	gate := make(chan struct{})
	a.set(gate, nil)
	first := queueAsync(b.op)
	within(t, a.started, "the first reading")
	b.enqueue(t, "https://a.example/inbox")
	a.set(nil, nil)
	if s, err := b.op.Queue(t.Context()); err != nil || s.ByState[domain.JobQueued] != 2 {
		t.Fatalf("the second reading: %v, %v", s.ByState, err)
	}
	close(gate)
	if s := within(t, first, "the first reading's answer"); s.ByState[domain.JobQueued] != 1 {
		t.Fatalf("the first reading: %v", s.ByState)
	}
	// The first ended last, but the second is the one kept.
	s, err := b.op.Queue(t.Context())
	if err != nil || s.ByState[domain.JobQueued] != 2 {
		t.Fatalf("answered with %v, %v; want the reading begun last (2 queued)", s.ByState, err)
	}
	application.WaitQueueReadings(b.op)
}

func TestQueueViewReportsAFailedReading(t *testing.T) {
	t.Parallel()
	b, a := newSlowQueue(t)
	b.enqueue(t, "https://a.example/inbox")
	if _, err := b.op.Queue(t.Context()); err != nil {
		t.Fatal(err)
	}
	down := errors.New("store down")
	a.set(nil, down)
	// The kept reading answers once; the reading behind it fails, and the
	// next request reads afresh and says so.
	waitFor(t, "the store's error", func() bool {
		_, err := b.op.Queue(t.Context())
		if err != nil && !errors.Is(err, down) {
			t.Fatalf("want the store's error, got %v", err)
		}
		return err != nil
	})
}

func TestQueueViewShowsAnOperatorsRetryAtOnce(t *testing.T) {
	t.Parallel()
	b, a := newSlowQueue(t)
	ctx := t.Context()
	// readDead reads afresh (the kept reading too old) and checks the
	// dead jobs it counts.
	readDead := func(want int) {
		t.Helper()
		b.clock.Advance(application.QueueReadingMaxAge)
		if s, err := b.op.Queue(ctx); err != nil || s.ByState[domain.JobDead] != want {
			t.Fatalf("reading %v, %v; want %d dead", s.ByState, err, want)
		}
		within(t, a.started, "the reading")
	}
	dead := b.kill(t, "https://c.example/inbox", "410 gone")
	readDead(1)
	// A reading behind the next request, begun before the retry and ended
	// after it, is not the one shown: it counts the job as dead.
	gate := make(chan struct{})
	a.set(gate, nil)
	if _, err := b.op.Queue(ctx); err != nil {
		t.Fatal(err)
	}
	within(t, a.started, "the reading behind the request")
	if _, err := b.op.RetryJob(ctx, dead.ID); err != nil {
		t.Fatal(err)
	}
	a.set(nil, nil)
	close(gate)
	application.WaitQueueReadings(b.op)
	s, err := b.op.Queue(ctx)
	if err != nil || s.ByState[domain.JobDead] != 0 || s.ByState[domain.JobQueued] != 1 {
		t.Fatalf("after the retry: %v, %v", s.ByState, err)
	}
	within(t, a.started, "the reading after the retry")
	// A host's retry as well.
	b.kill(t, "https://d.example/inbox", "410 gone")
	readDead(1)
	if n, err := b.op.RetryHostDead(ctx, "d.example"); err != nil || n != 1 {
		t.Fatalf("retried %d, %v", n, err)
	}
	if s, err := b.op.Queue(ctx); err != nil || s.ByState[domain.JobDead] != 0 {
		t.Fatalf("after the host's retry: %v, %v", s.ByState, err)
	}
}

// steppedClock is the test's clock, set back by back: the wall clock
// stepped back (the fake clock itself never goes back).
type steppedClock struct {
	*fake.Clock
	mu   sync.Mutex
	back time.Duration
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Clock.Now().Add(-c.back)
}

func TestQueueViewReadsAfreshWhenTheClockStepsBack(t *testing.T) {
	t.Parallel()
	b, a := newSlowQueue(t)
	clock := &steppedClock{Clock: b.clock}
	b.op = application.NewOperator(application.OperatorDeps{JobAdmin: a, Jobs: b.jobs, Instances: b.instances, Clock: clock})
	ctx := t.Context()
	b.enqueue(t, "https://a.example/inbox")
	if _, err := b.op.Queue(ctx); err != nil {
		t.Fatal(err)
	}
	within(t, a.started, "the first reading")
	// The wall clock goes back an hour: the kept reading is dated in the
	// future, and is not shown until the clock catches up.
	b.enqueue(t, "https://a.example/inbox")
	clock.mu.Lock()
	clock.back = time.Hour
	clock.mu.Unlock()
	s, err := b.op.Queue(ctx)
	if err != nil || s.ByState[domain.JobQueued] != 2 {
		t.Fatalf("after the clock stepped back: %v at %v, %v", s.ByState, s.At, err)
	}
	// The reading dated before the first is the one kept: the next request
	// answers from it, without waiting for the store.
	within(t, a.started, "the reading after the step")
	gate := make(chan struct{})
	a.set(gate, nil)
	s = within(t, queueAsync(b.op), "a request after the step")
	if s.ByState[domain.JobQueued] != 2 {
		t.Fatalf("the answer after the step: %v at %v", s.ByState, s.At)
	}
	close(gate)
	application.WaitQueueReadings(b.op)
}
