package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// Principal is who a client API request acts as: the token, its
// application, and for a user token the account and the one persona the
// token was given for.
type Principal struct {
	Token  domain.OAuthToken
	App    domain.OAuthApp
	User   domain.RootUser // zero for an application token
	Avatar domain.Avatar   // zero for an application token
}

// HasUser reports whether the token acts as a persona.
func (p Principal) HasUser() bool { return p.Token.AvatarID != "" }

// Require is domain.ErrInsufficientScope unless the token grants scope.
func (p Principal) Require(scope string) error {
	if !p.Token.Scopes.Grants(scope) {
		return fmt.Errorf("%w: %s is needed", domain.ErrInsufficientScope, scope)
	}
	return nil
}

// AuthenticateTokenHandler resolves an access token.
type AuthenticateTokenHandler struct{ deps Deps }

// Handle returns the token's principal, or domain.ErrUnauthorized for a
// token that is unknown or revoked, or whose account or persona is gone.
func (h AuthenticateTokenHandler) Handle(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, fmt.Errorf("%w: no access token", domain.ErrUnauthorized)
	}
	t, err := h.deps.OAuth.TokenByHash(ctx, domain.HashToken(token))
	if errors.Is(err, domain.ErrNotFound) {
		return Principal{}, fmt.Errorf("%w: the access token is invalid", domain.ErrUnauthorized)
	}
	if err != nil {
		return Principal{}, err
	}
	app, err := h.deps.OAuth.AppByClientID(ctx, t.ClientID)
	if errors.Is(err, domain.ErrNotFound) {
		return Principal{}, fmt.Errorf("%w: the access token's application is gone", domain.ErrUnauthorized)
	}
	if err != nil {
		return Principal{}, err
	}
	p := Principal{Token: t, App: app}
	if t.AvatarID == "" {
		return p, nil
	}
	a, err := activePersona(ctx, h.deps, t.UserID, t.AvatarID)
	if err != nil {
		return Principal{}, err
	}
	u, err := h.deps.Users.UserByID(ctx, t.UserID)
	if err != nil {
		return Principal{}, err
	}
	p.User, p.Avatar = u, a
	return p, nil
}
