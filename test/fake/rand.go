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

// IDs hands out "<prefix>-000001", "<prefix>-000002", ...: unique, and
// ordered like the UUIDv7s of production.
type IDs struct {
	prefix string // "id" when empty
	n      atomic.Int64
}

// NewIDs returns a sequence with the given prefix.
func NewIDs(prefix string) *IDs { return &IDs{prefix: prefix} }

// NewID implements ports.IDs.
func (g *IDs) NewID() string {
	prefix := g.prefix
	if prefix == "" {
		prefix = "id"
	}
	return fmt.Sprintf("%s-%06d", prefix, g.n.Add(1))
}
