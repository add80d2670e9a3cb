package application

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// IssueToken is POST /oauth/token.
type IssueToken struct {
	GrantType    string // authorization_code or client_credentials
	ClientID     string
	ClientSecret string
	Code         string
	RedirectURI  string
	CodeVerifier string
	Scope        string // client_credentials only; empty: read
}

// IssuedToken is the only copy of an access token, with what it grants.
type IssuedToken struct {
	Token     string
	Scopes    domain.Scopes
	CreatedAt time.Time
}

// IssueTokenHandler is the token endpoint.
type IssueTokenHandler struct{ deps Deps }

// Handle authenticates the client and exchanges the grant. Errors are
// domain.ErrInvalidClient, ErrInvalidGrant, ErrInvalidScope or
// ErrUnsupportedGrantType (the RFC 6749 §5.2 codes), with a description.
func (h IssueTokenHandler) Handle(ctx context.Context, cmd IssueToken) (IssuedToken, error) {
	app, err := authenticateClient(ctx, h.deps.OAuth, cmd.ClientID, cmd.ClientSecret)
	if err != nil {
		return IssuedToken{}, err
	}
	switch cmd.GrantType {
	case "authorization_code":
		return h.exchangeCode(ctx, app, cmd)
	case "client_credentials":
		scopes, err := domain.ParseScopes(cmd.Scope, "read")
		if err != nil {
			return IssuedToken{}, err
		}
		if !scopes.Within(app.Scopes) {
			return IssuedToken{}, fmt.Errorf("%w: beyond the application's scopes (%s)", domain.ErrInvalidScope, app.Scopes)
		}
		return h.issue(ctx, domain.OAuthToken{ClientID: app.ClientID, Scopes: scopes})
	}
	return IssuedToken{}, fmt.Errorf("%w: grant_type must be authorization_code or client_credentials", domain.ErrUnsupportedGrantType)
}

// exchangeCode spends the code whatever the outcome: a code presented
// twice revokes the tokens the first exchange gave (RFC 6749 §4.1.2: it
// may have been stolen), and a wrong redirect URI or verifier burns it.
func (h IssueTokenHandler) exchangeCode(ctx context.Context, app domain.OAuthApp, cmd IssueToken) (IssuedToken, error) {
	if cmd.Code == "" {
		return IssuedToken{}, fmt.Errorf("%w: code is missing", domain.ErrInvalidGrant)
	}
	hash := domain.HashToken(cmd.Code)
	now := h.deps.Clock.Now()
	g, first, err := h.deps.OAuth.UseGrant(ctx, hash, now)
	if errors.Is(err, domain.ErrNotFound) {
		return IssuedToken{}, fmt.Errorf("%w: unknown code", domain.ErrInvalidGrant)
	}
	if err != nil {
		return IssuedToken{}, err
	}
	if g.Kind != domain.GrantCode {
		return IssuedToken{}, fmt.Errorf("%w: unknown code", domain.ErrInvalidGrant)
	}
	if !first {
		n, err := h.deps.OAuth.RevokeGrantTokens(ctx, hash)
		if err != nil {
			return IssuedToken{}, err
		}
		h.deps.Log.WarnContext(ctx, "authorization code used twice: its tokens are revoked", "client_id", app.ClientID, "revoked", n)
		return IssuedToken{}, fmt.Errorf("%w: the code was used already", domain.ErrInvalidGrant)
	}
	switch {
	case g.ClientID != app.ClientID:
		return IssuedToken{}, fmt.Errorf("%w: the code was issued to another client", domain.ErrInvalidGrant)
	case g.Expired(now):
		return IssuedToken{}, fmt.Errorf("%w: the code has expired", domain.ErrInvalidGrant)
	case cmd.RedirectURI != g.RedirectURI:
		return IssuedToken{}, fmt.Errorf("%w: redirect_uri differs from the authorization request's", domain.ErrInvalidGrant)
	}
	if err := g.VerifyPKCE(cmd.CodeVerifier); err != nil {
		return IssuedToken{}, err
	}
	// The account and the persona must still be there and active: a
	// code waiting while its persona is deleted gives nothing.
	if _, err := activePersona(ctx, h.deps, g.UserID, g.AvatarID); err != nil {
		return IssuedToken{}, fmt.Errorf("%w: %v", domain.ErrInvalidGrant, err)
	}
	return h.issue(ctx, domain.OAuthToken{ClientID: app.ClientID, UserID: g.UserID, AvatarID: g.AvatarID, Scopes: g.Scopes, GrantHash: hash})
}

func (h IssueTokenHandler) issue(ctx context.Context, t domain.OAuthToken) (IssuedToken, error) {
	tok := rand.Text() + rand.Text()
	t.Hash, t.CreatedAt = domain.HashToken(tok), h.deps.Clock.Now()
	if err := h.deps.OAuth.CreateToken(ctx, t); err != nil {
		return IssuedToken{}, fmt.Errorf("token: %w", err)
	}
	return IssuedToken{Token: tok, Scopes: t.Scopes, CreatedAt: t.CreatedAt}, nil
}

// activePersona returns the persona a token acts as, if its account is
// active and owns it and it is not deleted; domain.ErrUnauthorized
// otherwise.
func activePersona(ctx context.Context, deps Deps, userID, avatarID string) (domain.Avatar, error) {
	u, err := deps.Users.UserByID(ctx, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Avatar{}, fmt.Errorf("%w: the account is gone", domain.ErrUnauthorized)
	}
	if err != nil {
		return domain.Avatar{}, err
	}
	if !u.Active() {
		return domain.Avatar{}, ErrAwaitingApproval
	}
	a, err := deps.Actors.AvatarByID(ctx, avatarID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Avatar{}, fmt.Errorf("%w: the persona is gone", domain.ErrUnauthorized)
	}
	if err != nil {
		return domain.Avatar{}, err
	}
	if a.RootUserID != u.ID || !a.DeletedAt.IsZero() {
		return domain.Avatar{}, fmt.Errorf("%w: the persona is gone", domain.ErrUnauthorized)
	}
	return a, nil
}

// clientApp is the application of a client_id; an unknown one is
// domain.ErrInvalidClient.
func clientApp(ctx context.Context, store ports.OAuthStore, clientID string) (domain.OAuthApp, error) {
	app, err := store.AppByClientID(ctx, clientID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.OAuthApp{}, fmt.Errorf("%w: unknown client_id", domain.ErrInvalidClient)
	}
	return app, err
}

// authenticateClient is the application of a client that proved itself
// with its secret (RFC 6749 §2.3.1); an unknown client or a wrong secret
// is domain.ErrInvalidClient.
func authenticateClient(ctx context.Context, store ports.OAuthStore, clientID, secret string) (domain.OAuthApp, error) {
	app, err := clientApp(ctx, store, clientID)
	if err != nil {
		return domain.OAuthApp{}, err
	}
	if err := app.CheckSecret(secret); err != nil {
		return domain.OAuthApp{}, fmt.Errorf("%w: wrong client_secret", domain.ErrInvalidClient)
	}
	return app, nil
}
