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

// activityPubSet builds the federation use cases and their HTTP surfaces:
// the ActivityPub routes and the client API of follows. Remote documents
// are fetched by the delivery client, over its guarded transport.
var activityPubSet = wire.NewSet(ProvideFetcher, ProvideFederation, ProvideFederationRoutes)

// ProvideFetcher fetches remote documents with the delivery client: one
// transport, one address guard, one User-Agent for everything Herald sends.
func ProvideFetcher(c *delivery.Client) application.Fetcher { return c }

// ProvideFederation builds the ActivityPub use cases over the store, and
// makes publishing resolve recipients it has not cached by fetching them.
func ProvideFederation(cfg Config, s *Stores, fetcher application.Fetcher, html ports.HTMLSanitizer, mod *application.Moderation, clock ports.Clock, ids ports.IDs,
	urls application.URLs, app *application.Application, waker application.Waker, rotations application.KeyRotations, keys ports.KeyGenerator,
	log *slog.Logger) *application.Federation {
	fed := application.NewFederation(application.FederationDeps{
		Actors: s.Actors, Names: s.Names, Followers: s.Followers, Foreign: s.Foreign, Posts: s.Posts, HTML: html, Tombstones: s.Tombstones, Moderation: mod, Reports: s.Reports, Jobs: s.Jobs, FanOuts: s.FanOuts,
		Blocks:  s.Blocks,
		Fetcher: fetcher, Clock: clock, IDs: ids, Waker: waker, Log: log, URLs: urls, InstanceActor: cfg.InstanceActor,
		Keys: keys, KeyRotations: rotations,
		Notifications: s.Notifications,
	})
	app.Publish.Resolver = fed.Resolver
	app.Polls = fed.Polls
	return fed
}

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
func ProvideFederationRoutes(cfg Config, app *application.Application, fed *application.Federation, masto *mastodon.Routes, clock ports.Clock, log *slog.Logger) FederationRoutes {
	inboxes := httpapi.NewRateLimiter(httpapi.RateLimit{PerMinute: cfg.InboxRatePerMinute, Burst: cfg.InboxBurst})
	// NodeInfo tells the truth: only open registrations are open.
	open := domain.RegistrationMode(cfg.Registrations) == domain.RegistrationsOpen
	ap := activitypub.New(fed, clock, log, activitypub.Config{SoftwareVersion: Version, OpenRegistrations: open, Limit: inboxes.Wrap})
	return FederationRoutes{routes: []httpapi.Routes{ap, httpapi.NewFollowRoutes(app, fed, log), masto}}
}
