package bootstrap

import (
	"log/slog"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// ProvideModeration is the federation policy (SPEC §11) over the store's
// domain blocks and allows, shared by the operator surfaces and everything
// that talks to other servers, so a block made through this process
// applies in it at once. HERALD_FEDERATION_MODE comes with the policy's
// wiring into the inboxes, fetches and deliveries; until then it is
// blocklist.
func ProvideModeration(s *Stores, clock ports.Clock, log *slog.Logger) *application.Moderation {
	return application.NewModeration(application.ModerationDeps{
		Store: s.Moderation, JobAdmin: s.JobAdmin, Foreign: s.Foreign, Followers: s.Followers,
		Mode: domain.FederationBlocklist, Clock: clock, Log: log,
	})
}
