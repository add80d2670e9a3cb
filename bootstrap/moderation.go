package bootstrap

import (
	"log/slog"

	"github.com/heraldfed/herald/adapters/metrics"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// ProvideModeration is the federation policy (SPEC §11) over the store's
// domain blocks and allows, in HERALD_FEDERATION_MODE, shared by the
// inboxes, the fetcher, the engine and the operator surfaces, so a block
// made through this process applies in it at once; obs counts refusals
// (nil in the CLI).
func ProvideModeration(cfg Config, s *Stores, obs ports.PolicyObserver, clock ports.Clock, log *slog.Logger) *application.Moderation {
	return application.NewModeration(application.ModerationDeps{
		Store: s.Moderation, JobAdmin: s.JobAdmin, Foreign: s.Foreign, Followers: s.Followers,
		Mode: domain.FederationMode(cfg.FederationMode), Clock: clock, Log: log, Observer: obs,
	})
}

// ProvidePolicyObserver counts the policy's refusals in /metrics.
func ProvidePolicyObserver(m *metrics.Metrics) ports.PolicyObserver { return m }
