package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/fake"
)

type countingKeys struct {
	calls atomic.Int64
	err   error
}

func (k *countingKeys) SigningKey(ctx context.Context, id string) (string, error) {
	k.calls.Add(1)
	if k.err != nil {
		return "", k.err
	}
	return "pem-of-" + id, nil
}

func TestCachedKeys(t *testing.T) {
	t.Parallel()
	clock := fake.NewClock(t0)
	next := &countingKeys{}
	c := engine.NewCachedKeys(next, clock)
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		if k, err := c.SigningKey(ctx, "a1"); err != nil || k != "pem-of-a1" {
			t.Fatalf("%q %v", k, err)
		}
	}
	if n := next.calls.Load(); n != 1 {
		t.Fatalf("100 lookups within the TTL read the store %d times", n)
	}
	clock.Advance(engine.KeyCacheTTL)
	_, _ = c.SigningKey(ctx, "a1")
	if n := next.calls.Load(); n != 2 {
		t.Fatalf("a stale key was not read again (%d reads)", n)
	}
	gone := &countingKeys{err: domain.ErrNotFound}
	g := engine.NewCachedKeys(gone, clock)
	for i := 0; i < 3; i++ {
		if _, err := g.SigningKey(ctx, "x"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if gone.calls.Load() != 3 {
		t.Fatal("a miss was cached")
	}
}
