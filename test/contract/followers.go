package contract

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func follow(t *testing.T, follower, followed string, st domain.FollowState) domain.Follower {
	t.Helper()
	f, err := domain.NewFollower(follower, followed, follower+"#follow", st, base)
	mustNil(t, err, "follower")
	return f
}

// FollowerStore runs the contract of ports.FollowerStore.
func FollowerStore(t *testing.T, newStore func(t *testing.T) ports.FollowerStore, opts ...Option) {
	const alice = "https://local.example/users/alice"
	runCases(t, newStore, opts, append([]testCase[ports.FollowerStore]{
		{"AddIsUniquePerPair", func(t *testing.T, s ports.FollowerStore) {
			created, err := s.Add(ctx(t), follow(t, "https://r.example/u/bob", alice, domain.FollowAccepted))
			mustNil(t, err, "add")
			if !created {
				t.Fatal("first add not created")
			}
			created, err = s.Add(ctx(t), follow(t, "https://r.example/u/bob", alice, domain.FollowPending))
			mustNil(t, err, "add again")
			if created {
				t.Fatal("second add of the same pair created a row")
			}
			got, err := s.Get(ctx(t), "https://r.example/u/bob", alice)
			mustNil(t, err, "get")
			if got.State != domain.FollowAccepted || got.ActivityID != "https://r.example/u/bob#follow" {
				t.Fatalf("existing relation changed: %+v", got)
			}
			// The reverse direction is a different relation.
			created, _ = s.Add(ctx(t), follow(t, alice, "https://r.example/u/bob", domain.FollowPending))
			if !created {
				t.Fatal("reverse follow refused")
			}
			_, err = s.Get(ctx(t), "https://r.example/u/nobody", alice)
			mustIs(t, err, domain.ErrNotFound, "unknown pair")
		}},
		{"ConcurrentAddsCreateOnce", func(t *testing.T, s ports.FollowerStore) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			creates := 0
			for i := 0; i < 32; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := s.Add(ctx(t), follow(t, "https://r.example/u/bob", alice, domain.FollowPending))
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					if c {
						creates++
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			if creates != 1 {
				t.Fatalf("%d concurrent adds created a row", creates)
			}
		}},
		{"PendingToAcceptedThenRemoved", func(t *testing.T, s ports.FollowerStore) {
			_, err := s.Add(ctx(t), follow(t, "https://r.example/u/bob", alice, domain.FollowPending))
			mustNil(t, err, "add")
			mustNil(t, s.SetState(ctx(t), "https://r.example/u/bob", alice, domain.FollowAccepted, base.Add(time.Second)), "accept")
			got, _ := s.Get(ctx(t), "https://r.example/u/bob", alice)
			if got.State != domain.FollowAccepted {
				t.Fatalf("state %s", got.State)
			}
			sameTime(t, got.UpdatedAt, base.Add(time.Second), "updatedAt")
			mustIs(t, s.SetState(ctx(t), "https://r.example/u/x", alice, domain.FollowAccepted, base), domain.ErrNotFound, "set state of unknown")
			mustNil(t, s.Remove(ctx(t), "https://r.example/u/bob", alice), "remove")
			mustIs(t, s.Remove(ctx(t), "https://r.example/u/bob", alice), domain.ErrNotFound, "remove twice")
			created, _ := s.Add(ctx(t), follow(t, "https://r.example/u/bob", alice, domain.FollowPending))
			if !created {
				t.Fatal("follow after undo refused")
			}
		}},
		{"ListAndCountFollowers", func(t *testing.T, s ports.FollowerStore) {
			for i := 0; i < 25; i++ {
				st := domain.FollowAccepted
				if i%5 == 0 {
					st = domain.FollowPending
				}
				_, err := s.Add(ctx(t), follow(t, fmt.Sprintf("https://r%d.example/u/f%02d", i%3, i), alice, st))
				mustNil(t, err, "add")
			}
			_, _ = s.Add(ctx(t), follow(t, "https://r.example/u/other", "https://local.example/users/bob", domain.FollowAccepted))
			n, err := s.CountFollowers(ctx(t), alice, domain.FollowAccepted)
			mustNil(t, err, "count")
			if n != 20 {
				t.Fatalf("accepted = %d", n)
			}
			var got []string
			after := ""
			for {
				page, err := s.Followers(ctx(t), alice, domain.FollowAccepted, after, 7)
				mustNil(t, err, "followers")
				for _, f := range page {
					if f.FollowedURI != alice || f.State != domain.FollowAccepted {
						t.Fatalf("wrong row %+v", f)
					}
					if len(got) > 0 && f.FollowerURI <= got[len(got)-1] {
						t.Fatalf("not ordered: %s after %s", f.FollowerURI, got[len(got)-1])
					}
					got = append(got, f.FollowerURI)
				}
				if len(page) < 7 {
					break
				}
				after = page[len(page)-1].FollowerURI
			}
			if len(got) != 20 {
				t.Fatalf("paged %d followers", len(got))
			}
			// FollowerURIs pages the same URIs in the same order.
			var uris []string
			after = ""
			for {
				page, err := s.FollowerURIs(ctx(t), alice, domain.FollowAccepted, after, 7)
				mustNil(t, err, "follower uris")
				uris = append(uris, page...)
				if len(page) < 7 {
					break
				}
				after = page[len(page)-1]
			}
			if !slices.Equal(uris, got) {
				t.Fatalf("FollowerURIs paged %v, Followers %v", uris, got)
			}
			if pending, err := s.FollowerURIs(ctx(t), alice, domain.FollowPending, "", 0); err != nil || len(pending) != 5 {
				t.Fatalf("pending follower uris: %v %v, want 5", pending, err)
			}
		}},
		{"RemoveActorDropsBothSides", func(t *testing.T, s ports.FollowerStore) {
			gone := "https://r.example/u/gone"
			_, _ = s.Add(ctx(t), follow(t, gone, alice, domain.FollowAccepted))
			_, _ = s.Add(ctx(t), follow(t, alice, gone, domain.FollowAccepted))
			_, _ = s.Add(ctx(t), follow(t, "https://r.example/u/stays", alice, domain.FollowAccepted))
			n, err := s.RemoveActor(ctx(t), gone)
			mustNil(t, err, "remove actor")
			if n != 2 {
				t.Fatalf("removed %d", n)
			}
			if c, _ := s.CountFollowers(ctx(t), alice, domain.FollowAccepted); c != 1 {
				t.Fatalf("left %d", c)
			}
		}},
	}, followedCases()...))
}
