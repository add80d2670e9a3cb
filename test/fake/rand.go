package fake

import (
	"fmt"
	"sync/atomic"

	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.Random = Random(0)
	_ ports.IDs    = (*IDs)(nil)
)

// Random always returns the same sample, so retry delays are exact.
type Random float64

// Float64 implements ports.Random.
func (r Random) Float64() float64 { return float64(r) }

// IDs hands out UUIDs, as production does (job ids must be one:
// domain.JobIDBytes): the first four bytes spell the prefix (padded with
// zeros), the last six count from 1, so "job" gives
// 6a6f6200-0000-7000-8000-000000000001, then ...002: unique, and ordered
// like the UUIDv7s of production.
type IDs struct {
	prefix string // "id" when empty
	n      atomic.Int64
}

// NewIDs returns a sequence with the given prefix (its first four bytes).
func NewIDs(prefix string) *IDs { return &IDs{prefix: prefix} }

// NewID implements ports.IDs.
func (g *IDs) NewID() string {
	prefix := g.prefix
	if prefix == "" {
		prefix = "id"
	}
	var head [4]byte
	copy(head[:], prefix)
	return fmt.Sprintf("%x-0000-7000-8000-%012x", head, g.n.Add(1))
}
