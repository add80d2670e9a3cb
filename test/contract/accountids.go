package contract

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// AccountIDStore runs the contract of ports.AccountIDStore.
func AccountIDStore(t *testing.T, newStore func(t *testing.T) ports.AccountIDStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewAccountIDs)
	const bob, carl = "https://r.example/users/bob", "https://s.example/users/carl"
	runCases(t, newStore, opts, []testCase[ports.AccountIDStore]{
		{"FirstIDStays", func(t *testing.T, s ports.AccountIDStore) {
			id, err := s.AccountID(ctx(t), bob, "01-bob")
			mustNil(t, err, "first id")
			again, err := s.AccountID(ctx(t), bob, "02-other")
			mustNil(t, err, "second call")
			if id != "01-bob" || again != "01-bob" {
				t.Fatalf("ids %q then %q, want 01-bob twice", id, again)
			}
			uri, err := s.AccountURI(ctx(t), "01-bob")
			mustNil(t, err, "uri")
			if uri != bob {
				t.Fatalf("uri %q", uri)
			}
			if _, err := s.AccountURI(ctx(t), "02-other"); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("the id not stored: %v, want domain.ErrNotFound", err)
			}
		}},
		{"IDBelongsToOneActor", func(t *testing.T, s ports.AccountIDStore) {
			_, err := s.AccountID(ctx(t), bob, "01-x")
			mustNil(t, err, "bob")
			if _, err := s.AccountID(ctx(t), carl, "01-x"); !errors.Is(err, domain.ErrAlreadyExists) {
				t.Fatalf("bob's id for carl: %v, want domain.ErrAlreadyExists", err)
			}
			uri, err := s.AccountURI(ctx(t), "01-x")
			mustNil(t, err, "uri")
			if uri != bob {
				t.Fatalf("01-x names %q, want bob", uri)
			}
		}},
		{"EmptyIsInvalid", func(t *testing.T, s ports.AccountIDStore) {
			if _, err := s.AccountID(ctx(t), "", "01"); !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("empty uri: %v", err)
			}
			if _, err := s.AccountID(ctx(t), bob, ""); !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("empty id: %v", err)
			}
		}},
		{"ConcurrentFirstCallsAgree", func(t *testing.T, s ports.AccountIDStore) {
			const n = 12
			ids := make([]string, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids[i], errs[i] = s.AccountID(ctx(t), carl, fmt.Sprintf("id-%02d", i))
				}()
			}
			wg.Wait()
			for i := range n {
				if errs[i] != nil || ids[i] != ids[0] {
					t.Fatalf("call %d: %q %v, call 0: %q", i, ids[i], errs[i], ids[0])
				}
			}
		}},
	})
}
