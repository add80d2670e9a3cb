package application

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// RegisterApp is POST /api/v1/apps: a client application registers itself.
type RegisterApp struct {
	Name         string
	RedirectURIs []string
	Scopes       string // space-separated; empty is "read", as Mastodon
	Website      string
}

// RegisteredApp is the application with the only copy of its secret.
type RegisteredApp struct {
	App    domain.OAuthApp
	Secret string
}

// RegisterAppHandler registers applications. Anyone may (Mastodon's apps
// endpoint needs no token); the endpoint is rate limited per address.
type RegisterAppHandler struct{ deps Deps }

// Handle validates and stores the application; its client secret is
// returned once and kept only as a hash.
func (h RegisterAppHandler) Handle(ctx context.Context, cmd RegisterApp) (RegisteredApp, error) {
	scopes, err := domain.ParseScopes(cmd.Scopes, "read")
	if err != nil {
		return RegisteredApp{}, err
	}
	secret := rand.Text() + rand.Text()
	app, err := domain.NewOAuthApp(h.deps.IDs.NewID(), rand.Text(), domain.HashToken(secret), cmd.Name, cmd.Website, cmd.RedirectURIs,
		scopes, h.deps.Clock.Now())
	if err != nil {
		return RegisteredApp{}, err
	}
	if err := h.deps.OAuth.CreateApp(ctx, app); err != nil {
		return RegisteredApp{}, fmt.Errorf("register application: %w", err)
	}
	return RegisteredApp{App: app, Secret: secret}, nil
}
