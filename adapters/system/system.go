// Package system adapts the real clock, randomness and id generation to the
// ports the core uses, so that everything else can be given fakes in tests.
package system

import (
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.Clock  = Clock{}
	_ ports.Random = Random{}
	_ ports.IDs    = IDs{}
)

// Clock is the wall clock.
type Clock struct{}

// Now implements ports.Clock.
func (Clock) Now() time.Time { return time.Now().UTC() }

// After implements ports.Clock.
func (Clock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Random draws from math/rand/v2's goroutine-safe global source, which is
// seeded from the OS; jitter needs no cryptographic strength.
type Random struct{}

// Float64 implements ports.Random.
func (Random) Float64() float64 { return rand.Float64() }

// IDs are UUIDv7: unique across processes, and ordered by creation time, so
// paging by id is paging by age and B-tree inserts stay at the right edge.
type IDs struct{}

// NewID implements ports.IDs.
func (IDs) NewID() string { return uuid.Must(uuid.NewV7()).String() }
