package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// completer writes what the deliveries decided. It is what the dispatcher
// and the deliveries see of it: they hand results over, and the dispatcher
// reads how many are not yet written (admission caps that backlog: see
// slots.behind), hears when a batch was written (host slots came back) and
// says when it goes idle (nothing more is coming soon: write now).
type completer interface {
	add(r result)
	unwritten() int
	flushed() <-chan struct{}
	setIdle(idle bool)
}

// outcomes is what the completer tells the host policy of a batch before
// it settles it (hostPolicy.record): the breaker changes and the holds.
type outcomes interface {
	record(ctx context.Context, batch []result, final bool)
}

// batchCompleter writes the results in batches, as River's batch completer
// does: a delivery hands its result over and its worker slot is free at
// once; the completer gathers results for up to flushEvery (less when
// flushMax are waiting, or when the dispatcher is idle, so nothing more
// would come), then has the host policy record the batch's outcomes and
// settles the batch with one JobStore.Settle. A job's host slot in the
// store comes back with its settlement.
//
// A crash (kill -9) loses the results not yet written; their jobs are still
// leased and the reaper requeues them when their lease ends, so they are
// delivered again. The dispatcher starts a delivery only while the
// deliveries running and the results unwritten are fewer than Workers +
// waits + flushMax (admit), so that is the most a kill -9 re-delivers
// however far the store falls behind. Nothing is lost. At shutdown, Run
// stops the completer only after every delivery has handed its result
// over, and stop writes them all.
type batchCompleter struct {
	completerDeps
	every time.Duration // flushEvery
	most  int           // flushMax

	kick chan struct{} // buffered 1, coalescing: results came, or the dispatcher went idle
	done chan struct{} // buffered 1, coalescing: a batch was written
	// idle is set while the dispatcher waits because nothing was runnable
	// (or has stopped): the results held back may be what keeps hosts at
	// their cap, so they are written at once.
	idle atomic.Bool

	mu       sync.Mutex
	pending  []result
	flushing int // results of the batch being written
	stopping bool
}

// completerDeps are what the completer uses and does not own.
type completerDeps struct {
	jobs  ports.JobStore
	hosts outcomes
	clock ports.Clock
	obs   ports.EngineObserver
	log   *slog.Logger
	debug bool // log every settled job
}

var _ completer = (*batchCompleter)(nil)

func newBatchCompleter(deps completerDeps, cfg Config) *batchCompleter {
	return &batchCompleter{completerDeps: deps, every: cfg.flushEvery, most: cfg.flushMax,
		kick: make(chan struct{}, 1), done: make(chan struct{}, 1)}
}

func (c *batchCompleter) add(r result) {
	c.mu.Lock()
	c.pending = append(c.pending, r)
	c.mu.Unlock()
	signal(c.kick)
}

// unwritten is how many results are not yet written: waiting, or in the
// batch being written (which may or may not have committed).
func (c *batchCompleter) unwritten() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) + c.flushing
}

func (c *batchCompleter) flushed() <-chan struct{} { return c.done }

func (c *batchCompleter) setIdle(idle bool) {
	c.idle.Store(idle)
	if idle {
		signal(c.kick)
	}
}

// stop makes run write everything pending and return.
func (c *batchCompleter) stop() {
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	signal(c.kick)
}

func (c *batchCompleter) state() (pending int, stopping bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending), c.stopping
}

// run is the completer's loop; it returns after stop, with nothing left.
func (c *batchCompleter) run() {
	for {
		n, stopping := c.state()
		if n == 0 {
			if stopping {
				c.flush(nil, true) // the successes still waiting to be written
				return
			}
			<-c.kick
			continue
		}
		c.gather()
		batch, final := c.take()
		c.flush(batch, final)
		c.mu.Lock()
		c.flushing = 0
		c.mu.Unlock()
		signal(c.done)
	}
}

// take moves up to flushMax results from pending to the batch being
// written; final says it is the last batch before run returns.
func (c *batchCompleter) take() (batch []result, final bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.pending), c.most)
	batch = make([]result, n)
	copy(batch, c.pending)
	c.pending = append(c.pending[:0], c.pending[n:]...)
	c.flushing = n
	return batch, c.stopping && len(c.pending) == 0
}

// gather waits until a batch is worth writing: flushMax results, or
// flushEvery since the first of them, or shutdown, or the dispatcher idle:
// it found nothing runnable, perhaps because the hosts' slots are held by
// these very results, so waiting for more would only hold them longer.
func (c *batchCompleter) gather() {
	window := time.NewTimer(c.every) // wall clock: see Engine
	defer window.Stop()
	for {
		n, stopping := c.state()
		if n >= c.most || stopping || c.idle.Load() {
			return
		}
		select {
		case <-c.kick:
		case <-window.C:
			return
		}
	}
}

// flush writes one batch: the host policy's record first (a quarantine it
// opens defers the batch's own retries of that host), then the
// settlements. final is the last flush before Run returns: every success
// still waiting is written.
func (c *batchCompleter) flush(batch []result, final bool) {
	started := time.Now()
	// A decided result is worth recording even while shutting down.
	ctx := context.Background()
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c.hosts.record(hctx, batch, final)
	cancel()
	if len(batch) == 0 {
		return
	}
	c.settle(ctx, batch)
	c.obs.Flushed(time.Since(started), len(batch))
}

// settle writes the batch's settlements, retrying while the store is down
// for as long as each job's lease holds (after that the reaper requeues the
// job anyway). A lost lease means someone else holds the job now: its
// result is dropped, which is what fencing is for; the others are written.
func (c *batchCompleter) settle(ctx context.Context, batch []result) {
	backoff := 50 * time.Millisecond
	for len(batch) > 0 {
		sts := make([]ports.Settlement, len(batch))
		for i, r := range batch {
			sts[i] = r.st
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		lost, err := c.jobs.Settle(sctx, sts)
		cancel()
		if err == nil {
			for i, r := range batch {
				c.settled(r, lost[i])
			}
			return
		}
		if errors.Is(err, domain.ErrInvalidInput) {
			c.log.Error("the store refused a batch of results as invalid; their jobs wait for the reaper", "results", len(batch), "err", err)
			return
		}
		now := c.clock.Now()
		keep := batch[:0]
		for _, r := range batch {
			if now.Add(backoff).Before(r.job.LeaseUntil) {
				keep = append(keep, r)
				continue
			}
			r.logger(c.log).Error("could not record the job's result before its lease ends; the reaper will requeue it", "err", err)
		}
		batch = keep
		if len(batch) == 0 {
			return
		}
		c.log.Warn("store refused the job's result; retrying", "results", len(batch), "err", err, "backoff", backoff)
		<-c.clock.After(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// settled logs one written (or lost) result and tells the observer.
func (c *batchCompleter) settled(r result, lost error) {
	switch {
	case lost != nil:
		r.logger(c.log).Warn("lease lost before the result was recorded; another worker holds the job")
		return
	case r.st.State == domain.JobDead:
		r.logger(c.log).Warn("job dead")
	case c.debug:
		r.logger(c.log).Debug("job settled")
	}
	if r.report {
		c.obs.Settled(r.st.State)
	}
}
