package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// completer writes the engine's results in batches, as River's batch
// completer does: a delivery hands its result over and its worker slot is
// free at once; the completer gathers results for up to FlushEvery (less
// when FlushMax are waiting, or when nothing is delivering or leasing, so
// nothing more would come), then records the batch's breaker changes and
// settles the batch with one JobStore.Settle. A job's host slot in the
// store comes back with its settlement.
//
// A crash (kill -9) loses the results not yet written; their jobs are still
// leased and the reaper requeues them when their lease ends, so they are
// delivered again. The dispatcher starts a delivery only while the
// deliveries running and the results unwritten are fewer than Workers +
// Waits + FlushMax (admit), so that is the most a kill -9 re-delivers
// however far the store falls behind. Nothing is lost. At shutdown, Run stops the completer only after every delivery
// has handed its result over, and stop writes them all.
type completer struct {
	e      *Engine
	wakeCh chan struct{} // buffered 1, coalescing: results came, or the dispatcher went idle

	mu       sync.Mutex
	pending  []result
	flushing int // results of the batch being written
	stopping bool
}

func newCompleter(e *Engine) *completer {
	return &completer{e: e, wakeCh: make(chan struct{}, 1)}
}

// add queues one result.
func (c *completer) add(r result) {
	c.mu.Lock()
	c.pending = append(c.pending, r)
	c.mu.Unlock()
	c.kick()
}

func (c *completer) kick() { signal(c.wakeCh) }

// stop makes run write everything pending and return.
func (c *completer) stop() {
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	c.kick()
}

// unwritten is how many results are not yet written: waiting, or in the
// batch being written (which may or may not have committed).
func (c *completer) unwritten() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) + c.flushing
}

func (c *completer) state() (pending int, stopping bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending), c.stopping
}

// run is the completer's loop; it returns after stop, with nothing left.
func (c *completer) run() {
	for {
		n, stopping := c.state()
		if n == 0 {
			if stopping {
				c.flush(nil, true) // the successes still waiting to be written
				return
			}
			<-c.wakeCh
			continue
		}
		c.gather()
		c.mu.Lock()
		take := min(len(c.pending), c.e.cfg.FlushMax)
		batch := make([]result, take)
		copy(batch, c.pending)
		c.pending = append(c.pending[:0], c.pending[take:]...)
		c.flushing = take
		final := c.stopping && len(c.pending) == 0
		c.mu.Unlock()
		c.flush(batch, final)
		c.mu.Lock()
		c.flushing = 0
		c.mu.Unlock()
		signal(c.e.flushed)
	}
}

// gather waits until a batch is worth writing: FlushMax results, or
// FlushEvery since the first of them, or shutdown, or the dispatcher idle:
// it found nothing runnable, perhaps because the hosts' slots are held by
// these very results, so waiting for more would only hold them longer.
func (c *completer) gather() {
	window := time.NewTimer(c.e.cfg.FlushEvery) // wall clock: see Engine
	defer window.Stop()
	for {
		n, stopping := c.state()
		if n >= c.e.cfg.FlushMax || stopping || c.e.idle.Load() {
			return
		}
		select {
		case <-c.wakeCh:
		case <-window.C:
			return
		}
	}
}

// flush writes one batch: the breaker changes first (a quarantine it opens
// defers the batch's own retries of that host), then the settlements. final
// is the last flush before Run returns: every success still waiting is
// written.
func (c *completer) flush(batch []result, final bool) {
	e := c.e
	started := time.Now()
	// A decided result is worth recording even while shutting down.
	ctx := context.Background()
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	e.recordBreakers(bctx, batch, final)
	e.holdFailedHosts(bctx, batch)
	cancel()
	if len(batch) == 0 {
		return
	}
	e.settle(ctx, batch)
	e.obs.Flushed(time.Since(started), len(batch))
}

// settle writes the batch's settlements, retrying while the store is down
// for as long as each job's lease holds (after that the reaper requeues the
// job anyway). A lost lease means someone else holds the job now: its
// result is dropped, which is what fencing is for; the others are written.
func (e *Engine) settle(ctx context.Context, batch []result) {
	backoff := 50 * time.Millisecond
	for len(batch) > 0 {
		sts := make([]ports.Settlement, len(batch))
		for i, r := range batch {
			sts[i] = r.st
		}
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		lost, err := e.jobs.Settle(c, sts)
		cancel()
		if err == nil {
			for i, r := range batch {
				e.settled(r, lost[i])
			}
			return
		}
		if errors.Is(err, domain.ErrInvalidInput) {
			e.log.Error("the store refused a batch of results as invalid; their jobs wait for the reaper", "results", len(batch), "err", err)
			return
		}
		now := e.clock.Now()
		keep := batch[:0]
		for _, r := range batch {
			if now.Add(backoff).Before(r.job.LeaseUntil) {
				keep = append(keep, r)
				continue
			}
			r.log(e).Error("could not record the job's result before its lease ends; the reaper will requeue it", "err", err)
		}
		batch = keep
		if len(batch) == 0 {
			return
		}
		e.log.Warn("store refused the job's result; retrying", "results", len(batch), "err", err, "backoff", backoff)
		<-e.clock.After(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// settled logs one written (or lost) result and tells the observer.
func (e *Engine) settled(r result, lost error) {
	switch {
	case lost != nil:
		r.log(e).Warn("lease lost before the result was recorded; another worker holds the job")
		return
	case r.st.State == domain.JobDead:
		r.log(e).Warn("job dead")
	case e.debug:
		r.log(e).Debug("job settled")
	}
	if r.report {
		e.obs.Settled(r.st.State)
	}
}
