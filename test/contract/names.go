package contract

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func reserved(t *testing.T, name string, kind domain.NameKind, owner string) domain.ReservedName {
	t.Helper()
	n, err := domain.NewReservedName(name, kind, owner, base)
	mustNil(t, err, "reserved name")
	return n
}

// NameRegistry runs the contract of ports.NameRegistry.
func NameRegistry(t *testing.T, newStore func(t *testing.T) ports.NameRegistry, opts ...Option) {
	runCases(t, newStore, opts, append([]testCase[ports.NameRegistry]{
		{"ReserveThenGet", func(t *testing.T, r ports.NameRegistry) {
			mustNil(t, r.Reserve(ctx(t), reserved(t, "alice", domain.NameKindPersona, "av1")), "reserve")
			got, err := r.Get(ctx(t), "alice")
			mustNil(t, err, "get")
			if got.Name != "alice" || got.Kind != domain.NameKindPersona || got.OwnerID != "av1" {
				t.Fatalf("got %+v", got)
			}
			sameTime(t, got.CreatedAt, base, "createdAt")
			_, err = r.Get(ctx(t), "bob")
			mustIs(t, err, domain.ErrNotFound, "get unknown")
		}},
		{"SecondReservationIsTaken", func(t *testing.T, r ports.NameRegistry) {
			mustNil(t, r.Reserve(ctx(t), reserved(t, "alice", domain.NameKindPersona, "av1")), "reserve")
			mustIs(t, r.Reserve(ctx(t), reserved(t, "alice", domain.NameKindGroup, "g1")), domain.ErrNameTaken, "group with a persona's name")
			mustIs(t, r.Reserve(ctx(t), reserved(t, "alice", domain.NameKindPersona, "av1")), domain.ErrNameTaken, "same owner again")
			got, _ := r.Get(ctx(t), "alice")
			if got.OwnerID != "av1" || got.Kind != domain.NameKindPersona {
				t.Fatalf("loser overwrote the winner: %+v", got)
			}
		}},
		{"ReleaseByOwnerOnly", func(t *testing.T, r ports.NameRegistry) {
			mustNil(t, r.Reserve(ctx(t), reserved(t, "alice", domain.NameKindPersona, "av1")), "reserve")
			mustIs(t, r.Release(ctx(t), "alice", "intruder"), domain.ErrNotFound, "release by another owner")
			if _, err := r.Get(ctx(t), "alice"); err != nil {
				t.Fatal("released by the wrong owner")
			}
			mustNil(t, r.Release(ctx(t), "alice", "av1"), "release")
			mustIs(t, r.Release(ctx(t), "alice", "av1"), domain.ErrNotFound, "release twice")
			mustNil(t, r.Reserve(ctx(t), reserved(t, "alice", domain.NameKindGroup, "g1")), "reserve after release")
			mustNil(t, r.Reserve(ctx(t), reserved(t, "ops", domain.NameKindSystem, "")), "system")
			mustNil(t, r.Release(ctx(t), "ops", ""), "release system name")
		}},
		{"ReservationRaceHasOneWinner", func(t *testing.T, r ports.NameRegistry) {
			for round := 0; round < 3; round++ {
				name := fmt.Sprintf("contested_%d", round)
				const n = 64
				var wg sync.WaitGroup
				var mu sync.Mutex
				wins, taken := 0, 0
				var other []error
				start := make(chan struct{})
				for i := 0; i < n; i++ {
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						<-start
						err := r.Reserve(ctx(t), reserved(t, name, domain.NameKindPersona, fmt.Sprintf("av%d", i)))
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							wins++
						case errors.Is(err, domain.ErrNameTaken):
							taken++
						default:
							other = append(other, err)
						}
					}(i)
				}
				close(start)
				wg.Wait()
				if wins != 1 || taken != n-1 || len(other) > 0 {
					t.Fatalf("round %d: %d winners, %d taken, other errors %v", round, wins, taken, other)
				}
			}
		}},
		{"ListByKind", func(t *testing.T, r ports.NameRegistry) {
			for _, n := range []domain.ReservedName{
				reserved(t, "zed", domain.NameKindPersona, "a"), reserved(t, "amy", domain.NameKindPersona, "b"),
				reserved(t, "club", domain.NameKindGroup, "c"), reserved(t, "admin", domain.NameKindSystem, ""),
			} {
				mustNil(t, r.Reserve(ctx(t), n), "reserve")
			}
			personas, err := r.List(ctx(t), domain.NameKindPersona)
			mustNil(t, err, "list")
			if len(personas) != 2 || personas[0].Name != "amy" || personas[1].Name != "zed" {
				t.Fatalf("personas %+v", personas)
			}
			all, _ := r.List(ctx(t), "")
			if len(all) != 4 || all[0].Name != "admin" {
				t.Fatalf("all %+v", all)
			}
		}},
	}, deletedNameCases()...))
}
