package application

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// AuthorizeRequest is what GET /oauth/authorize carries.
type AuthorizeRequest struct {
	ResponseType    string
	ClientID        string
	RedirectURI     string
	Scope           string
	CodeChallenge   string
	ChallengeMethod string
}

// AuthorizeCheck is a request found valid: the application and the scopes
// asked for.
type AuthorizeCheck struct {
	App         domain.OAuthApp
	RedirectURI string
	Scopes      domain.Scopes
}

// AuthorizeError is a refusal that goes back to the application through
// its redirect URI (RFC 6749 §4.1.2.1), because the redirect URI itself
// was found valid.
type AuthorizeError struct {
	Code        string // unsupported_response_type, invalid_scope, invalid_request, access_denied
	Description string
}

func (e *AuthorizeError) Error() string { return e.Code + ": " + e.Description }

// SignedIn is a person past the password: the personas to choose from and
// the consent that carries the choice.
type SignedIn struct {
	User     domain.RootUser
	Personas []domain.Avatar
	Consent  string // the consent grant's secret, for the consent form
}

// Authorized is the code to send back to the application.
type Authorized struct {
	Code        string
	RedirectURI string
}

// grantSweepAge is how long after expiring a grant is kept.
const grantSweepAge = 24 * time.Hour

// AuthorizeHandler runs the authorization page: check the request, sign
// the person in, take their consent and choice of persona, issue a code.
// Only a consent grant (hashed, single use, 10 minutes) links the two
// forms, so no password travels twice and no session cookie is needed.
type AuthorizeHandler struct{ deps Deps }

// Check validates a request. An unknown client or an unregistered
// redirect URI is domain.ErrInvalidClient or domain.ErrInvalidRedirectURI
// (shown, never redirected to); the rest is an *AuthorizeError.
func (h AuthorizeHandler) Check(ctx context.Context, req AuthorizeRequest) (AuthorizeCheck, error) {
	app, err := clientApp(ctx, h.deps.OAuth, req.ClientID)
	if err != nil {
		return AuthorizeCheck{}, err
	}
	redirect := req.RedirectURI
	if redirect == "" && len(app.RedirectURIs) == 1 {
		redirect = app.RedirectURIs[0]
	}
	if !app.Redirects(redirect) {
		return AuthorizeCheck{}, fmt.Errorf("%w: it is not one the application registered", domain.ErrInvalidRedirectURI)
	}
	c := AuthorizeCheck{App: app, RedirectURI: redirect}
	if req.ResponseType != "code" {
		return c, &AuthorizeError{Code: "unsupported_response_type", Description: "response_type must be code"}
	}
	scopes, err := domain.ParseScopes(req.Scope, "read")
	if err != nil {
		return c, &AuthorizeError{Code: "invalid_scope", Description: err.Error()}
	}
	if !scopes.Within(app.Scopes) {
		return c, &AuthorizeError{Code: "invalid_scope", Description: "the scopes asked for are beyond the application's (" + app.Scopes.String() + ")"}
	}
	if err := domain.CheckPKCEChallenge(req.CodeChallenge, req.ChallengeMethod); err != nil {
		return c, &AuthorizeError{Code: "invalid_request", Description: err.Error()}
	}
	c.Scopes = scopes
	return c, nil
}

// SignIn checks the request again and the person's password, and returns
// their personas with a consent grant. A wrong name or password is
// domain.ErrUnauthorized, whichever part was wrong (and as slow);
// an account awaiting approval is ErrAwaitingApproval.
func (h AuthorizeHandler) SignIn(ctx context.Context, req AuthorizeRequest, userName, password string) (SignedIn, error) {
	c, err := h.Check(ctx, req)
	if err != nil {
		return SignedIn{}, err
	}
	u, err := h.checkPassword(ctx, userName, password)
	if err != nil {
		return SignedIn{}, err
	}
	personas, err := h.deps.Actors.AvatarsOf(ctx, u.ID)
	if err != nil {
		return SignedIn{}, err
	}
	if len(personas) == 0 {
		return SignedIn{}, fmt.Errorf("%w: this account has no persona to act as", domain.ErrForbidden)
	}
	secret := rand.Text()
	now := h.deps.Clock.Now()
	err = h.deps.OAuth.CreateGrant(ctx, domain.OAuthGrant{Hash: domain.HashToken(secret), Kind: domain.GrantConsent, ClientID: c.App.ClientID,
		UserID: u.ID, RedirectURI: c.RedirectURI, Scopes: c.Scopes, Challenge: req.CodeChallenge, ChallengeMethod: req.ChallengeMethod,
		CreatedAt: now, ExpiresAt: now.Add(domain.OAuthConsentTTL)})
	if err != nil {
		return SignedIn{}, fmt.Errorf("consent: %w", err)
	}
	// Each sign-in sweeps the grants that expired a day ago (the day
	// keeps a replayed code recognised, so its token is revoked); one
	// indexed delete, so no loop of its own is needed.
	if n, err := h.deps.OAuth.DeleteExpiredGrants(ctx, now.Add(-grantSweepAge)); err != nil {
		h.deps.Log.WarnContext(ctx, "expired grants not swept", "err", err)
	} else if n > 0 {
		h.deps.Log.DebugContext(ctx, "expired grants swept", "grants", n)
	}
	return SignedIn{User: u, Personas: personas, Consent: secret}, nil
}

func (h AuthorizeHandler) checkPassword(ctx context.Context, userName, password string) (domain.RootUser, error) {
	name, err := domain.NormalizeName(userName)
	if err != nil {
		_ = h.deps.Passwords.Verify(dummyHash, password)
		return domain.RootUser{}, domain.ErrUnauthorized
	}
	u, err := h.deps.Users.UserByName(ctx, name)
	if errors.Is(err, domain.ErrNotFound) {
		_ = h.deps.Passwords.Verify(dummyHash, password)
		return domain.RootUser{}, domain.ErrUnauthorized
	}
	if err != nil {
		return domain.RootUser{}, err
	}
	if err := h.deps.Passwords.Verify(u.PasswordHash, password); err != nil {
		return domain.RootUser{}, domain.ErrUnauthorized
	}
	if !u.Active() {
		return domain.RootUser{}, ErrAwaitingApproval
	}
	return u, nil
}

// Consent spends a consent grant: approve with the name of one of the
// person's personas issues a code bound to it (and to the client,
// redirect URI, scopes and PKCE challenge the consent recorded); deny is
// an *AuthorizeError access_denied. A consent that is unknown, used or
// expired is domain.ErrInvalidGrant; a persona that is not the person's
// is domain.ErrForbidden.
func (h AuthorizeHandler) Consent(ctx context.Context, consent, persona string, approve bool) (Authorized, error) {
	now := h.deps.Clock.Now()
	g, first, err := h.deps.OAuth.UseGrant(ctx, domain.HashToken(consent), now)
	if errors.Is(err, domain.ErrNotFound) {
		return Authorized{}, fmt.Errorf("%w: this sign-in is unknown; start again from the application", domain.ErrInvalidGrant)
	}
	if err != nil {
		return Authorized{}, err
	}
	if !first || g.Kind != domain.GrantConsent || g.Expired(now) {
		return Authorized{}, fmt.Errorf("%w: this sign-in was used or has expired; start again from the application", domain.ErrInvalidGrant)
	}
	if !approve {
		return Authorized{RedirectURI: g.RedirectURI}, &AuthorizeError{Code: "access_denied", Description: "the person refused"}
	}
	personas, err := h.deps.Actors.AvatarsOf(ctx, g.UserID)
	if err != nil {
		return Authorized{}, err
	}
	var chosen domain.Avatar
	for _, a := range personas {
		if a.Name == persona {
			chosen = a
		}
	}
	if chosen.ID == "" {
		return Authorized{}, fmt.Errorf("%w: %q is not one of this account's personas", domain.ErrForbidden, persona)
	}
	code := rand.Text()
	err = h.deps.OAuth.CreateGrant(ctx, domain.OAuthGrant{Hash: domain.HashToken(code), Kind: domain.GrantCode, ClientID: g.ClientID,
		UserID: g.UserID, AvatarID: chosen.ID, RedirectURI: g.RedirectURI, Scopes: g.Scopes, Challenge: g.Challenge,
		ChallengeMethod: g.ChallengeMethod, CreatedAt: now, ExpiresAt: now.Add(domain.OAuthCodeTTL)})
	if err != nil {
		return Authorized{}, fmt.Errorf("authorization code: %w", err)
	}
	return Authorized{Code: code, RedirectURI: g.RedirectURI}, nil
}
