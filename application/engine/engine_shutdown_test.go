package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

// slowLease holds the first LeaseBatch until proceed is closed and then, like a
// database whose reply was lost to a cancelled context, grants the lease in
// the store even when its context has ended, returning the context's error.
type slowLease struct {
	*memory.JobStore
	entered chan struct{}
	proceed chan struct{}
	first   bool
}

func (s *slowLease) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if !s.first {
		s.first = true
		close(s.entered)
		<-s.proceed
		jobs, err := s.JobStore.LeaseBatch(context.Background(), req)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return jobs, err
	}
	return s.JobStore.LeaseBatch(ctx, req)
}

// A lease in progress when shutdown begins is seen through: the job it got
// goes back to the queue unattempted, not left leased for the reaper to
// find two minutes later, and not delivered either (SPEC §2: on SIGTERM
// stop leasing; only deliveries in flight finish), though every slot is
// free.
func TestEngineShutdownDuringLease(t *testing.T) {
	t.Parallel()
	clock := fake.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	store := &slowLease{JobStore: memory.NewJobStore(), entered: make(chan struct{}), proceed: make(chan struct{})}
	actors := memory.NewAccountStore()
	keys, _ := (&fake.Keys{}).GenerateKeyPair()
	if err := actors.CreateAvatar(context.Background(), domain.Avatar{ID: "sender-1", RootUserID: "u1", Name: "alice", Keys: keys}); err != nil {
		t.Fatal(err)
	}
	j, _ := domain.NewJob(contract.JobID("job-1"), "https://l.example/a/1", "https://r.example/inbox", "sender-1", "https://l.example/users/alice#main-key", []byte(`{}`), clock.Now())
	if _, err := store.Enqueue(context.Background(), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	deliverer := &fake.Deliverer{}
	e := engine.New(engine.Deps{Jobs: store, Instances: memory.NewInstanceStore(), Deliverer: deliverer,
		Keys: engine.ActorKeys{Actors: actors}, Clock: clock, Random: fake.Random(0), IDs: fake.NewIDs("lease")},
		engine.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx) }()
	<-store.entered
	cancel()
	close(store.proceed)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("engine did not stop")
	}
	got, _ := store.Get(context.Background(), contract.JobID("job-1"))
	if got.State == domain.JobLeased {
		t.Fatalf("the job leased during shutdown was left leased: %+v", got)
	}
	if got.State != domain.JobQueued || got.Attempts != 0 || deliverer.CallsTo("https://r.example/inbox") != 0 {
		t.Fatalf("job %s after %d attempts, %d deliveries; want queued, unattempted, undelivered", got.State, got.Attempts, deliverer.CallsTo("https://r.example/inbox"))
	}
}
