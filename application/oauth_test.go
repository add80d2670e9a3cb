package application_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/fake"
)

type oauthFixture struct {
	api      *application.ClientAPI
	clock    *fake.Clock
	store    *memory.OAuthStore
	accounts *memory.AccountStore
	app      application.RegisteredApp
}

const (
	redirect = "https://client.example/callback"
	verifier = "a-pkce-verifier-that-is-long-enough-for-rfc-7636-xxxxxxxx"
)

func challengeOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func setupOAuth(t *testing.T) oauthFixture {
	t.Helper()
	ctx := t.Context()
	f := oauthFixture{clock: fake.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)), store: memory.NewOAuthStore(), accounts: memory.NewAccountStore()}
	f.api = &application.New(application.Deps{OAuth: f.store, Users: f.accounts, Actors: f.accounts,
		Passwords: fake.Passwords{}, Clock: f.clock, IDs: fake.NewIDs("id"), URLs: application.NewURLs("herald.example")}).ClientAPI
	keys := domain.KeyPair{PublicPEM: "-----BEGIN PUBLIC KEY-----", PrivatePEM: "-----BEGIN PRIVATE KEY-----"}
	for _, u := range []struct{ id, name string }{{"u1", "alice"}, {"u2", "bob"}} {
		if err := f.accounts.CreateUser(ctx, domain.RootUser{ID: u.id, UserName: u.name, PasswordHash: "fake:password-" + u.name, Status: domain.UserActive}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []domain.Avatar{
		{ID: "a1", RootUserID: "u1", Name: "alice", Keys: keys},
		{ID: "a2", RootUserID: "u1", Name: "alice_work", Keys: keys},
		{ID: "b1", RootUserID: "u2", Name: "bob", Keys: keys},
	} {
		if err := f.accounts.CreateAvatar(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	f.app, err = f.api.RegisterApp.Handle(ctx, application.RegisterApp{Name: "Tusky", RedirectURIs: []string{redirect}, Scopes: "read write:statuses"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f oauthFixture) request(scope string) application.AuthorizeRequest {
	return application.AuthorizeRequest{ResponseType: "code", ClientID: f.app.App.ClientID, RedirectURI: redirect, Scope: scope,
		CodeChallenge: challengeOf(verifier), ChallengeMethod: domain.PKCES256}
}

// signIn signs alice in, asking for scope.
func (f oauthFixture) signIn(t *testing.T, scope string) application.SignedIn {
	t.Helper()
	in, err := f.api.Authorize.SignIn(t.Context(), f.request(scope), "alice", "password-alice")
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	return in
}

// code signs alice in and has her choose persona.
func (f oauthFixture) code(t *testing.T, persona string) string {
	t.Helper()
	in := f.signIn(t, "read write:statuses")
	if len(in.Personas) != 2 {
		t.Fatalf("alice's personas: %+v", in.Personas)
	}
	got, err := f.api.Authorize.Consent(t.Context(), in.Consent, persona, true)
	if err != nil {
		t.Fatalf("consent: %v", err)
	}
	return got.Code
}

func (f oauthFixture) exchange(code, verifier, redirectURI string) (application.IssuedToken, error) {
	return f.api.IssueToken.Handle(context.Background(), application.IssueToken{GrantType: "authorization_code", ClientID: f.app.App.ClientID,
		ClientSecret: f.app.Secret, Code: code, RedirectURI: redirectURI, CodeVerifier: verifier})
}

func TestOAuthCodeFlowActsAsTheChosenPersona(t *testing.T) {
	t.Parallel()
	f := setupOAuth(t)
	tok, err := f.exchange(f.code(t, "alice_work"), verifier, redirect)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if tok.Scopes.String() != "read write:statuses" {
		t.Fatalf("scopes %q", tok.Scopes)
	}
	p, err := f.api.Authenticate.Handle(t.Context(), tok.Token)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	if p.Avatar.ID != "a2" || p.User.ID != "u1" {
		t.Fatalf("token acts as %q of %q, want alice_work (a2) of u1", p.Avatar.ID, p.User.ID)
	}
	if err := p.Require("read:notifications"); err != nil {
		t.Fatalf("read grants read:notifications: %v", err)
	}
	if err := p.Require("write:follows"); !errors.Is(err, domain.ErrInsufficientScope) {
		t.Fatalf("write:follows with read write:statuses: %v", err)
	}
	// The store holds hashes only.
	if _, err := f.store.TokenByHash(t.Context(), tok.Token); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the token itself found in the store: %v", err)
	}
}

// Hostile clients: every attack on the flow is refused with the RFC 6749
// error, and a replayed code revokes what it gave.
func TestOAuthHostile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, tc := range []struct {
		name  string
		check func(t *testing.T, f oauthFixture)
	}{
		{"CodeReuseRevokesTheToken", func(t *testing.T, f oauthFixture) {
			code := f.code(t, "alice")
			tok, err := f.exchange(code, verifier, redirect)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.exchange(code, verifier, redirect); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("second exchange: %v, want invalid_grant", err)
			}
			if _, err := f.api.Authenticate.Handle(ctx, tok.Token); !errors.Is(err, domain.ErrUnauthorized) {
				t.Fatalf("the first exchange's token after the replay: %v, want revoked", err)
			}
		}},
		{"PKCEMismatch", func(t *testing.T, f oauthFixture) {
			code := f.code(t, "alice")
			if _, err := f.exchange(code, verifier+"-wrong", redirect); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("wrong verifier: %v", err)
			}
			if _, err := f.exchange(code, verifier, redirect); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("the code after a wrong verifier must be spent: %v", err)
			}
			if _, err := f.exchange(f.code(t, "alice"), "", redirect); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("no verifier for a code with a challenge: %v", err)
			}
		}},
		{"RedirectURIMismatch", func(t *testing.T, f oauthFixture) {
			if _, err := f.exchange(f.code(t, "alice"), verifier, "https://evil.example/callback"); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("other redirect_uri at the token endpoint: %v", err)
			}
			req := f.request("read")
			req.RedirectURI = redirect + "/../evil"
			if _, err := f.api.Authorize.Check(ctx, req); !errors.Is(err, domain.ErrInvalidRedirectURI) {
				t.Fatalf("unregistered redirect_uri at authorize: %v", err)
			}
		}},
		{"ScopeEscalation", func(t *testing.T, f oauthFixture) {
			var ae *application.AuthorizeError
			for _, scope := range []string{"read write", "follow", "write:follows", "admin:read", "read push"} {
				if _, err := f.api.Authorize.Check(ctx, f.request(scope)); !errors.As(err, &ae) || ae.Code != "invalid_scope" {
					t.Errorf("authorize with %q beyond read write:statuses: %v", scope, err)
				}
			}
			_, err := f.api.IssueToken.Handle(ctx, application.IssueToken{GrantType: "client_credentials", ClientID: f.app.App.ClientID,
				ClientSecret: f.app.Secret, Scope: "write"})
			if !errors.Is(err, domain.ErrInvalidScope) {
				t.Fatalf("client credentials with write: %v", err)
			}
		}},
		{"PersonaOfAnotherAccount", func(t *testing.T, f oauthFixture) {
			in := f.signIn(t, "read")
			if _, err := f.api.Authorize.Consent(ctx, in.Consent, "bob", true); !errors.Is(err, domain.ErrForbidden) {
				t.Fatalf("alice choosing bob: %v", err)
			}
			if _, err := f.api.Authorize.Consent(ctx, in.Consent, "alice", true); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("the consent after a refused choice must be spent: %v", err)
			}
		}},
		{"CodeOfAnotherClient", func(t *testing.T, f oauthFixture) {
			other, err := f.api.RegisterApp.Handle(ctx, application.RegisterApp{Name: "Evil", RedirectURIs: []string{redirect}, Scopes: "read write"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.api.IssueToken.Handle(ctx, application.IssueToken{GrantType: "authorization_code", ClientID: other.App.ClientID,
				ClientSecret: other.Secret, Code: f.code(t, "alice"), RedirectURI: redirect, CodeVerifier: verifier})
			if !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("another client's code: %v", err)
			}
			_, err = f.api.IssueToken.Handle(ctx, application.IssueToken{GrantType: "authorization_code", ClientID: f.app.App.ClientID,
				ClientSecret: other.Secret, Code: f.code(t, "alice"), RedirectURI: redirect, CodeVerifier: verifier})
			if !errors.Is(err, domain.ErrInvalidClient) {
				t.Fatalf("another client's secret: %v", err)
			}
		}},
		{"ExpiredCodeAndConsent", func(t *testing.T, f oauthFixture) {
			code := f.code(t, "alice")
			in := f.signIn(t, "read")
			f.clock.Advance(domain.OAuthCodeTTL)
			if _, err := f.exchange(code, verifier, redirect); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("expired code: %v", err)
			}
			if _, err := f.api.Authorize.Consent(ctx, in.Consent, "alice", true); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("expired consent: %v", err)
			}
		}},
		{"ConsentIsNoCode", func(t *testing.T, f oauthFixture) {
			in := f.signIn(t, "read")
			if _, err := f.exchange(in.Consent, verifier, redirect); !errors.Is(err, domain.ErrInvalidGrant) {
				t.Fatalf("a consent presented as a code: %v", err)
			}
		}},
		{"WrongPassword", func(t *testing.T, f oauthFixture) {
			for _, c := range [][2]string{{"alice", "password-bob"}, {"nobody", "x"}, {"Ä", "x"}} {
				if _, err := f.api.Authorize.SignIn(ctx, f.request("read"), c[0], c[1]); !errors.Is(err, domain.ErrUnauthorized) {
					t.Errorf("sign in %v: %v", c, err)
				}
			}
		}},
		{"RevokeOnlyOwnTokens", func(t *testing.T, f oauthFixture) {
			tok, err := f.exchange(f.code(t, "alice"), verifier, redirect)
			if err != nil {
				t.Fatal(err)
			}
			other, err := f.api.RegisterApp.Handle(ctx, application.RegisterApp{Name: "Evil", RedirectURIs: []string{redirect}})
			if err != nil {
				t.Fatal(err)
			}
			err = f.api.RevokeToken.Handle(ctx, application.RevokeToken{ClientID: other.App.ClientID, ClientSecret: other.Secret, Token: tok.Token})
			if !errors.Is(err, domain.ErrForbidden) {
				t.Fatalf("another app revoking the token: %v", err)
			}
			if _, err := f.api.Authenticate.Handle(ctx, tok.Token); err != nil {
				t.Fatalf("the token after another app's revoke: %v", err)
			}
			if err := f.api.RevokeToken.Handle(ctx, application.RevokeToken{ClientID: f.app.App.ClientID, ClientSecret: f.app.Secret, Token: tok.Token}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.api.Authenticate.Handle(ctx, tok.Token); !errors.Is(err, domain.ErrUnauthorized) {
				t.Fatalf("the token after its revoke: %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t, setupOAuth(t))
		})
	}
}

// Signing in sweeps the grants expired for a day, and only those.
func TestSignInSweepsOldGrants(t *testing.T) {
	t.Parallel()
	f := setupOAuth(t)
	ctx := t.Context()
	old := f.code(t, "alice")
	f.clock.Advance(24*time.Hour + domain.OAuthCodeTTL + time.Second)
	fresh := f.code(t, "alice") // this sign-in sweeps
	if _, _, err := f.store.UseGrant(ctx, domain.HashToken(old), f.clock.Now()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the code expired a day ago: %v, want swept", err)
	}
	if _, first, err := f.store.UseGrant(ctx, domain.HashToken(fresh), f.clock.Now()); err != nil || !first {
		t.Fatalf("the fresh code: first %v, %v", first, err)
	}
}
