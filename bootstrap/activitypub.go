package bootstrap

import (
	"log/slog"

	"github.com/google/wire"
	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/activitypub"
	"github.com/heraldfed/herald/adapters/httpapi/mastodon"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// activityPubSet builds the federation's HTTP surfaces: the ActivityPub
// routes and the client API of follows. Remote documents are fetched by
// the delivery client, over its guarded transport.
var activityPubSet = wire.NewSet(ProvideFetcher, ProvideFederationRoutes)

// ProvideFetcher fetches remote documents with the delivery client: one
// transport, one address guard, one User-Agent for everything Herald sends.
func ProvideFetcher(c *delivery.Client) application.Fetcher { return c }

// FederationRoutes are the federation's routes on the shared router: the
// ActivityPub surface and the client API of follows. One value, so the
// HTTP provider takes one parameter for them.
type FederationRoutes struct {
	routes []httpapi.Routes
}

// Register implements httpapi.Routes.
func (f FederationRoutes) Register(r *mux.Router) {
	for _, x := range f.routes {
		x.Register(r)
	}
}

// ProvideFederationRoutes builds both surfaces; the inboxes are limited
// per client address (HERALD_INBOX_RATE_PER_MINUTE, HERALD_INBOX_BURST).
func ProvideFederationRoutes(cfg Config, app *application.Application, masto *mastodon.Routes, clock ports.Clock, log *slog.Logger) FederationRoutes {
	inboxes := httpapi.NewRateLimiter(httpapi.RateLimit{PerMinute: cfg.InboxRatePerMinute, Burst: cfg.InboxBurst})
	// NodeInfo tells the truth: only open registrations are open.
	open := domain.RegistrationMode(cfg.Registrations) == domain.RegistrationsOpen
	ap := activitypub.New(app, clock, log, activitypub.Config{SoftwareVersion: Version, OpenRegistrations: open, Limit: inboxes.Wrap})
	return FederationRoutes{routes: []httpapi.Routes{ap, httpapi.NewFollowRoutes(app, log), masto}}
}
