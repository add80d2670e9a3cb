package contract

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports/checked"
)

// Option adjusts how a suite runs.
type Option func(*options)

type options struct {
	skip   map[string]string
	second func(t *testing.T, s Jobs) Jobs
	kept   func(t *testing.T, s Jobs, after string, reaped bool)
}

// SecondHandle tells the job store suite how to open a second store on the
// database of s, as a second process would (its own pool or client). A
// store without it (memory: one store is one process) is its own second
// handle.
func SecondHandle(open func(t *testing.T, s Jobs) Jobs) Option {
	return func(o *options) { o.second = open }
}

// KeptCounts gives the job store suite a check of the counts a store keeps
// apart from its jobs (SQL triggers' rows): the counts case calls it after
// each of its writes, named by after, with reaped true after a Reap (where
// a store folds what it kept).
func KeptCounts(check func(t *testing.T, s Jobs, after string, reaped bool)) Option {
	return func(o *options) { o.kept = check }
}

// Opened remembers the database each store of a suite was opened on, for
// the options that reach it (SecondHandle, KeptCounts). Cases run in
// parallel, so it locks.
type Opened[D any] struct {
	mu sync.Mutex
	db map[Jobs]D
}

// Add notes that s was opened on db and returns s.
func (o *Opened[D]) Add(s Jobs, db D) Jobs {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.db == nil {
		o.db = make(map[Jobs]D)
	}
	o.db[s] = db
	return s
}

// Of is the database s was opened on, and whether Add noted one.
func (o *Opened[D]) Of(s Jobs) (D, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	db, ok := o.db[s]
	return db, ok
}

// A DriverError is an error a store's driver returns, and the domain
// sentinel the store's translator must make of it (nil: none).
type DriverError struct {
	Name string
	In   error
	Want error
}

// InterpretError checks a store's one translator of driver errors: each
// error keeps its chain and matches its sentinel and no other; nil stays
// nil, and a context error comes back unchanged.
func InterpretError(t *testing.T, interpret func(error) error, cases []DriverError) {
	t.Helper()
	sentinels := []error{domain.ErrNameTaken, domain.ErrAlreadyExists, domain.ErrNotFound,
		domain.ErrUnavailable, domain.ErrInvalidInput}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			if c.In == nil {
				t.Fatal("the case's error is nil: what should fail did not")
			}
			got := interpret(c.In)
			if !errors.Is(got, c.In) && !errors.Is(c.In, got) {
				t.Fatalf("the driver error left the chain: %v", got)
			}
			for _, s := range sentinels {
				if want := s == c.Want; errors.Is(got, s) != want {
					t.Fatalf("InterpretError(%v) = %v; errors.Is(_, %v) = %v, want %v", c.In, got, s, !want, want)
				}
			}
		})
	}
	if interpret(nil) != nil {
		t.Fatal("nil is not an error")
	}
	if got := interpret(context.Canceled); got != context.Canceled {
		t.Fatalf("context error changed: %v", got)
	}
}

// Skip marks one case (by its subtest name) as not verifiable on this store,
// with the reason printed when it is skipped.
func Skip(caseName, reason string) Option {
	return func(o *options) {
		if o.skip == nil {
			o.skip = make(map[string]string)
		}
		o.skip[caseName] = reason
	}
}

type testCase[S any] struct {
	name string
	run  func(t *testing.T, s S)
}

func buildOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// The cases hold stores behind ports/checked; the options are the
	// adapter's own and get the store it opened.
	if open := o.second; open != nil {
		o.second = func(t *testing.T, s Jobs) Jobs { return checked.NewJobs(open(t, checked.Unwrap(s))) }
	}
	if kept := o.kept; kept != nil {
		o.kept = func(t *testing.T, s Jobs, after string, reaped bool) { kept(t, checked.Unwrap(s), after, reaped) }
	}
	return o
}

// behindChecks is newStore with each store behind ports/checked, as
// bootstrap puts every store: the suites check a port as the core sees it.
func behindChecks[S, C any](newStore func(t *testing.T) S, wrap func(S) C) func(t *testing.T) C {
	return func(t *testing.T) C { return wrap(newStore(t)) }
}

// runCases runs each case on a fresh store from newStore.
func runCases[S any](t *testing.T, newStore func(t *testing.T) S, opts []Option, cases []testCase[S]) {
	t.Helper()
	o := buildOptions(opts)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := o.skip[c.name]; ok {
				t.Skipf("UNVERIFIED on this store: %s", why)
			}
			c.run(t, newStore(t))
		})
	}
}

// base is the suite's "now": whole milliseconds, because Mongo stores
// milliseconds and a suite must not fail on an adapter's precision.
var base = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func mustNil(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func mustIs(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func sameTime(t *testing.T, got, want time.Time, what string) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
