package mongotest

import (
	"context"
	"strings"
	"testing"
	"time"

	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

// Waker checks the cross-process wake-up: an enqueue through another
// client (another process's store) wakes this process's Waker. On a server
// with change streams that comes from the stream; on one without (FerretDB
// v2) the Waker must say so once and fall back to reading the enqueue
// signal every poll period, on its injected clock, waking on a change and
// only then.
func Waker(t *testing.T, client, second *mongodrv.Client) {
	db := NewDB(t, client)
	clock := fake.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	log := newTestLog(t)
	const every = time.Second
	ctx, cancel := context.WithCancel(Ctx(t))
	defer cancel()
	ch := mongo.NewWaker(db, clock, every, log.Logger).Wakeups(ctx)
	woken := func(what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("no wake-up %s", what)
		}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-ch:
			t.Fatalf("a wake-up %s", what)
		default:
		}
	}
	woken("at start (jobs may have come while nobody watched)")
	polling := false
	for _, w := range log.warnings() {
		if strings.Contains(w, "no change streams") {
			polling = true
		}
	}
	other := mongo.NewJobStore(second.Database(db.Name()))
	j, err := domain.NewJob(contract.JobID("j1"), "https://local.example/a/1", "https://r.example/inbox", "av1",
		"https://local.example/users/a#main-key", []byte(`{}`), clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !polling {
		t.Log("this server has change streams: the wake-up comes from the stream")
		if _, err := other.Enqueue(Ctx(t), []domain.Job{j}); err != nil {
			t.Fatal(err)
		}
		woken("from the change stream after another client's enqueue")
		return
	}
	t.Log("this server has no change streams: the Waker polls the enqueue signal")
	sleeping := func() {
		t.Helper()
		if !clock.BlockUntil(ctx, 1) {
			t.Fatal("the poller never went back to sleep")
		}
	}
	// An enqueue just after the first wake-up (the proof worker's "ready")
	// is seen at the next poll: the counter was read before that wake-up,
	// not after, when the enqueue could be taken for the starting value.
	j0, err := domain.NewJob(contract.JobID("j0"), "https://local.example/a/0", "https://r.example/inbox", "av1",
		"https://local.example/users/a#main-key", []byte(`{}`), clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Enqueue(Ctx(t), []domain.Job{j0}); err != nil {
		t.Fatal(err)
	}
	sleeping()
	clock.Advance(every)
	woken("at the first poll after an enqueue that followed the first wake-up")
	// Polls with nothing enqueued wake nobody.
	for range 3 {
		sleeping()
		clock.Advance(every)
	}
	sleeping()
	quiet("from polls with nothing enqueued")
	if _, err := other.Enqueue(Ctx(t), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	quiet("before the next poll (it is on the injected clock)")
	clock.Advance(every)
	woken("at the poll after another client's enqueue")
	// A dedupe no-op inserts nothing and signals nothing.
	if n, err := other.Enqueue(Ctx(t), []domain.Job{j}); err != nil || n != 0 {
		t.Fatalf("re-enqueue: %d %v", n, err)
	}
	sleeping()
	clock.Advance(every)
	sleeping()
	quiet("after an enqueue that inserted nothing")
	n := 0
	for _, w := range log.warnings() {
		if strings.Contains(w, "change stream") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the missing change streams were logged %d times, want once: %q", n, log.warnings())
	}
}
