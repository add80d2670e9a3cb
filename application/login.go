package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// Login asks for a session with a user name and password.
type Login struct {
	UserName string
	Password string
}

// LoginHandler checks a password and issues a bearer token.
type LoginHandler struct{ deps Deps }

// dummyHash is compared when the user does not exist so that a wrong name
// and a wrong password take the same time (no user enumeration by timing).
const dummyHash = "$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z3ZbX5g0V4aZb9K3zQ6Yv1mG"

// Handle returns a session, or domain.ErrUnauthorized for any wrong
// credential without saying which part was wrong. An account awaiting the
// operator's approval gets ErrAwaitingApproval and no token, once its
// password is right (only its owner learns that it waits).
func (h LoginHandler) Handle(ctx context.Context, cmd Login) (Session, error) {
	name, err := domain.NormalizeName(cmd.UserName)
	if err != nil {
		_ = h.deps.Passwords.Verify(dummyHash, cmd.Password)
		return Session{}, domain.ErrUnauthorized
	}
	u, err := h.deps.Users.UserByName(ctx, name)
	if errors.Is(err, domain.ErrNotFound) {
		_ = h.deps.Passwords.Verify(dummyHash, cmd.Password)
		return Session{}, domain.ErrUnauthorized
	}
	if err != nil {
		return Session{}, err
	}
	if err := h.deps.Passwords.Verify(u.PasswordHash, cmd.Password); err != nil {
		return Session{}, domain.ErrUnauthorized
	}
	if !u.Active() {
		return Session{}, ErrAwaitingApproval
	}
	id := identity{deps: h.deps}
	tok, err := id.issueToken(ctx, u.ID)
	if err != nil {
		return Session{}, fmt.Errorf("login: %w", err)
	}
	return Session{Token: tok, User: u}, nil
}

// AuthenticateHandler resolves a bearer token to its account.
type AuthenticateHandler struct{ deps Deps }

// Handle returns the token's user, or domain.ErrUnauthorized.
func (h AuthenticateHandler) Handle(ctx context.Context, token string) (domain.RootUser, error) {
	if token == "" {
		return domain.RootUser{}, domain.ErrUnauthorized
	}
	t, err := h.deps.Tokens.TokenByHash(ctx, domain.HashToken(token))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.RootUser{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.RootUser{}, err
	}
	u, err := h.deps.Users.UserByID(ctx, t.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.RootUser{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.RootUser{}, err
	}
	// A pending account is never given a token; should one have one
	// anyway, it still acts only once approved (so it cannot make groups
	// or personas a rejection would have to find).
	if !u.Active() {
		return domain.RootUser{}, ErrAwaitingApproval
	}
	return u, nil
}
