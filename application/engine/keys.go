package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// SigningKeys finds the private key a local actor signs its deliveries with.
type SigningKeys interface {
	// SigningKey returns the PEM private key of the actor, or
	// domain.ErrNotFound if the actor no longer exists.
	SigningKey(ctx context.Context, actorID string) (string, error)
}

// ActorKeys reads signing keys from the actor store: personas (and the
// instance actor) first, then groups.
type ActorKeys struct {
	Actors ports.ActorStore
}

// SigningKey implements SigningKeys. A sender named by
// domain.PreviousKeySigner signs with the actor's key pair before its last
// rotation (its current one if it was never rotated).
func (k ActorKeys) SigningKey(ctx context.Context, senderID string) (string, error) {
	cur, prev, _, err := k.keys(ctx, senderID)
	if err != nil {
		return "", err
	}
	if _, previous := domain.SignerOf(senderID); previous && prev.Valid() {
		return prev.PrivatePEM, nil
	}
	return cur.PrivatePEM, nil
}

// RotatedAt is when the sender's key was last rotated (zero: never).
func (k ActorKeys) RotatedAt(ctx context.Context, senderID string) (time.Time, error) {
	_, _, at, err := k.keys(ctx, senderID)
	return at, err
}

// keys reads the actor's key pairs: personas (and the instance actor)
// first, then groups.
func (k ActorKeys) keys(ctx context.Context, senderID string) (cur, prev domain.KeyPair, rotated time.Time, err error) {
	actorID, _ := domain.SignerOf(senderID)
	a, err := k.Actors.AvatarByID(ctx, actorID)
	if err == nil {
		return a.Keys, a.PreviousKeys, a.KeysRotatedAt, nil
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return domain.KeyPair{}, domain.KeyPair{}, time.Time{}, err
	}
	g, err := k.Actors.GroupByID(ctx, actorID)
	if err != nil {
		return domain.KeyPair{}, domain.KeyPair{}, time.Time{}, fmt.Errorf("signing key of %s: %w", actorID, err)
	}
	return g.Keys, g.PreviousKeys, g.KeysRotatedAt, nil
}

// KeyCacheTTL is how long CachedKeys trusts a key it read: long enough
// that a fan-out reads its sender's key once rather than once per inbox,
// short enough that a deleted actor stops signing within a minute.
const KeyCacheTTL = time.Minute

// CachedKeys remembers the keys another SigningKeys returned, per actor,
// for KeyCacheTTL. Misses (the actor is gone) are not cached.
type CachedKeys struct {
	next  SigningKeys
	clock ports.Clock
	mu    sync.Mutex
	keys  map[string]cachedKey
}

type cachedKey struct {
	pem string
	at  time.Time
}

// NewCachedKeys caches next's answers on clock.
func NewCachedKeys(next SigningKeys, clock ports.Clock) *CachedKeys {
	return &CachedKeys{next: next, clock: clock, keys: make(map[string]cachedKey)}
}

// SigningKey implements SigningKeys.
func (c *CachedKeys) SigningKey(ctx context.Context, actorID string) (string, error) {
	now := c.clock.Now()
	c.mu.Lock()
	k, ok := c.keys[actorID]
	c.mu.Unlock()
	if ok && now.Sub(k.at) < KeyCacheTTL {
		return k.pem, nil
	}
	pem, err := c.next.SigningKey(ctx, actorID)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if len(c.keys) >= 10_000 { // bound: start afresh rather than grow without end
		clear(c.keys)
	}
	c.keys[actorID] = cachedKey{pem: pem, at: now}
	c.mu.Unlock()
	return pem, nil
}

// Forget drops the cached keys of actorID (its current and its previous
// pair): the actor's key was rotated in this process, which signs with the
// new one from now on.
func (c *CachedKeys) Forget(actorID string) {
	c.mu.Lock()
	delete(c.keys, actorID)
	delete(c.keys, domain.PreviousKeySigner(actorID))
	c.mu.Unlock()
}

// RotatedAt asks the store, past the cache (only refused deliveries ask).
func (c *CachedKeys) RotatedAt(ctx context.Context, senderID string) (time.Time, error) {
	if r, ok := c.next.(rotationTimes); ok {
		return r.RotatedAt(ctx, senderID)
	}
	return time.Time{}, nil
}

// rotationTimes says when a sender's key was last rotated (ActorKeys and
// CachedKeys).
type rotationTimes interface {
	RotatedAt(ctx context.Context, senderID string) (time.Time, error)
}

// Refresh reads the key of actorID from the store, past the cache, and
// caches it.
func (c *CachedKeys) Refresh(ctx context.Context, actorID string) (string, error) {
	c.Forget(actorID)
	return c.SigningKey(ctx, actorID)
}

// Refresh is SigningKey: ActorKeys caches nothing.
func (k ActorKeys) Refresh(ctx context.Context, actorID string) (string, error) {
	return k.SigningKey(ctx, actorID)
}

// keyRefresher is a SigningKeys that can read a key afresh (both above).
type keyRefresher interface {
	Refresh(ctx context.Context, actorID string) (string, error)
}

// KeyRotated implements KeyRotations: the engine's cached key of actorID
// goes, so this process signs its next delivery with the new key.
func (e *Engine) KeyRotated(actorID string) {
	if f, ok := e.keys.(interface{ Forget(string) }); ok {
		f.Forget(actorID)
	}
}
