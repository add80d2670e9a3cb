package bootstrap

import (
	"log/slog"

	"github.com/google/wire"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/admin"
	"github.com/heraldfed/herald/adapters/metrics"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// operationsSet builds what operators use: the operator and moderation
// use cases, their API and page, the Prometheus metrics and the sign-in
// rate limit.
var operationsSet = wire.NewSet(ProvideOperator, ProvideModerator, ProvideAdmin, ProvideMetrics, ProvideRateLimiter)

// ProvideOperator builds the operator use cases over the store. waker may
// be nil (the CLI runs no engine; the servers' workers poll or are woken
// through the store).
func ProvideOperator(cfg Config, s *Stores, policy domain.NamePolicy, clock ports.Clock, waker application.Waker) *application.Operator {
	return application.NewOperator(application.OperatorDeps{
		JobAdmin: s.JobAdmin, Jobs: s.Jobs, Instances: s.Instances, Names: s.Names, FanOuts: s.FanOuts, Policy: policy,
		InstanceActor: cfg.InstanceActor, Clock: clock, Waker: waker,
	})
}

// ProvideModerator builds the moderation use cases (domain blocks and
// allows, registrations, reports, persona deletions) over the store and
// the policy. app may be nil (the CLI runs no deletions' pass: the
// servers' find a deletion it begins within a minute); otherwise its
// deletions' pass is woken when the operator deletes a persona.
func ProvideModerator(cfg Config, s *Stores, mod *application.Moderation, urls application.URLs, clock ports.Clock, log *slog.Logger,
	app *application.Application) *application.Moderator {
	d := application.ModeratorDeps{
		Moderation: mod, Users: s.Users, Actors: s.Actors, Names: s.Names, Followers: s.Followers, Reports: s.Reports,
		Registrations: domain.RegistrationMode(cfg.Registrations), URLs: urls, Clock: clock, Log: log,
	}
	if app != nil {
		d.Deletions = app.PersonaDeletions
	}
	return application.NewModerator(d)
}

// ProvideAdmin is the operator API and page, off without HERALD_ADMIN_TOKEN.
func ProvideAdmin(cfg Config, op *application.Operator, mod *application.Moderator, log *slog.Logger) *admin.Handler {
	return admin.New(op, mod, string(cfg.AdminToken), log)
}

// ProvideMetrics is /metrics and the engine's observer.
func ProvideMetrics(s *Stores, clock ports.Clock, log *slog.Logger) *metrics.Metrics {
	return metrics.New(s.JobAdmin, s.Instances, clock, metrics.Options{Log: log})
}

// ProvideRateLimiter limits sign-up and login per client IP.
func ProvideRateLimiter(cfg Config) *httpapi.RateLimiter {
	return httpapi.NewRateLimiter(httpapi.RateLimit{PerMinute: cfg.AuthRatePerMinute, Burst: cfg.AuthBurst})
}
