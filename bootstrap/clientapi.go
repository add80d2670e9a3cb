package bootstrap

import (
	"log/slog"

	"github.com/google/wire"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/mastodon"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// clientAPISet builds the Mastodon-compatible client API (issue 34): its
// use cases over the stores and the federation, and its routes.
var clientAPISet = wire.NewSet(ProvideClientAPI, ProvideMastodonRoutes)

// ProvideClientAPI builds the client API's use cases.
func ProvideClientAPI(cfg Config, s *Stores, passwords ports.PasswordHasher, html ports.HTMLSanitizer, mod *application.Moderation, clock ports.Clock, ids ports.IDs, urls application.URLs,
	log *slog.Logger) *application.ClientAPI {
	return application.NewClientAPI(application.ClientAPIDeps{
		OAuth: s.OAuth, AccountIDs: s.AccountIDs, Foreign: s.Foreign, Users: s.Users, Actors: s.Actors, Followers: s.Followers, Posts: s.Posts, Blocks: s.Blocks, HTML: html, Moderation: mod, Passwords: passwords, Clock: clock, IDs: ids, Log: log, URLs: urls,
		Registrations: domain.RegistrationMode(cfg.Registrations),
		Notifications: s.Notifications,
	})
}

// ProvideMastodonRoutes serves the client API. Signing in on the
// authorization page and registering applications share the sign-in
// limit per address (HERALD_AUTH_RATE_PER_MINUTE); every call is limited
// per token as Mastodon does (300 in 5 minutes).
func ProvideMastodonRoutes(cfg Config, app *application.Application, api *application.ClientAPI, fed *application.Federation, auth *httpapi.RateLimiter, log *slog.Logger) *mastodon.Routes {
	return mastodon.New(app, api, fed, mastodon.Config{
		Title: cfg.Domain, Version: Version, Registrations: domain.RegistrationMode(cfg.Registrations),
		Streaming: mastodon.StreamingConfig{Poll: cfg.StreamPoll, Total: cfg.StreamConnections},
	}, log, auth, httpapi.NewRateLimiter(mastodon.TokenRateLimit()))
}
