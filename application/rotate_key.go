package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// KeyRotations is told when a local actor's key pair was replaced, so the
// signing keys this process caches drop the old one at once (the engine
// is one).
type KeyRotations interface {
	KeyRotated(actorID string)
}

// RotateKey asks that a persona or group of the account get a new key
// pair (after a leak, or as routine).
type RotateKey struct {
	UserID string
	Kind   domain.NameKind // persona or group
	Name   string
}

// KeyRotated says what was done.
type KeyRotated struct {
	Actor string // actor URI
	KeyID string // unchanged: the new key is published under the same id
	// Queued counts the jobs of the Update sent to the followers.
	Queued int
}

// RotateKeyHandler replaces an actor's key pair and sends an Update{Person}
// (Update{Group}) carrying the new public key to its followers through the
// streamed fan-out, signed with the old key.
//
// The key id stays "<actor>#main-key", and the new key is published and
// signs every other delivery at once. Followers' servers learn it from the
// Update, which they can verify only with the key they hold, the old one:
// GoToSocial never refetches a key whose signature fails, and refuses a
// changed key it finds on a plain refetch; it takes one from an Update
// its sender signed, as Mastodon does. A delivery signed with the new key
// that a server refuses (401, 403) before its Update arrived is retried on
// the curve for engine.KeyRotationGrace rather than ended (engine/deliver.go).
//
// Every delivery reads its key when it is sent, never when it was queued,
// so the jobs still queued go out signed with the new key. This process
// forgets its cached key at once (KeyRotations); another process sharing
// the store may sign with the old key until its cache expires
// (engine.KeyCacheTTL): a delivery a server then refuses is sent again at once,
// signed with the key read afresh, without spending an attempt. So a
// rotation costs no delivery and needs no store read per delivery; a
// versioned key id would not spare that window (the other process's cache
// would hold the old id with the old key), and reading the key for every
// delivery would undo the cache that lets a fan-out read it once.
type RotateKeyHandler struct{ core *fedCore }

// Handle rotates one persona or group of the user. An unknown name is
// domain.ErrNotFound, another account's actor domain.ErrForbidden.
func (h RotateKeyHandler) Handle(ctx context.Context, cmd RotateKey) (KeyRotated, error) {
	a, err := h.core.ownActor(ctx, cmd.UserID, cmd.Kind, cmd.Name)
	if err != nil {
		return KeyRotated{}, err
	}
	return h.rotate(ctx, a)
}

// Named rotates the keys of the actors named (personas, groups or the
// instance actor), as the operator asks after a leak; empty names: every
// persona and every group. The instance actor is rotated only when named:
// it has no followers to send an Update to, so a server that never
// refetches a key (GoToSocial) refuses its signed fetches until its
// operator expires our keys. It goes on past a failure and returns what
// it rotated with the failures joined.
func (h RotateKeyHandler) Named(ctx context.Context, names []string) ([]KeyRotated, error) {
	d := h.core.deps
	every := len(names) == 0
	if every {
		for _, k := range []domain.NameKind{domain.NameKindPersona, domain.NameKindGroup} {
			rns, err := d.Names.List(ctx, k)
			if err != nil {
				return nil, err
			}
			for _, rn := range rns {
				names = append(names, rn.Name)
			}
		}
	}
	var out []KeyRotated
	var errs []error
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return out, errors.Join(append(errs, err)...)
		}
		a, err := (LocalActorsHandler{core: h.core}).ByAccount(ctx, n)
		if every && notFound(err) {
			continue // a name reserved for an actor not (or no longer) there
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", clip(n), err))
			continue
		}
		r, err := h.rotate(ctx, a)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", a.Name, err))
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

func (h RotateKeyHandler) rotate(ctx context.Context, a LocalActor) (KeyRotated, error) {
	d := h.core.deps
	if d.Keys == nil {
		return KeyRotated{}, fmt.Errorf("%w: no key generator", domain.ErrUnavailable)
	}
	keys, err := d.Keys.GenerateKeyPair()
	if err != nil {
		return KeyRotated{}, fmt.Errorf("key pair: %w", err)
	}
	if a.Kind == domain.NameKindGroup {
		err = d.Actors.SetGroupKeys(ctx, a.ID, keys, d.Clock.Now())
	} else {
		err = d.Actors.SetAvatarKeys(ctx, a.ID, keys, d.Clock.Now())
	}
	if err != nil {
		return KeyRotated{}, err
	}
	if d.KeyRotations != nil {
		d.KeyRotations.KeyRotated(a.ID)
	}
	a.PublicKeyPEM = keys.PublicPEM
	out := KeyRotated{Actor: a.URI, KeyID: a.KeyID(d.URLs)}
	d.Log.InfoContext(ctx, "actor key rotated", "actor", a.URI)
	// The Update carries the new key and is signed with the old one: the
	// followers' servers know only the old key until they read it.
	announce := a
	announce.ID = domain.PreviousKeySigner(a.ID)
	res, err := h.core.sendUpdate(ctx, announce)
	out.Queued = res.Queued
	if err != nil {
		return out, fmt.Errorf("update of %s to its followers: %w", a.URI, err)
	}
	return out, nil
}
