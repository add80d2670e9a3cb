package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// RejectRegistrationHandler turns a pending sign-up away: the account and
// its persona are deleted and the name is released, as a sign-up that
// failed half way is undone (SignUpHandler). Unlike a deleted persona's,
// the name is free again: a pending account never signed in, so it never
// posted, followed or published an actor that others could remember
// (Authenticate refuses it even with a token, so it made no group or
// other persona either).
type RejectRegistrationHandler struct{ deps ModeratorDeps }

// Rejected is what a rejection removed.
type Rejected struct {
	User domain.RootUser
	// Released are the names that are free again.
	Released []string
}

// Handle rejects the account userID: domain.ErrNotFound for an unknown id,
// domain.ErrInvalidInput for an account that is not awaiting approval.
// A rejection that fails half way leaves the account pending, so running
// it again finishes it.
func (h RejectRegistrationHandler) Handle(ctx context.Context, userID string) (Rejected, error) {
	d := h.deps
	u, err := pendingUser(ctx, d, userID)
	if err != nil {
		return Rejected{}, err
	}
	avatars, err := d.Actors.AvatarsOf(ctx, u.ID)
	if err != nil {
		return Rejected{}, fmt.Errorf("personas of %s: %w", u.UserName, err)
	}
	res := Rejected{User: u}
	for _, a := range avatars {
		// Follows a remote server may have asked of it while it waited.
		if _, err := d.Followers.RemoveActor(ctx, d.URLs.Persona(a.Name)); err != nil {
			return res, fmt.Errorf("follows of %s: %w", a.Name, err)
		}
		if err := d.Actors.DeleteAvatar(ctx, a.ID); err != nil && !errors.Is(err, domain.ErrNotFound) {
			return res, fmt.Errorf("delete persona %s: %w", a.Name, err)
		}
		if err := d.Names.Release(ctx, a.Name, a.ID); err != nil && !errors.Is(err, domain.ErrNotFound) {
			return res, fmt.Errorf("release %s: %w", a.Name, err)
		}
		res.Released = append(res.Released, a.Name)
	}
	if err := d.Users.DeleteUser(ctx, u.ID); err != nil {
		return res, fmt.Errorf("delete account %s: %w", u.UserName, err)
	}
	d.Log.InfoContext(ctx, "sign-up rejected", "user_id", u.ID, "name", u.UserName, "released", res.Released)
	return res, nil
}
