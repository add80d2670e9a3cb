package application

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// identity is what the sign-up, persona and group use cases share: the
// reserve-first rule of SPEC §3.
type identity struct {
	deps   Deps
	policy domain.NamePolicy
}

// claim reserves name for ownerID and then runs save. If save fails the
// reservation is released, so a failed sign-up never leaves a name taken.
// Of two simultaneous claims the store's unique index lets exactly one win;
// the other gets domain.ErrNameTaken before anything was saved.
func (i identity) claim(ctx context.Context, name string, kind domain.NameKind, ownerID string, save func() error) error {
	rn, err := domain.NewReservedName(name, kind, ownerID, i.deps.Clock.Now())
	if err != nil {
		return err
	}
	if err := i.deps.Names.Reserve(ctx, rn); err != nil {
		return err
	}
	if err := save(); err != nil {
		// A fresh context: the caller's may be what failed.
		if rerr := i.deps.Names.Release(context.WithoutCancel(ctx), rn.Name, ownerID); rerr != nil {
			i.deps.Log.Error("could not release the reservation of a failed sign-up", "name", rn.Name, "err", rerr)
			return errors.Join(err, rerr)
		}
		return err
	}
	return nil
}

// newAvatar checks the name, makes a key pair and claims the name for a new
// persona of rootUserID, saving it with save.
func (i identity) newAvatar(ctx context.Context, rootUserID, requested string, kind domain.NameKind, save func(domain.Avatar) error) (domain.Avatar, error) {
	name, err := i.policy.CheckUserName(requested)
	if err != nil {
		return domain.Avatar{}, err
	}
	keys, err := i.deps.Keys.GenerateKeyPair()
	if err != nil {
		return domain.Avatar{}, fmt.Errorf("key pair: %w", err)
	}
	a, err := domain.NewAvatar(i.deps.IDs.NewID(), rootUserID, name, keys, i.deps.Clock.Now())
	if err != nil {
		return domain.Avatar{}, err
	}
	if err := i.claim(ctx, name, kind, a.ID, func() error { return save(a) }); err != nil {
		return domain.Avatar{}, err
	}
	return a, nil
}

// issueToken creates a bearer token for the user and stores its hash: the
// user signed in (or up), which makes its personas active.
func (i identity) issueToken(ctx context.Context, userID string) (string, error) {
	tok := rand.Text()
	err := i.deps.Tokens.CreateToken(ctx, domain.Token{Hash: domain.HashToken(tok), UserID: userID, CreatedAt: i.deps.Clock.Now()})
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	touchUser(ctx, i.deps, userID)
	return tok, nil
}

// Password rules: Mastodon's 8 characters at least; bcrypt reads 72 bytes
// at most, and a longer password would silently be cut.
const (
	minPassword = 8
	maxPassword = 72
)

func checkPassword(pw string) error {
	switch {
	case len(pw) < minPassword:
		return fmt.Errorf("%w: password shorter than %d characters", domain.ErrInvalidInput, minPassword)
	case len(pw) > maxPassword:
		return fmt.Errorf("%w: password longer than %d bytes", domain.ErrInvalidInput, maxPassword)
	}
	return nil
}
