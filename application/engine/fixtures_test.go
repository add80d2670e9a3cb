package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

// The engine tests' fixture: setup's bundle runs an engine over memory
// stores, a fake clock and a fake deliverer, with the helpers that feed it
// jobs and wait for their states.

// t0 is the fake clock's start.
var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// idleWaiters is how many clock waits a running, idle engine holds: the
// dispatcher's poll, the reaper and the purge loop.
const idleWaiters = 3

type bundle struct {
	t         *testing.T
	clock     *fake.Clock
	jobs      *memory.JobStore
	instances *memory.InstanceStore
	deliverer *fake.Deliverer
	deps      engine.Deps // what rebuild builds the engine from
	engine    *engine.Engine
	enqueuer  application.EnqueueHandler
	cancel    context.CancelFunc
	done      chan struct{}
}

func setup(t *testing.T, cfg engine.Config, respond func(context.Context, ports.Delivery) domain.Outcome) *bundle {
	t.Helper()
	b := &bundle{
		t:         t,
		clock:     fake.NewClock(t0),
		jobs:      memory.NewJobStore(),
		instances: memory.NewInstanceStore(),
		deliverer: &fake.Deliverer{Respond: respond},
	}
	b.deps = engine.Deps{
		Jobs: b.jobs, Instances: b.instances, Deliverer: b.deliverer,
		Keys: keysOf(t), Clock: b.clock, Random: fake.Random(0), IDs: fake.NewIDs("lease"),
	}
	b.rebuild(cfg, nil)
	return b
}

// rebuild builds b's engine again with cfg, from b.deps as change (if not
// nil) changes them.
func (b *bundle) rebuild(cfg engine.Config, change func(*engine.Deps)) {
	d := b.deps
	if change != nil {
		change(&d)
	}
	b.engine = engine.New(d, cfg)
	b.enqueuer = application.NewEnqueueHandler(b.jobs, b.engine)
}

// keysOf is the signing keys of the jobs' sender, sender-1.
func keysOf(t *testing.T) engine.SigningKeys {
	actors := memory.NewAccountStore()
	keys, _ := (&fake.Keys{}).GenerateKeyPair()
	if err := actors.CreateAvatar(context.Background(), domain.Avatar{ID: "sender-1", RootUserID: "u1", Name: "alice", Keys: keys}); err != nil {
		t.Fatal(err)
	}
	return engine.ActorKeys{Actors: actors}
}

// start runs the engine and waits until it is idle.
func (b *bundle) start() {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done = cancel, make(chan struct{})
	go func() { defer close(b.done); _ = b.engine.Run(ctx) }()
	b.t.Cleanup(b.stop)
	b.settleIdle()
}

// stop cancels the engine and drives the fake clock through its grace.
func (b *bundle) stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-b.done:
			b.cancel = nil
			return
		case <-deadline:
			b.t.Fatal("engine did not stop")
		case <-time.After(time.Millisecond):
			b.clock.Advance(time.Second)
		}
	}
}

func (b *bundle) settleIdle() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !b.clock.BlockUntil(ctx, idleWaiters) {
		b.t.Fatal("engine never went idle")
	}
}

// advance moves the clock and waits for the engine's loops to re-arm.
func (b *bundle) advance(d time.Duration) {
	b.t.Helper()
	b.clock.Advance(d)
	b.settleIdle()
}

func (b *bundle) job(id, host string) domain.Job {
	b.t.Helper()
	j, err := domain.NewJob(contract.JobID(id), "https://local.example/activities/"+id, "https://"+host+"/inbox", "sender-1",
		"https://local.example/users/alice#main-key", []byte(`{"type":"Create"}`), b.clock.Now())
	if err != nil {
		b.t.Fatal(err)
	}
	return j
}

// spread is n jobs, each to a host of its own: j000 to h000.example, ...
func (b *bundle) spread(n int) []domain.Job {
	jobs := make([]domain.Job, n)
	for i := range jobs {
		jobs[i] = b.job(fmt.Sprintf("j%03d", i), fmt.Sprintf("h%03d.example", i))
	}
	return jobs
}

// onHost is n jobs to host: j0, j1, ...
func (b *bundle) onHost(host string, n int) []domain.Job {
	jobs := make([]domain.Job, n)
	for i := range jobs {
		jobs[i] = b.job(fmt.Sprintf("j%d", i), host)
	}
	return jobs
}

func (b *bundle) enqueue(jobs ...domain.Job) {
	b.t.Helper()
	if _, err := b.enqueuer.Handle(context.Background(), jobs); err != nil {
		b.t.Fatal(err)
	}
}

// enqueueSilently inserts without waking the engine, as another process's
// enqueue would look to a store without notifications.
func (b *bundle) enqueueSilently(jobs ...domain.Job) {
	b.t.Helper()
	if _, err := b.jobs.Enqueue(context.Background(), jobs); err != nil {
		b.t.Fatal(err)
	}
}

// startWithBacklog starts the engine on a queue that already holds n jobs,
// one a host, enqueued without waking it; it returns them.
func (b *bundle) startWithBacklog(n int) []domain.Job {
	b.t.Helper()
	all := b.spread(n)
	b.enqueueSilently(all...)
	b.start()
	return all
}

func (b *bundle) get(id string) domain.Job {
	b.t.Helper()
	j, err := b.jobs.Get(context.Background(), contract.JobID(id))
	if err != nil {
		b.t.Fatal(err)
	}
	return j
}

// eventually waits (bounded in real time, for liveness only) for cond.
func (b *bundle) eventually(what string, cond func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitCount waits until n jobs are in state st.
func (b *bundle) waitCount(what string, st domain.JobState, n int) {
	b.t.Helper()
	b.eventually(what, func() bool {
		c, _ := b.jobs.Counts(context.Background())
		return c[st] == n
	})
}

func (b *bundle) waitState(id string, st domain.JobState) domain.Job {
	b.t.Helper()
	var j domain.Job
	b.eventually(fmt.Sprintf("job %s %s", id, st), func() bool { j = b.get(id); return j.State == st })
	return j
}

func status(code int) func(context.Context, ports.Delivery) domain.Outcome {
	return func(context.Context, ports.Delivery) domain.Outcome { return domain.Classify(code, "", time.Time{}) }
}

// acceptOnRelease is a server that holds each delivery until release is
// closed, then accepts it.
func acceptOnRelease(release <-chan struct{}) func(context.Context, ports.Delivery) domain.Outcome {
	return func(context.Context, ports.Delivery) domain.Outcome {
		<-release
		return domain.Classify(202, "", time.Time{})
	}
}

// acceptSlowOnRelease accepts every delivery; one to a host named slow,
// while slow says so, only once release gives way (or its context ends).
func acceptSlowOnRelease(release <-chan struct{}, slow func() bool) func(context.Context, ports.Delivery) domain.Outcome {
	return func(ctx context.Context, d ports.Delivery) domain.Outcome {
		if strings.Contains(d.Inbox, "slow") && slow() {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return domain.Classify(202, "", time.Time{})
	}
}

// waitInFlight waits, 10 s at most, until n deliveries are in flight at
// once.
func (b *bundle) waitInFlight(n int) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !b.deliverer.WaitFor(ctx, func(_, inFlight int) bool { return inFlight == n }) {
		b.t.Fatalf("never reached %d deliveries in flight", n)
	}
}
