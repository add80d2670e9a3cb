package engine

import "context"

// The first step of a delivery is its enqueue: a use case writes the jobs
// (application.EnqueueHandler, through ports.JobStore) and wakes the
// engine, which leases at once instead of at its next poll. This file is
// the engine's side of it.

// Wake tells the dispatcher that jobs were enqueued in this process
// (application.Waker). It never blocks.
func (e *Engine) Wake() { signal(e.dispatcher.wake) }

// listen wakes the dispatcher for every enqueue another process announces
// through the store (LISTEN/NOTIFY on PostgreSQL), until ctx ends.
func (e *Engine) listen(ctx context.Context) {
	ch := e.wakes.Wakeups(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
			e.Wake()
		}
	}
}
