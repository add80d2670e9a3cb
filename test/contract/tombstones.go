package contract

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// TombstoneStore runs the contract of ports.TombstoneStore.
func TombstoneStore(t *testing.T, newStore func(t *testing.T) ports.TombstoneStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewTombstones)
	const note, mal, ann = "https://r.example/notes/1", "https://r.example/users/mal", "https://r.example/users/ann"
	tomb := func(t *testing.T, uri, actor string, at time.Time) domain.Tombstone {
		t.Helper()
		ts, err := domain.NewTombstone(uri, actor, at)
		mustNil(t, err, "tombstone")
		return ts
	}
	same := func(t *testing.T, got, want domain.Tombstone) {
		t.Helper()
		if got.URI != want.URI || got.ActorURI != want.ActorURI {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		sameTime(t, got.DeletedAt, want.DeletedAt, "deletedAt")
	}
	runCases(t, newStore, opts, []testCase[ports.TombstoneStore]{
		{"AddAndFind", func(t *testing.T, s ports.TombstoneStore) {
			want := tomb(t, note, mal, base)
			mustNil(t, s.AddTombstone(ctx(t), want), "add")
			got, err := s.Tombstoned(ctx(t), note)
			mustNil(t, err, "tombstoned")
			same(t, got, want)
			// The actor itself, deleted: a tombstone of its own URI.
			mustNil(t, s.AddTombstone(ctx(t), tomb(t, mal, mal, base.Add(time.Minute))), "add the actor's")
			got, err = s.Tombstoned(ctx(t), mal)
			mustNil(t, err, "the actor's tombstone")
			same(t, got, tomb(t, mal, mal, base.Add(time.Minute)))
		}},
		{"FirstDeletionStands", func(t *testing.T, s ports.TombstoneStore) {
			first := tomb(t, note, mal, base)
			mustNil(t, s.AddTombstone(ctx(t), first), "add")
			mustNil(t, s.AddTombstone(ctx(t), tomb(t, note, ann, base.Add(time.Hour))), "add again, another actor, later")
			mustNil(t, s.AddTombstone(ctx(t), tomb(t, note, mal, base.Add(-time.Hour))), "add again, earlier")
			got, err := s.Tombstoned(ctx(t), note)
			mustNil(t, err, "tombstoned")
			same(t, got, first)
		}},
		{"NotFound", func(t *testing.T, s ports.TombstoneStore) {
			_, err := s.Tombstoned(ctx(t), note)
			mustIs(t, err, domain.ErrNotFound, "in an empty store")
			mustNil(t, s.AddTombstone(ctx(t), tomb(t, note, mal, base)), "add")
			for _, uri := range []string{"https://r.example/notes/2", "https://r.example/notes/1/", ""} {
				_, err = s.Tombstoned(ctx(t), uri)
				mustIs(t, err, domain.ErrNotFound, fmt.Sprintf("another URI %q", uri))
			}
			mustIs(t, s.AddTombstone(ctx(t), domain.Tombstone{ActorURI: mal, DeletedAt: base}), domain.ErrInvalidInput, "a tombstone without URI")
		}},
		{"ConcurrentAddsKeepOne", func(t *testing.T, s ports.TombstoneStore) {
			const n = 16
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				ts := tomb(t, note, fmt.Sprintf("https://r.example/users/u%02d", i), base.Add(time.Duration(i)*time.Second))
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = s.AddTombstone(ctx(t), ts)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				mustNil(t, err, fmt.Sprintf("add %d", i))
			}
			got, err := s.Tombstoned(ctx(t), note)
			mustNil(t, err, "tombstoned")
			var i int
			if _, err := fmt.Sscanf(got.ActorURI, "https://r.example/users/u%02d", &i); err != nil {
				t.Fatalf("kept %+v, none of the adds", got)
			}
			same(t, got, tomb(t, note, got.ActorURI, base.Add(time.Duration(i)*time.Second)))
		}},
	})
}
