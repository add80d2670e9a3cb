package contract

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// race is the harness of the job store's chaos cases: workers on two
// store handles (as two processes would be) run rounds of lease and settle
// while the case's own goroutine may act beside them, and every failure any
// of them meets is collected under one lock, which also guards what the
// case tallies.
type race struct {
	t        *testing.T
	s, other Jobs
	deadline time.Time

	mu   sync.Mutex
	errs []error
	wg   sync.WaitGroup
}

// newRace opens the second handle (o.second, else s itself). Its deadline
// is a bound so a lost job fails the case instead of hanging it, not a
// speed limit: on FerretDB v2 under a loaded 2-core machine a chaos case
// took over 90 s (56 s alone).
func newRace(t *testing.T, s Jobs, o options) *race {
	other := s
	if o.second != nil {
		other = o.second(t, s)
	}
	return &race{t: t, s: s, other: other, deadline: time.Now().Add(5 * time.Minute)}
}

func (r *race) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *race) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs) > 0
}

// start runs workers goroutines, the even ones on s and the odd ones on
// the second handle, each calling round with its number, its round count
// and its store until round says the worker is done; one still working at
// the deadline is a failure.
func (r *race) start(workers int, round func(w, i int, store Jobs) (done bool)) {
	for w := range workers {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			store := r.s
			if w%2 == 1 {
				store = r.other
			}
			for i := 0; time.Now().Before(r.deadline); i++ {
				if round(w, i, store) {
					return
				}
			}
			r.fail(fmt.Errorf("worker %d still had work at the deadline", w))
		}()
	}
}

// wait waits for the workers and reports every failure collected; it
// says whether there was none.
func (r *race) wait(t *testing.T) bool {
	t.Helper()
	r.wg.Wait()
	for _, err := range r.errs {
		t.Error(err)
	}
	return !t.Failed()
}

// lease leases on store for a worker's round; false (the failure
// collected) ends the worker.
func (r *race) lease(store Jobs, req ports.LeaseRequest) ([]domain.Job, bool) {
	jobs, err := store.LeaseBatch(ctx(r.t), req)
	if err != nil {
		r.fail(fmt.Errorf("lease: %w", err))
		return nil, false
	}
	return jobs, true
}

// settle settles a worker's batch; false (the failure collected) ends the
// worker.
func (r *race) settle(store Jobs, batch []ports.Settlement) ([]error, bool) {
	lost, err := store.Settle(ctx(r.t), batch)
	if err != nil {
		r.fail(fmt.Errorf("settle: %w", err))
		return nil, false
	}
	return lost, true
}

// noSlotLeft checks that the run left no host slot behind: one more job
// per host, a lease at now with a cap of one on the second handle, and
// every host gives its job.
func (r *race) noSlotLeft(t *testing.T, hosts []string, now time.Time) {
	t.Helper()
	more := make([]domain.Job, len(hosts))
	for i, h := range hosts {
		more[i] = job(t, fmt.Sprintf("more%02d", i), h, base)
	}
	enqueue(t, r.s, more...)
	if got := leaseBatch(t, r.other, ports.LeaseRequest{Token: "after", Now: now, Limit: 2 * len(hosts), PerHost: 1}); len(got) != len(hosts) {
		t.Fatalf("after the run a cap of one leased %v of %d hosts: a slot was left over", jobIDs(got), len(hosts))
	}
}
