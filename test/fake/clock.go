package fake

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/heraldfed/herald/ports"
)

var _ ports.Clock = (*Clock)(nil)

// Clock is a manual clock: time moves only when Advance or Set is called,
// and then fires every After whose deadline has come, in deadline order.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	changed chan struct{} // closed and replaced whenever waiters change
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock {
	return &Clock{now: t.UTC(), changed: make(chan struct{})}
}

// Now implements ports.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements ports.Clock.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	c.notify()
	return ch
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t (never backwards) and fires due timers.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Before(c.now) {
		return
	}
	c.now = t
	sort.SliceStable(c.waiters, func(i, j int) bool { return c.waiters[i].at.Before(c.waiters[j].at) })
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(t) {
			w.ch <- w.at
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
	c.notify()
}

// Waiters is the number of pending After calls.
func (c *Clock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// BlockUntil waits until at least n After calls are pending, which tells a
// test that the goroutines it drives have gone back to sleep. It returns
// false if ctx ends first.
func (c *Clock) BlockUntil(ctx context.Context, n int) bool {
	for {
		c.mu.Lock()
		ok := len(c.waiters) >= n
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// NextDeadline is the earliest pending deadline, or zero if none.
func (c *Clock) NextDeadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for _, w := range c.waiters {
		if first.IsZero() || w.at.Before(first) {
			first = w.at
		}
	}
	return first
}

func (c *Clock) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}
