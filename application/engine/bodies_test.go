package engine_test

import (
	"strings"
	"testing"

	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
)

// A job whose activity body the store no longer has is dead at once, its
// last error naming the body, and nothing is sent: never a crash, never an
// empty request to a remote inbox.
func TestEngineKillsAJobWhoseBodyIsMissing(t *testing.T) {
	t.Parallel()
	b := setup(t, engine.Config{}, status(202))
	b.start()
	missing := domain.BodyOf([]byte("never stored"))
	j := b.job("orphan", "a.example")
	j.Payload, j.BodyID = nil, missing
	ok := b.job("ok", "b.example")
	b.enqueue(j, ok)
	got := b.waitState("orphan", domain.JobDead)
	if !strings.Contains(got.LastError, missing) || !strings.Contains(got.LastError, "missing") || got.Attempts != 0 {
		t.Fatalf("orphan job %+v", got)
	}
	b.waitState("ok", domain.JobSucceeded)
	for _, c := range b.deliverer.Calls() {
		if len(c.Payload) == 0 {
			t.Fatalf("a delivery with no body was sent to %s", c.Inbox)
		}
	}
	if n := len(b.deliverer.Calls()); n != 1 {
		t.Fatalf("%d deliveries, want 1 (the job with a body)", n)
	}
}
