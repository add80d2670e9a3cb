package application_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// crashingJobs fails every Enqueue after the first okCalls, as a process
// that dies half way through a fan-out stops enqueueing.
type crashingJobs struct {
	*memory.JobStore
	okCalls int64
	calls   atomic.Int64
}

func (c *crashingJobs) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	if c.calls.Add(1) > c.okCalls {
		return 0, fake.ErrInjected
	}
	return c.JobStore.Enqueue(ctx, jobs)
}

// seedFollowers makes n accepted followers of actor, a third of them on 30
// servers with a shared inbox; it returns the distinct inboxes.
// oneJobPerInbox fails unless the queue holds exactly one job for each
// inbox of want, and none for another.
func oneJobPerInbox(t *testing.T, b *appBundle, want map[string]bool) {
	t.Helper()
	all, err := b.jobs.List(t.Context(), ports.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, j := range all {
		got[j.Inbox]++
	}
	for inbox := range want {
		if got[inbox] != 1 {
			t.Fatalf("%s has %d jobs", inbox, got[inbox])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d inboxes have jobs, want %d", len(got), len(want))
	}
}

func seedFollowers(t *testing.T, b *appBundle, actor string, n int) map[string]bool {
	t.Helper()
	ctx := t.Context()
	want := map[string]bool{}
	for i := range n {
		host := fmt.Sprintf("r%03d.example", i%90)
		uri := fmt.Sprintf("https://%s/users/u%05d", host, i)
		fa := domain.ForeignAvatar{ActorURI: uri, PublicKeyID: uri + "#main-key", Inbox: uri + "/inbox", Host: host}
		if i%90 < 30 {
			fa.SharedInbox = "https://" + host + "/inbox"
		}
		if err := b.content.Upsert(ctx, fa); err != nil {
			t.Fatal(err)
		}
		want[fa.DeliveryInbox()] = true
		f, _ := domain.NewFollower(uri, actor, uri+"#f", domain.FollowAccepted, t0)
		if _, err := b.follows.Add(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// A fan-out that dies after two of its pages is claimed again once its
// lease expired and finished from its cursor: every inbox ends with
// exactly one job, and the record counts each once.
func TestFanOutResumesAfterACrash(t *testing.T) {
	t.Parallel()
	fanOuts := memory.NewFanOutStore()
	jobs := &crashingJobs{JobStore: memory.NewJobStore(), okCalls: 2}
	clock := fake.NewClock(t0)
	b := newApp(t, func(d *application.Deps) { d.FanOuts, d.Jobs, d.Clock = fanOuts, jobs, clock })
	b.jobs = jobs.JobStore
	ctx := t.Context()
	s := signUp(t, b.app.SignUp, "alice")
	alice := b.app.URLs.Persona("alice")
	want := seedFollowers(t, b, alice, 4500) // 5 pages of 1,000

	_, err := b.app.Publish.Handle(ctx, application.Publish{UserID: s.User.ID, As: "alice", Content: "hi", Visibility: domain.VisibilityPublic})
	if !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("publish during the crash: %v", err)
	}
	list, _ := fanOuts.List(ctx, 10)
	if len(list) != 1 || list[0].Done || list[0].Total != 4500 || list[0].Cursor == "" {
		t.Fatalf("record after the crash: %+v", list)
	}
	// Two pages' enqueues run at once, so which of them met the crash is
	// the scheduler's: the record counts the pages it recorded, and a page
	// enqueued beside the failed one is in the store but not the record
	// (one page of 1,000 at most here).
	before, _ := b.jobs.Counts(ctx)
	if q := before[domain.JobQueued]; q == 0 || q >= len(want) || list[0].Queued > q || q-list[0].Queued > 1000 {
		t.Fatalf("after the crash: %d jobs, record says %d (of %d inboxes)", before[domain.JobQueued], list[0].Queued, len(want))
	}

	jobs.okCalls = 1 << 40 // the next process enqueues fine
	if n, err := b.app.FanOuts.Resume(ctx); err != nil || n != 0 {
		t.Fatalf("resume while the crashed run's lease holds: %d, %v", n, err)
	}
	clock.Advance(application.FanOutLease)
	if n, err := b.app.FanOuts.Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resume after the lease: %d, %v", n, err)
	}
	oneJobPerInbox(t, b, want)
	// A page in the store but not in the record at the crash comes back as
	// already queued: the record undercounts by it (the operator reads the
	// jobs themselves, CountsOfBody).
	f, _ := fanOuts.Get(ctx, list[0].ID)
	if unrecorded := before[domain.JobQueued] - list[0].Queued; !f.Done || f.Queued != len(want)-unrecorded {
		t.Fatalf("record after resume: done %v queued %d, want %d (%d inboxes, %d enqueued unrecorded at the crash)", f.Done, f.Queued, len(want)-unrecorded, len(want), unrecorded)
	}
	if n, err := b.app.FanOuts.Resume(ctx); err != nil || n != 0 {
		t.Fatalf("resume with nothing left: %d, %v", n, err)
	}
}

// The resumer claims nothing that is running: two processes cannot run one
// fan-out, and the loser of a claim race stops at its next page.
func TestFanOutLosesItsClaimToAResumer(t *testing.T) {
	t.Parallel()
	fanOuts := memory.NewFanOutStore()
	clock := fake.NewClock(t0)
	b := newApp(t, func(d *application.Deps) { d.FanOuts, d.Clock = fanOuts, clock })
	ctx := t.Context()
	f, err := domain.NewFanOut("https://local.example/a/1", "https://local.example/users/alice", "s", "https://local.example/users/alice#main-key",
		[]byte(`{"id":"a"}`), 0, "dead-process", t0, t0.Add(application.FanOutLease))
	if err != nil {
		t.Fatal(err)
	}
	if err := fanOuts.Create(ctx, f); err != nil {
		t.Fatal(err)
	}
	clock.Advance(application.FanOutLease)
	if n, err := b.app.FanOuts.Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resume: %d %v", n, err)
	}
	if _, err := fanOuts.Advance(ctx, ports.FanOutProgress{ID: f.ID, Owner: "dead-process", Now: t0}); !errors.Is(err, domain.ErrLeaseLost) {
		t.Fatalf("the old owner's late step: %v", err)
	}
}

// failingAdvance refuses the second page's record, as a process that dies
// after enqueueing a page and before recording it.
type failingAdvance struct {
	*memory.FanOutStore
	calls atomic.Int64
}

func (f *failingAdvance) Advance(ctx context.Context, p ports.FanOutProgress) (domain.FanOut, error) {
	if f.calls.Add(1) == 2 {
		return domain.FanOut{}, fake.ErrInjected
	}
	return f.FanOutStore.Advance(ctx, p)
}

// The page enqueued but not recorded at a crash is enqueued again by the
// resumer and deduplicated: no inbox gets a second job, and the record
// counts each inbox once.
func TestFanOutPageEnqueuedButNotRecordedIsNotQueuedTwice(t *testing.T) {
	t.Parallel()
	fanOuts := &failingAdvance{FanOutStore: memory.NewFanOutStore()}
	clock := fake.NewClock(t0)
	b := newApp(t, func(d *application.Deps) { d.FanOuts, d.Clock = fanOuts, clock })
	ctx := t.Context()
	s := signUp(t, b.app.SignUp, "alice")
	want := seedFollowers(t, b, b.app.URLs.Persona("alice"), 3500)
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: s.User.ID, As: "alice", Content: "hi", Visibility: domain.VisibilityPublic}); !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("publish: %v", err)
	}
	clock.Advance(application.FanOutLease)
	if n, err := b.app.FanOuts.Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resume: %d %v", n, err)
	}
	oneJobPerInbox(t, b, want)
	l, _ := fanOuts.List(ctx, 1)
	// The second page's count was lost with its record, and so was the
	// third's, enqueued while the second was (fanOutInFlight): their jobs
	// came back as already queued, and the record undercounts by at most
	// those two pages (the operator reads the jobs themselves,
	// CountsOfBody).
	if !l[0].Done || l[0].Queued > len(want) || l[0].Queued < len(want)-2*1000 || l[0].Queued == len(want) {
		t.Fatalf("record %+v of %d inboxes", l[0], len(want))
	}
}

// The resumer purges the records of fan-outs finished longer ago than
// their jobs are kept, and leaves the others.
func TestFanOutResumerPurgesOldRecords(t *testing.T) {
	t.Parallel()
	fanOuts := memory.NewFanOutStore()
	clock := fake.NewClock(t0.Add(application.FanOutRetention + time.Hour))
	b := newApp(t, func(d *application.Deps) { d.FanOuts, d.Clock = fanOuts, clock })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for i, at := range []time.Time{t0, clock.Now()} {
		f, _ := domain.NewFanOut(fmt.Sprintf("https://local.example/a/%d", i), "https://local.example/users/alice", "s", "k", []byte(`{}`), 0, "p", at, at)
		if err := fanOuts.Create(ctx, f); err != nil {
			t.Fatal(err)
		}
		if _, err := fanOuts.Advance(ctx, ports.FanOutProgress{ID: f.ID, Owner: "p", Done: true, Now: at}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); b.app.FanOuts.RunResumer(ctx) }()
	if !clock.BlockUntil(ctx, 1) { // the resumer waits for its next pass: the purge ran
		t.Fatal("the resumer never waited")
	}
	cancel()
	<-done
	if _, err := fanOuts.Get(t.Context(), "https://local.example/a/0"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the old record: %v", err)
	}
	if _, err := fanOuts.Get(t.Context(), "https://local.example/a/1"); err != nil {
		t.Fatalf("the recent record: %v", err)
	}
}

// recordingJobs keeps a copy of every batch enqueued.
type recordingJobs struct {
	*memory.JobStore
	mu      sync.Mutex
	batches [][]domain.Job
}

func (r *recordingJobs) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(jobs))
	r.mu.Unlock()
	return r.JobStore.Enqueue(ctx, jobs)
}

// A page's jobs reach the queue spread by host (domain.SpreadHosts: the
// first job of every host, then the second, ...), although the followers
// come ordered by URI, each host's side by side. And they get their ids in
// the order of their dedupe keys, so a store that inserts a batch in key
// order (PostgreSQL) inserts ascending ids.
func TestFanOutPageOrder(t *testing.T) {
	t.Parallel()
	jobs := &recordingJobs{JobStore: memory.NewJobStore()}
	b := newApp(t, func(d *application.Deps) { d.Jobs = jobs })
	b.jobs = jobs.JobStore
	ctx := t.Context()
	s := signUp(t, b.app.SignUp, "alice")
	want := seedFollowers(t, b, b.app.URLs.Persona("alice"), 2500)
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: s.User.ID, As: "alice", Content: "hi", Visibility: domain.VisibilityPublic}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, batch := range jobs.batches {
		n += len(batch)
		before, last := map[string]int{}, 0 // jobs of each host so far; the round of the job before
		for _, j := range batch {
			round := before[j.Host]
			before[j.Host]++
			if round < last {
				t.Fatalf("a batch of %d jobs: a job of %s in round %d after one of round %d: not spread by host", len(batch), j.Host, round, last)
			}
			last = round
		}
		if last == 0 {
			t.Fatalf("a batch of %d jobs, one per host: the seed has hosts with many inboxes", len(batch))
		}
		slices.SortFunc(batch, func(a, b domain.Job) int { return strings.Compare(a.DedupeKey, b.DedupeKey) })
		if !slices.IsSortedFunc(batch, func(a, b domain.Job) int { return strings.Compare(a.ID, b.ID) }) {
			t.Fatalf("a batch of %d jobs: ids not ascending in dedupe-key order", len(batch))
		}
	}
	if n != len(want) {
		t.Fatalf("%d jobs enqueued, want %d", n, len(want))
	}
}

// SPEC §9: a fan-out to tens of thousands of inboxes enqueues in batches,
// for a persona's post and for a group's announce alike.
func TestFanOutToTenThousandFollowersEnqueuesInBatches(t *testing.T) {
	t.Parallel()
	const n = 10_000
	tests := []struct {
		name     string
		followed string
		publish  application.Publish
	}{
		{"persona's followers", alice, application.Publish{As: "alice", Content: "to everyone"}},
		{"group's followers", club, application.Publish{As: "alice", Content: "to the club", To: []string{club}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			ctx := t.Context()
			for i := range n {
				uri := fmt.Sprintf("https://r%05d.example/users/u", i)
				f, _ := domain.NewFollower(uri, tt.followed, "", domain.FollowAccepted, t0)
				if _, err := b.follows.Add(ctx, f); err != nil {
					t.Fatal(err)
				}
				if err := b.content.Upsert(ctx, domain.ForeignAvatar{ActorURI: uri, Inbox: uri + "/inbox", Host: "x", FetchedAt: t0}); err != nil {
					t.Fatal(err)
				}
			}
			tt.publish.UserID = b.userID
			if _, err := b.app.Publish.Handle(ctx, tt.publish); err != nil {
				t.Fatal(err)
			}
			if jobs := b.allJobs(); len(jobs) != n {
				t.Fatalf("%d jobs, want %d", len(jobs), n)
			}
			b.enqueue.mu.Lock()
			batches := append([]int(nil), b.enqueue.batches...)
			b.enqueue.mu.Unlock()
			big := 0
			for _, size := range batches {
				if size > application.EnqueueBatch {
					t.Fatalf("a batch of %d jobs", size)
				}
				if size == application.EnqueueBatch {
					big++
				}
			}
			if big != n/application.EnqueueBatch {
				t.Fatalf("batches %v: want %d full batches of %d", batches, n/application.EnqueueBatch, application.EnqueueBatch)
			}
		})
	}
}

func TestEnqueueReportsAlreadyQueued(t *testing.T) {
	t.Parallel()
	jobs := memory.NewJobStore()
	h := application.NewEnqueueHandler(jobs, nil)
	j, _ := domain.NewJob(contract.JobID("j1"), "https://l/a/1", "https://r/inbox", "s", "k", []byte("{}"), t0)
	if r, err := h.Handle(t.Context(), []domain.Job{j}); err != nil || r.Queued != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	j.ID = contract.JobID("j2")
	if r, err := h.Handle(t.Context(), []domain.Job{j}); err != nil || r.Queued != 0 || r.AlreadyQueued != 1 {
		t.Fatalf("%+v %v", r, err)
	}
}
