package application

import (
	"context"
	"sync"
	"time"

	"github.com/heraldfed/herald/ports"
)

// Key fetches are the one request a stranger makes Herald send by
// posting to an inbox: every unknown key id is a GET to the host it
// names. failingHosts keeps that from being a reflector (SPEC §10
// "Load"): each host has a budget of failed key fetches, keyFailBurst at
// once and one more each keyFailEvery; once a host has spent it, key
// fetches there pause until the budget grows back, and a success gives the
// whole budget back. A fetch takes its failure from the budget before it
// starts (and gets it back unless it failed), so fetches running at once
// cannot together overspend it. And at most keyFetchesPerHost run at once per host, so
// a burst of forged key ids that all arrive before the first fetches fail
// costs that host a couple of requests, not one per forgery.
//
// A budget rather than a pause at the first failure: a failure says as
// much about the key id (an attacker's forgery naming a victim's host) as
// about the host, and a pause at once would let one forged request lock a
// host's genuine new actors out for a while.
const (
	keyFailBurst      = 3
	keyFailEvery      = time.Minute
	keyFetchesPerHost = 2
	// maxFailingHosts bounds the hosts remembered; past it the entries
	// whose budget is whole again are dropped first.
	maxFailingHosts = 10_000
)

type failingHosts struct {
	clock ports.Clock
	mu    sync.Mutex
	hosts map[string]*hostFetches
}

type hostFetches struct {
	// budget of failed key fetches left, a token bucket: at most
	// keyFailBurst, one more each keyFailEvery since at.
	budget float64
	at     time.Time
	slots  chan struct{}
	users  int // callers holding or waiting for a slot
}

func newFailingHosts(clock ports.Clock) *failingHosts {
	return &failingHosts{clock: clock, hosts: map[string]*hostFetches{}}
}

// refill adds the budget grown back since h.at. Called with mu held.
func (f *failingHosts) refill(h *hostFetches) {
	now := f.clock.Now()
	if grown := now.Sub(h.at); grown > 0 {
		h.budget = min(keyFailBurst, h.budget+float64(grown)/float64(keyFailEvery))
	}
	h.at = now
}

// paused is how long key fetches to host are still paused; 0 if they
// are not.
func (f *failingHosts) paused(host string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.hosts[host]
	if !ok {
		return 0
	}
	return f.wait(h)
}

// wait is paused for an entry. Called with mu held.
func (f *failingHosts) wait(h *hostFetches) time.Duration {
	f.refill(h)
	if h.budget >= 1 {
		return 0
	}
	return max(time.Second, time.Duration((1-h.budget)*float64(keyFailEvery)))
}

// acquire waits for one of the host's key fetch slots; release gives it
// back. It fails only when ctx ends first.
func (f *failingHosts) acquire(ctx context.Context, host string) (release func(), err error) {
	f.mu.Lock()
	h := f.entry(host)
	h.users++
	f.mu.Unlock()
	done := func() {
		f.mu.Lock()
		h.users--
		f.forget(host, h)
		f.mu.Unlock()
	}
	select {
	case h.slots <- struct{}{}:
		return func() { <-h.slots; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}

// take spends one failed fetch of the host's budget ahead of a fetch,
// so that fetches running at once can never together fail more than the
// budget allows; it returns how long fetches pause instead when none is
// left. succeeded gives it back (and the rest), refund gives back one that
// did not fail for the host's sake.
func (f *failingHosts) take(host string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.entry(host)
	if wait := f.wait(h); wait > 0 {
		return wait
	}
	h.budget--
	return 0
}

// refund gives back a failure taken ahead of a fetch that did not fail
// for the host's sake (our own store failed).
func (f *failingHosts) refund(host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h, ok := f.hosts[host]; ok {
		f.refill(h)
		h.budget = min(keyFailBurst, h.budget+1)
		f.forget(host, h)
	}
}

// succeeded gives the host its whole budget back.
func (f *failingHosts) succeeded(host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h, ok := f.hosts[host]; ok {
		h.budget, h.at = keyFailBurst, f.clock.Now()
		f.forget(host, h)
	}
}

// entry returns the host's entry, made if missing. Called with mu held.
func (f *failingHosts) entry(host string) *hostFetches {
	if h, ok := f.hosts[host]; ok {
		return h
	}
	if len(f.hosts) >= maxFailingHosts {
		f.evict()
	}
	h := &hostFetches{budget: keyFailBurst, at: f.clock.Now(), slots: make(chan struct{}, keyFetchesPerHost)}
	f.hosts[host] = h
	return h
}

// whole reports whether the host's budget is whole again (a fresh entry
// would be the same). Called with mu held.
func (f *failingHosts) whole(h *hostFetches) bool {
	f.refill(h)
	return h.budget >= keyFailBurst
}

// forget drops an entry nobody uses whose budget is whole. Called with mu
// held.
func (f *failingHosts) forget(host string, h *hostFetches) {
	if h.users == 0 && f.whole(h) && f.hosts[host] == h {
		delete(f.hosts, host)
	}
}

// evict makes room: entries nobody uses whose budget is whole go first;
// if none is, any unused one does (a host forgotten early gets its budget
// back a little sooner). Called with mu held.
func (f *failingHosts) evict() {
	var spare string
	for host, h := range f.hosts {
		if h.users > 0 {
			continue
		}
		if f.whole(h) {
			delete(f.hosts, host)
			return
		}
		spare = host
	}
	if spare != "" {
		delete(f.hosts, spare)
	}
}
