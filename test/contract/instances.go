package contract

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// InstanceStore runs the contract of ports.InstanceStore.
func InstanceStore(t *testing.T, newStore func(t *testing.T) ports.InstanceStore, opts ...Option) {
	runCases(t, newStore, opts, []testCase[ports.InstanceStore]{
		{"UpdateCreatesAndGetReads", func(t *testing.T, s ports.InstanceStore) {
			_, err := s.Get(ctx(t), "a.example")
			mustIs(t, err, domain.ErrNotFound, "unknown host")
			r, err := s.Update(ctx(t), "a.example", func(r *domain.RemoteInstance) { r.RecordFailure(base, "refused") })
			mustNil(t, err, "update")
			if r.Host != "a.example" || r.ConsecutiveFailures != 1 || r.LastError != "refused" {
				t.Fatalf("update returned %+v", r)
			}
			got, err := s.Get(ctx(t), "a.example")
			mustNil(t, err, "get")
			if got.ConsecutiveFailures != 1 || got.LastError != "refused" {
				t.Fatalf("stored %+v", got)
			}
			sameTime(t, got.LastFailureAt, base, "lastFailureAt")
		}},
		{"UpdateKeepsEveryField", func(t *testing.T, s ports.InstanceStore) {
			for i := 0; i < domain.BreakerThreshold; i++ {
				_, err := s.Update(ctx(t), "q.example", func(r *domain.RemoteInstance) { r.RecordFailure(base, "HTTP 503") })
				mustNil(t, err, "update")
			}
			got, _ := s.Get(ctx(t), "q.example")
			if got.QuarantineLevel != 1 || got.ConsecutiveFailures != domain.BreakerThreshold {
				t.Fatalf("%+v", got)
			}
			sameTime(t, got.QuarantinedUntil, base.Add(time.Hour), "quarantinedUntil")
			_, err := s.Update(ctx(t), "q.example", func(r *domain.RemoteInstance) { r.RecordSuccess(base.Add(time.Minute)) })
			mustNil(t, err, "success")
			got, _ = s.Get(ctx(t), "q.example")
			if !got.Healthy() || got.LastError != "HTTP 503" {
				t.Fatalf("after success %+v", got)
			}
			sameTime(t, got.LastSuccessAt, base.Add(time.Minute), "lastSuccessAt")
		}},
		{"ConcurrentUpdatesAreAllCounted", func(t *testing.T, s ports.InstanceStore) {
			const n = 32
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					_, err := s.Update(ctx(t), "busy.example", func(r *domain.RemoteInstance) {
						r.RecordFailure(base, fmt.Sprintf("e%d", i))
					})
					errs <- err
				}(i)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				mustNil(t, err, "concurrent update")
			}
			got, _ := s.Get(ctx(t), "busy.example")
			if got.ConsecutiveFailures != n {
				t.Fatalf("counted %d of %d concurrent failures", got.ConsecutiveFailures, n)
			}
		}},
		{"ListAllOrQuarantined", func(t *testing.T, s ports.InstanceStore) {
			for _, h := range []string{"c.example", "a.example", "b.example"} {
				_, err := s.Update(ctx(t), h, func(r *domain.RemoteInstance) {
					if h == "b.example" {
						r.QuarantineLevel, r.QuarantinedUntil = 1, base.Add(time.Hour)
					}
				})
				mustNil(t, err, "update")
			}
			all, err := s.List(ctx(t), time.Time{})
			mustNil(t, err, "list")
			if len(all) != 3 || all[0].Host != "a.example" || all[2].Host != "c.example" {
				t.Fatalf("all %+v", all)
			}
			q, _ := s.List(ctx(t), base)
			if len(q) != 1 || q[0].Host != "b.example" {
				t.Fatalf("quarantined %+v", q)
			}
			if q, _ := s.List(ctx(t), base.Add(time.Hour)); len(q) != 0 {
				t.Fatalf("quarantine over but listed: %+v", q)
			}
		}},
		{"UpdateManyAppliesToEachHostOnce", func(t *testing.T, s ports.InstanceStore) {
			_, err := s.Update(ctx(t), "old.example", func(r *domain.RemoteInstance) { r.RecordFailure(base, "refused") })
			mustNil(t, err, "update")
			calls := map[string]int{}
			got, err := s.UpdateMany(ctx(t), []string{"New.example", "old.example", "new.example"}, func(r *domain.RemoteInstance) {
				calls[r.Host]++
				r.RecordFailure(base.Add(time.Minute), "HTTP 503 at "+r.Host)
			})
			mustNil(t, err, "update many")
			if len(got) != 2 || got["new.example"].ConsecutiveFailures != 1 || got["old.example"].ConsecutiveFailures != 2 {
				t.Fatalf("update many returned %+v", got)
			}
			if calls["new.example"] < 1 || calls["old.example"] < 1 || len(calls) != 2 {
				t.Fatalf("fn called for %v, want each of the two distinct lower-case hosts", calls)
			}
			stored, err := s.Get(ctx(t), "new.example")
			mustNil(t, err, "get")
			if stored.LastError != "HTTP 503 at new.example" || stored.ConsecutiveFailures != 1 {
				t.Fatalf("stored %+v", stored)
			}
			sameTime(t, stored.LastFailureAt, base.Add(time.Minute), "lastFailureAt")
			if none, err := s.UpdateMany(ctx(t), nil, func(*domain.RemoteInstance) { t.Fatal("fn called for no host") }); err != nil || len(none) != 0 {
				t.Fatalf("no hosts: %v %v", none, err)
			}
			_, err = s.UpdateMany(ctx(t), []string{"a.example", ""}, func(*domain.RemoteInstance) {})
			mustIs(t, err, domain.ErrInvalidInput, "empty host")
		}},
		{"ConcurrentUpdateManysAreAllCounted", func(t *testing.T, s ports.InstanceStore) {
			// 16 callers, each failing the same four hosts in a different
			// order, and one Update alongside: every failure counted, no
			// deadlock.
			const n = 16
			hosts := []string{"a.example", "b.example", "c.example", "d.example"}
			var wg sync.WaitGroup
			errs := make(chan error, n+1)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					order := append(append([]string(nil), hosts[i%4:]...), hosts[:i%4]...)
					_, err := s.UpdateMany(ctx(t), order, func(r *domain.RemoteInstance) { r.RecordFailure(base, fmt.Sprintf("e%d", i)) })
					errs <- err
				}(i)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Update(ctx(t), "c.example", func(r *domain.RemoteInstance) { r.RecordFailure(base, "single") })
				errs <- err
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				mustNil(t, err, "concurrent update many")
			}
			for _, h := range hosts {
				want := n
				if h == "c.example" {
					want++
				}
				got, _ := s.Get(ctx(t), h)
				if got.ConsecutiveFailures != want {
					t.Fatalf("%s counted %d of %d concurrent failures", h, got.ConsecutiveFailures, want)
				}
			}
		}},
	})
}
