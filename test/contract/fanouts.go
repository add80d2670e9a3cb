package contract

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func fanOut(t *testing.T, id, owner string, created, until time.Time) domain.FanOut {
	t.Helper()
	f, err := domain.NewFanOut("https://local.example/activities/"+id, "https://local.example/users/alice",
		"actor-1", "https://local.example/users/alice#main-key", []byte(`{"id":"`+id+`"}`), 100, owner, created, until)
	mustNil(t, err, "fan-out")
	return f
}

// FanOutStore runs the contract of ports.FanOutStore.
func FanOutStore(t *testing.T, newStore func(t *testing.T) ports.FanOutStore, opts ...Option) {
	const act = "https://local.example/activities/"
	runCases(t, newStore, opts, []testCase[ports.FanOutStore]{
		{"CreateThenGet", func(t *testing.T, s ports.FanOutStore) {
			f := fanOut(t, "a", "p1", base, base.Add(time.Minute))
			mustNil(t, s.Create(ctx(t), f), "create")
			got, err := s.Get(ctx(t), f.ID)
			mustNil(t, err, "get")
			if got.ActorURI != f.ActorURI || got.SenderID != f.SenderID || got.KeyID != f.KeyID ||
				string(got.Payload) != string(f.Payload) || got.BodyID != domain.BodyOf(f.Payload) ||
				got.Total != 100 || got.Queued != 0 || got.Cursor != "" || got.Done || got.Owner != "p1" {
				t.Fatalf("stored fan-out differs:\n got %+v\nwant %+v", got, f)
			}
			sameTime(t, got.LeaseUntil, base.Add(time.Minute), "lease until")
			sameTime(t, got.CreatedAt, base, "created at")
			again := f
			again.Owner = "p2"
			mustIs(t, s.Create(ctx(t), again), domain.ErrAlreadyExists, "create twice")
			if got, _ := s.Get(ctx(t), f.ID); got.Owner != "p1" {
				t.Fatalf("a second create changed the record: owner %q", got.Owner)
			}
			_, err = s.Get(ctx(t), act+"nope")
			mustIs(t, err, domain.ErrNotFound, "get unknown")
		}},
		{"AdvanceAddsAndMovesForward", func(t *testing.T, s ports.FanOutStore) {
			f := fanOut(t, "a", "p1", base, base.Add(time.Minute))
			mustNil(t, s.Create(ctx(t), f), "create")
			step := ports.FanOutProgress{ID: f.ID, Owner: "p1", Cursor: "https://r.example/u/m", Queued: 40,
				Now: base.Add(time.Second), Until: base.Add(2 * time.Minute)}
			got, err := s.Advance(ctx(t), step)
			mustNil(t, err, "advance")
			if got.Cursor != step.Cursor || got.Queued != 40 || got.Done {
				t.Fatalf("after one step: %+v", got)
			}
			sameTime(t, got.LeaseUntil, base.Add(2*time.Minute), "lease extended")
			// A step behind the cursor (a slower run of the same page) adds its
			// count but does not move the cursor back.
			step.Cursor, step.Queued = "https://r.example/u/c", 2
			got, err = s.Advance(ctx(t), step)
			mustNil(t, err, "advance behind")
			if got.Cursor != "https://r.example/u/m" || got.Queued != 42 {
				t.Fatalf("a step behind moved the cursor or lost its count: %+v", got)
			}
			step.Cursor, step.Queued, step.Done = "https://r.example/u/z", 58, true
			got, err = s.Advance(ctx(t), step)
			mustNil(t, err, "last step")
			stored, err := s.Get(ctx(t), f.ID)
			mustNil(t, err, "get")
			for _, v := range []domain.FanOut{got, stored} {
				if !v.Done || v.Queued != 100 || v.Cursor != "https://r.example/u/z" || v.Owner != "" {
					t.Fatalf("finished fan-out: %+v", v)
				}
			}
			_, err = s.Advance(ctx(t), step)
			mustIs(t, err, domain.ErrLeaseLost, "advance a finished fan-out")
			_, err = s.Advance(ctx(t), ports.FanOutProgress{ID: act + "nope", Owner: "p1", Now: base})
			mustIs(t, err, domain.ErrNotFound, "advance unknown")
		}},
		{"AdvanceIsFencedByTheOwner", func(t *testing.T, s ports.FanOutStore) {
			f := fanOut(t, "a", "p1", base, base.Add(time.Minute))
			mustNil(t, s.Create(ctx(t), f), "create")
			_, err := s.Advance(ctx(t), ports.FanOutProgress{ID: f.ID, Owner: "p2", Cursor: "x", Queued: 5, Now: base, Until: base.Add(time.Hour)})
			mustIs(t, err, domain.ErrLeaseLost, "advance by another owner")
			// The lease expires; p2 claims it; p1's late step is refused.
			c, err := s.Claim(ctx(t), "p2", base.Add(time.Minute), base.Add(3*time.Minute))
			mustNil(t, err, "claim after expiry")
			if c.ID != f.ID || c.Owner != "p2" || string(c.Payload) != string(f.Payload) {
				t.Fatalf("claimed %+v", c)
			}
			_, err = s.Advance(ctx(t), ports.FanOutProgress{ID: f.ID, Owner: "p1", Cursor: "x", Queued: 5, Now: base, Until: base.Add(time.Hour)})
			mustIs(t, err, domain.ErrLeaseLost, "advance by the old owner")
			got, _ := s.Get(ctx(t), f.ID)
			if got.Queued != 0 || got.Cursor != "" || got.Owner != "p2" {
				t.Fatalf("refused steps changed the record: %+v", got)
			}
		}},
		{"ClaimTakesExpiredUnfinishedOldestFirst", func(t *testing.T, s ports.FanOutStore) {
			old := fanOut(t, "old", "p1", base, base.Add(time.Minute))
			young := fanOut(t, "young", "p1", base.Add(time.Second), base.Add(time.Minute))
			live := fanOut(t, "live", "p1", base.Add(-time.Hour), base.Add(time.Hour))
			done := fanOut(t, "done", "p1", base.Add(-2*time.Hour), base)
			for _, f := range []domain.FanOut{young, live, old, done} {
				mustNil(t, s.Create(ctx(t), f), "create")
			}
			_, err := s.Advance(ctx(t), ports.FanOutProgress{ID: done.ID, Owner: "p1", Cursor: "z", Done: true, Now: base})
			mustNil(t, err, "finish")
			_, err = s.Claim(ctx(t), "p2", base.Add(30*time.Second), base.Add(2*time.Minute))
			mustIs(t, err, domain.ErrNotFound, "claim before any lease expired")
			at := base.Add(time.Minute)
			var got []string
			for range 2 {
				c, err := s.Claim(ctx(t), "p2", at, at.Add(time.Minute))
				mustNil(t, err, "claim")
				got = append(got, c.ID)
			}
			if got[0] != old.ID || got[1] != young.ID {
				t.Fatalf("claimed %v, want old then young", got)
			}
			_, err = s.Claim(ctx(t), "p3", at, at.Add(time.Minute))
			mustIs(t, err, domain.ErrNotFound, "claim with nothing left (live is leased, done is done)")
		}},
		{"ConcurrentClaimsTakeEachOnce", func(t *testing.T, s ports.FanOutStore) {
			const n = 6
			for i := range n {
				mustNil(t, s.Create(ctx(t), fanOut(t, fmt.Sprintf("f%d", i), "p0", base.Add(time.Duration(i)*time.Second), base)), "create")
			}
			var mu sync.Mutex
			seen := map[string]string{}
			var wg sync.WaitGroup
			for w := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					owner := fmt.Sprintf("w%d", w)
					c, err := s.Claim(ctx(t), owner, base.Add(time.Minute), base.Add(time.Hour))
					if errors.Is(err, domain.ErrNotFound) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if prev, ok := seen[c.ID]; ok {
						t.Errorf("%s claimed by %s and %s", c.ID, prev, owner)
					}
					seen[c.ID] = owner
				}()
			}
			wg.Wait()
			if len(seen) != n {
				t.Fatalf("%d of %d fan-outs claimed", len(seen), n)
			}
		}},
		{"PurgeTakesOnlyOldFinishedOnes", func(t *testing.T, s ports.FanOutStore) {
			for _, id := range []string{"old-done", "new-done", "old-running"} {
				mustNil(t, s.Create(ctx(t), fanOut(t, id, "p1", base, base.Add(time.Minute))), "create")
			}
			for id, at := range map[string]time.Time{"old-done": base.Add(time.Hour), "new-done": base.Add(3 * time.Hour)} {
				_, err := s.Advance(ctx(t), ports.FanOutProgress{ID: act + id, Owner: "p1", Cursor: "z", Done: true, Now: at})
				mustNil(t, err, "finish "+id)
			}
			n, err := s.Purge(ctx(t), base.Add(2*time.Hour))
			mustNil(t, err, "purge")
			if n != 1 {
				t.Fatalf("purged %d, want 1", n)
			}
			_, err = s.Get(ctx(t), act+"old-done")
			mustIs(t, err, domain.ErrNotFound, "the old finished one")
			for _, id := range []string{"new-done", "old-running"} {
				if _, err := s.Get(ctx(t), act+id); err != nil {
					t.Fatalf("%s purged: %v", id, err)
				}
			}
		}},
		{"ListNewestFirstWithoutPayload", func(t *testing.T, s ports.FanOutStore) {
			for i := range 4 {
				mustNil(t, s.Create(ctx(t), fanOut(t, fmt.Sprintf("f%d", i), "p1", base.Add(time.Duration(i)*time.Minute), base)), "create")
			}
			l, err := s.List(ctx(t), 3)
			mustNil(t, err, "list")
			if len(l) != 3 || l[0].ID != act+"f3" || l[1].ID != act+"f2" || l[2].ID != act+"f1" {
				t.Fatalf("list = %v", l)
			}
			if len(l[0].Payload) != 0 || l[0].BodyID != domain.BodyOf([]byte(`{"id":"f3"}`)) || l[0].Total != 100 {
				t.Fatalf("listed record: %+v", l[0])
			}
		}},
	})
}
