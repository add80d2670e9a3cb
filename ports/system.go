package ports

import "time"

// Clock is injected wherever time matters so tests can drive it by hand.
type Clock interface {
	Now() time.Time
	// After behaves as time.After, on this clock.
	After(d time.Duration) <-chan time.Time
}

// Random is the source of jitter: Float64 returns a sample uniform in [0, 1).
type Random interface {
	Float64() float64
}

// IDs hands out new, globally unique identifiers (entity ids, lease tokens).
type IDs interface {
	NewID() string
}
