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
// "Load"): after a key fetch to a host fails, further key fetches there
// pause, for keyPauseFirst and then twice as long after each further
// failure up to keyPauseMax, until one succeeds; and at most
// keyFetchesPerHost run at once per host, so a burst of forged key ids
// that all arrive before the first fetch fails still costs that host a
// couple of requests, not one per forgery.
const (
	keyPauseFirst     = time.Minute
	keyPauseMax       = time.Hour
	keyFetchesPerHost = 2
	// maxFailingHosts bounds the hosts remembered; past it the entries
	// whose pause ended are dropped first.
	maxFailingHosts = 10_000
)

type failingHosts struct {
	clock ports.Clock
	mu    sync.Mutex
	hosts map[string]*hostFetches
}

type hostFetches struct {
	failures int       // consecutive failed key fetches
	until    time.Time // no key fetch before then
	slots    chan struct{}
	users    int // callers holding or waiting for a slot
}

func newFailingHosts(clock ports.Clock) *failingHosts {
	return &failingHosts{clock: clock, hosts: map[string]*hostFetches{}}
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
	return max(0, h.until.Sub(f.clock.Now()))
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

// failed records a failed key fetch and returns the pause it starts.
func (f *failingHosts) failed(host string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.entry(host)
	now := f.clock.Now()
	if !h.until.IsZero() && now.Sub(h.until) > keyPauseMax {
		h.failures = 0 // the last failure is long past: start over
	}
	h.failures++
	pause := keyPauseFirst
	for i := 1; i < h.failures && pause < keyPauseMax; i++ {
		pause *= 2
	}
	pause = min(pause, keyPauseMax)
	h.until = now.Add(pause)
	return pause
}

// succeeded ends the host's pause and forgets its failures.
func (f *failingHosts) succeeded(host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h, ok := f.hosts[host]; ok {
		h.failures, h.until = 0, time.Time{}
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
	h := &hostFetches{slots: make(chan struct{}, keyFetchesPerHost)}
	f.hosts[host] = h
	return h
}

// forget drops an entry nobody uses and that remembers no failure.
// Called with mu held.
func (f *failingHosts) forget(host string, h *hostFetches) {
	if h.users == 0 && h.failures == 0 && f.hosts[host] == h {
		delete(f.hosts, host)
	}
}

// evict makes room: entries whose pause ended and that nobody uses go
// first; if none has, any unused one does (a host forgotten early is only
// fetched from once more). Called with mu held.
func (f *failingHosts) evict() {
	now := f.clock.Now()
	var spare string
	for host, h := range f.hosts {
		if h.users > 0 {
			continue
		}
		if !h.until.After(now) {
			delete(f.hosts, host)
			return
		}
		spare = host
	}
	if spare != "" {
		delete(f.hosts, spare)
	}
}
