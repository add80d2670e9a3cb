package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// EnqueueBatch is how many jobs go to the store in one call: large enough
// that a 10,000-inbox fan-out is ten calls, small enough to keep each
// statement and transaction short.
const EnqueueBatch = 1000

// EnqueueHandler puts deliveries in the queue and wakes the workers.
type EnqueueHandler struct {
	jobs  ports.JobStore
	waker Waker
}

// NewEnqueueHandler enqueues into jobs and tells waker (may be nil).
func NewEnqueueHandler(jobs ports.JobStore, waker Waker) EnqueueHandler {
	return EnqueueHandler{jobs: jobs, waker: waker}
}

// EnqueueResult says how many deliveries were new and how many were
// already queued (same activity to the same inbox).
type EnqueueResult struct {
	Queued        int
	AlreadyQueued int
}

// Handle enqueues in batches of EnqueueBatch and wakes idle workers once.
func (h EnqueueHandler) Handle(ctx context.Context, jobs []domain.Job) (EnqueueResult, error) {
	var r EnqueueResult
	for start := 0; start < len(jobs); start += EnqueueBatch {
		batch := jobs[start:min(start+EnqueueBatch, len(jobs))]
		n, err := h.jobs.Enqueue(ctx, batch)
		r.Queued += n
		if err != nil {
			if r.Queued > 0 && h.waker != nil {
				h.waker.Wake()
			}
			return r, fmt.Errorf("enqueue: %w", err)
		}
		r.AlreadyQueued += len(batch) - n
	}
	if r.Queued > 0 && h.waker != nil {
		h.waker.Wake()
	}
	return r, nil
}
