package fake

import (
	"context"
	"sync"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.Deliverer = (*Deliverer)(nil)

// Deliverer records deliveries and answers with what Respond says (202 when
// nil). It tracks how many deliveries run at once, in all and per host, so
// tests can prove the concurrency caps.
type Deliverer struct {
	// Respond decides the outcome; it may block (on ctx) to model a slow
	// server. It is called without the Deliverer's lock held.
	Respond func(ctx context.Context, d ports.Delivery) domain.Outcome

	mu          sync.Mutex
	calls       []ports.Delivery
	inFlight    int
	maxInFlight int
	hostNow     map[string]int
	hostMax     map[string]int
	changed     chan struct{}
}

// Deliver implements ports.Deliverer.
func (f *Deliverer) Deliver(ctx context.Context, d ports.Delivery) domain.Outcome {
	host, _ := domain.InboxHost(d.Inbox)
	f.mu.Lock()
	f.init()
	f.calls = append(f.calls, d)
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.hostNow[host]++
	f.hostMax[host] = max(f.hostMax[host], f.hostNow[host])
	f.signal()
	respond := f.Respond
	f.mu.Unlock()

	o := domain.Outcome{Kind: domain.OutcomeDelivered, Status: 202}
	if respond != nil {
		o = respond(ctx, d)
	}

	f.mu.Lock()
	f.inFlight--
	f.hostNow[host]--
	f.signal()
	f.mu.Unlock()
	return o
}

func (f *Deliverer) init() {
	if f.hostNow == nil {
		f.hostNow = make(map[string]int)
		f.hostMax = make(map[string]int)
		f.changed = make(chan struct{})
	}
}

func (f *Deliverer) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Calls returns a copy of every delivery started so far.
func (f *Deliverer) Calls() []ports.Delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ports.Delivery(nil), f.calls...)
}

// CallsTo counts deliveries started to one inbox.
func (f *Deliverer) CallsTo(inbox string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.Inbox == inbox {
			n++
		}
	}
	return n
}

// InFlight is the number of deliveries running now.
func (f *Deliverer) InFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inFlight
}

// MaxInFlight is the most deliveries that ran at once, and per host.
func (f *Deliverer) MaxInFlight() (total int, perHost map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	perHost = make(map[string]int, len(f.hostMax))
	for h, n := range f.hostMax {
		perHost[h] = n
	}
	return f.maxInFlight, perHost
}

// WaitFor blocks until cond (called under the lock with the number of calls
// started and in flight) holds, or ctx ends; it reports whether cond held.
func (f *Deliverer) WaitFor(ctx context.Context, cond func(calls, inFlight int) bool) bool {
	for {
		f.mu.Lock()
		f.init()
		ok := cond(len(f.calls), f.inFlight)
		ch := f.changed
		f.mu.Unlock()
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
