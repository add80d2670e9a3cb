package postgres

import (
	"sync"

	"github.com/heraldfed/herald/domain"
)

// Bounds of bodyCache: a fan-out has one body, a busy queue a few dozen
// posts' worth in flight at once.
const (
	bodyCacheMax   = 64
	bodyCacheBytes = 4 << 20
)

// bodyCache keeps the bodies that leases read lately, by content address.
// An id always names the same bytes (domain.BodyOf is a SHA-256 of them), so
// a cached body is never stale; a body missing from the store is never
// cached, so a job whose body is gone still comes out with an empty payload.
// Bounded in count and bytes, the oldest out first.
type bodyCache struct {
	mu    sync.Mutex
	m     map[string][]byte
	order []string // insertion order, for eviction
	bytes int
}

func newBodyCache() *bodyCache { return &bodyCache{m: map[string][]byte{}} }

// fill sets the payloads of the jobs whose bodies it holds and returns the
// others that refer to a body (in order).
func (c *bodyCache) fill(jobs []domain.Job) (missing []*domain.Job) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range jobs {
		j := &jobs[i]
		if j.BodyID == "" {
			continue
		}
		if b, ok := c.m[j.BodyID]; ok {
			j.Payload = b
			continue
		}
		missing = append(missing, j)
	}
	return missing
}

// put keeps one body; one larger than the whole budget is not kept.
func (c *bodyCache) put(id string, body []byte) {
	if len(body) > bodyCacheBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; ok {
		return
	}
	for len(c.order) > 0 && (len(c.order) >= bodyCacheMax || c.bytes+len(body) > bodyCacheBytes) {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.m[old])
		delete(c.m, old)
	}
	c.m[id] = body
	c.order = append(c.order, id)
	c.bytes += len(body)
}
