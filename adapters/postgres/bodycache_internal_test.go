package postgres

import (
	"fmt"
	"testing"

	"github.com/heraldfed/herald/domain"
)

// The lease's body cache fills what it holds, names what it does not, and
// stays within its bounds in count and in bytes, oldest out first.
func TestBodyCacheBounds(t *testing.T) {
	t.Parallel()
	c := newBodyCache()
	body := func(i, size int) ([]byte, string) {
		b := []byte(fmt.Sprintf("%0*d", size, i))
		return b, domain.BodyOf(b)
	}
	for i := range bodyCacheMax + 10 {
		b, id := body(i, 100)
		c.put(id, b)
	}
	if len(c.m) != bodyCacheMax || len(c.order) != bodyCacheMax {
		t.Fatalf("%d bodies kept, want at most %d", len(c.m), bodyCacheMax)
	}
	_, oldest := body(0, 100)
	b, newest := body(bodyCacheMax+9, 100)
	jobs := []domain.Job{{ID: "a", BodyID: oldest}, {ID: "b", BodyID: newest}, {ID: "c"}}
	missing := c.fill(jobs)
	if len(missing) != 1 || missing[0].ID != "a" {
		t.Fatalf("missing %v, want only the evicted oldest", missing)
	}
	if string(jobs[1].Payload) != string(b) || jobs[0].Payload != nil || jobs[2].Payload != nil {
		t.Fatalf("payloads %q %q %q", jobs[0].Payload, jobs[1].Payload, jobs[2].Payload)
	}
	big := make([]byte, bodyCacheBytes/3)
	for i := range 4 {
		big[0] = byte(i)
		c.put(domain.BodyOf(big), append([]byte(nil), big...))
	}
	if c.bytes > bodyCacheBytes || len(c.m) > 3 {
		t.Fatalf("%d bytes in %d bodies, more than the %d-byte budget", c.bytes, len(c.m), bodyCacheBytes)
	}
	c.put("huge", make([]byte, bodyCacheBytes+1))
	if _, ok := c.m["huge"]; ok {
		t.Fatal("a body larger than the budget was kept")
	}
}
