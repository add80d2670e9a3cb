package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/admin"
	"github.com/heraldfed/herald/adapters/metrics"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Version is the build's version, set with -ldflags "-X ...Version=...".
var Version = "dev"

// ProvideNamePolicy builds the never-available list from configuration.
func ProvideNamePolicy(cfg Config) (domain.NamePolicy, error) {
	return domain.NewNamePolicy(cfg.InstanceActor, cfg.ReservedNames)
}

// ProvideURLs lays out public URIs under HERALD_DOMAIN, with the scheme
// HERALD_SCHEME names (auto: NewURLs's choice).
func ProvideURLs(cfg Config) application.URLs {
	u := application.NewURLs(cfg.Domain)
	if cfg.Scheme == "https" || cfg.Scheme == "http" {
		u.Scheme = cfg.Scheme
	}
	return u
}

// ProvideProxies is HERALD_TRUSTED_PROXIES (validated with the config).
func ProvideProxies(cfg Config) (*httpapi.Proxies, error) {
	return httpapi.NewProxies(cfg.TrustedProxies, cfg.ProxyHeader)
}

// ProvidePasswords is bcrypt at the configured cost.
func ProvidePasswords(cfg Config) security.Bcrypt { return security.Bcrypt{Cost: cfg.BcryptCost} }

// ProvideDeliverer is the signed HTTP client.
func ProvideDeliverer(cfg Config, urls application.URLs) (*delivery.Client, func()) {
	c := delivery.New(delivery.Config{
		Timeout:      cfg.DeliveryTimeout,
		AllowPrivate: cfg.AllowPrivateTargets,
		UserAgent:    fmt.Sprintf("Herald/%s (+%s)", Version, urls.Base()),
	})
	return c, c.Close
}

// ProvideEngine builds the delivery engine over the store.
func ProvideEngine(cfg Config, s *Stores, d ports.Deliverer, clock ports.Clock, rnd ports.Random, ids ports.IDs, obs ports.EngineObserver,
	mod *application.Moderation, log *slog.Logger) *engine.Engine {
	host, _ := os.Hostname()
	return engine.New(engine.Deps{
		Jobs: s.Jobs, Instances: s.Instances, Deliverer: d, Keys: engine.NewCachedKeys(engine.ActorKeys{Actors: s.Actors}, clock),
		Clock: clock, Random: rnd, IDs: ids, Wakes: s.Wakes, Observer: obs, Policy: mod, Log: log,
	}, engine.Config{
		Workers: cfg.Workers, PerHost: cfg.PerHost, Grace: cfg.ShutdownGrace, PurgeEvery: s.PurgeEvery,
		Owner: fmt.Sprintf("%s/%d", host, os.Getpid()),
	})
}

// ProvideApplication builds every use case over the store: publishing
// resolves recipients it has not cached through the fetcher, enqueues
// wake the engine, and key rotations drop its cached keys.
func ProvideApplication(cfg Config, s *Stores, passwords ports.PasswordHasher, keys ports.KeyGenerator, html ports.HTMLSanitizer,
	mod *application.Moderation, clock ports.Clock, ids ports.IDs, policy domain.NamePolicy, urls application.URLs,
	fetcher application.Fetcher, waker application.Waker, rotations application.KeyRotations, log *slog.Logger) *application.Application {
	d := applicationDeps(cfg, s, html, mod, clock, ids, urls, log)
	d.Passwords, d.Keys, d.NamePolicy = passwords, keys, policy
	d.Fetcher, d.Waker, d.KeyRotations = fetcher, waker, rotations
	return application.New(d)
}

// applicationDeps are the use cases' ports that the store, cfg and the
// shared parts give, for the server (ProvideApplication) and the CLI
// alike.
func applicationDeps(cfg Config, s *Stores, html ports.HTMLSanitizer, mod *application.Moderation, clock ports.Clock, ids ports.IDs,
	urls application.URLs, log *slog.Logger) application.Deps {
	return application.Deps{
		Users: s.Users, Tokens: s.Tokens, Actors: s.Actors, Names: s.Names, Followers: s.Followers, Foreign: s.Foreign, AccountIDs: s.AccountIDs,
		Posts: s.Posts, Polls: s.Polls, HTML: html, Tombstones: s.Tombstones, Moderation: mod, Reports: s.Reports, Blocks: s.Blocks,
		Jobs: s.Jobs, FanOuts: s.FanOuts, JobAdmin: s.JobAdmin, OAuth: s.OAuth, Notifications: s.Notifications,
		Clock: clock, IDs: ids, Log: log, URLs: urls, InstanceActor: cfg.InstanceActor, Registrations: domain.RegistrationMode(cfg.Registrations),
	}
}

// Readiness is what /readyz reports: started (storage prepared and the
// instance actor in place), not stopping, and the store answering.
type Readiness struct {
	pinger   ports.Pinger
	schema   func(context.Context) error
	started  atomic.Bool
	stopping atomic.Bool
}

// ProvideReadiness watches the store.
func ProvideReadiness(s *Stores) *Readiness { return &Readiness{pinger: s.Pinger, schema: s.Schema} }

// Ready implements httpapi.Readiness.
func (r *Readiness) Ready(ctx context.Context) error {
	switch {
	case r.stopping.Load():
		return errors.New("shutting down")
	case !r.started.Load():
		return errors.New("starting")
	}
	if err := r.pinger.Ping(ctx); err != nil {
		return fmt.Errorf("%w: store: %v", domain.ErrUnavailable, err)
	}
	if r.schema != nil {
		if err := r.schema(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ProvideHTTP builds the HTTP surface.
func ProvideHTTP(app *application.Application, ready *Readiness, log *slog.Logger,
	ops *admin.Handler, prom *metrics.Metrics, limits *httpapi.RateLimiter, proxies *httpapi.Proxies, fed FederationRoutes) *httpapi.Handler {
	return httpapi.New(app, ready, log, proxies, limits, ops, prom, fed)
}

// ProvideObserver is the engine's metrics sink: the Prometheus metrics.
func ProvideObserver(m *metrics.Metrics) ports.EngineObserver { return m }

var (
	_ ports.Clock  = system.Clock{}
	_ ports.Random = system.Random{}
	_ ports.IDs    = system.IDs{}
)
