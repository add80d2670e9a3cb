package bootstrap

import (
	"log/slog"

	"github.com/google/wire"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/mastodon"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// clientAPISet serves the Mastodon-compatible client API (issue 34) over
// the application's use cases.
var clientAPISet = wire.NewSet(ProvideMastodonRoutes)

// ProvideMastodonRoutes serves the client API. Signing in on the
// authorization page and registering applications share the sign-in
// limit per address (HERALD_AUTH_RATE_PER_MINUTE); every call is limited
// per token as Mastodon does (300 in 5 minutes).
func ProvideMastodonRoutes(cfg Config, app *application.Application, auth *httpapi.RateLimiter, log *slog.Logger) *mastodon.Routes {
	return mastodon.New(app, mastodon.Config{
		Title: cfg.Domain, Version: Version, Registrations: domain.RegistrationMode(cfg.Registrations),
		Streaming: mastodon.StreamingConfig{Poll: cfg.StreamPoll, Total: cfg.StreamConnections},
	}, log, auth, httpapi.NewRateLimiter(mastodon.TokenRateLimit()))
}
