package engine

import "time"

// What the black-box tests need of the engine's private tuning.

// WithFlushEvery returns c with the completer's gathering window set to d:
// the tests that count the writes make it long, so that only the other
// triggers write.
func WithFlushEvery(c Config, d time.Duration) Config {
	c.flushEvery = d
	return c
}

// Budgets are the engine's derived budgets: the waits beside the slots,
// the most results a write carries, the jobs leased ahead.
func (e *Engine) Budgets() (waits, flushMax, leaseAhead int) {
	return e.cfg.waits, e.cfg.flushMax, e.cfg.leaseAhead
}
