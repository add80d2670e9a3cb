package bootstrap

import (
	"log/slog"

	"github.com/heraldfed/herald/adapters/metrics"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// ProvideModeration is the federation policy (SPEC §11) over the store's
// domain blocks and allows, shared by the inboxes, the fetcher, the engine
// and the operator surfaces; its refusals are counted in /metrics.
func ProvideModeration(cfg Config, s *Stores, m *metrics.Metrics, clock ports.Clock, log *slog.Logger) *application.Moderation {
	return application.NewModeration(application.ModerationDeps{
		Store: s.Moderation, JobAdmin: s.JobAdmin, Foreign: s.Foreign, Followers: s.Followers,
		Mode: domain.FederationMode(cfg.FederationMode), Clock: clock, Log: log, Observer: m,
	})
}
