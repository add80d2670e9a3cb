package application

import (
	"context"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// AllowDomainHandler lets a domain and its subdomains federate in
// allowlist mode (HERALD_FEDERATION_MODE=allowlist). In blocklist mode an
// allow is kept and has no effect until the mode changes.
type AllowDomainHandler struct {
	mod   *Moderation
	clock ports.Clock
}

// Handle adds the allow: domain.ErrInvalidInput for a malformed domain,
// domain.ErrAlreadyExists when it is allowed already.
func (h AllowDomainHandler) Handle(ctx context.Context, d string) (domain.DomainAllow, error) {
	a, err := domain.NewDomainAllow(d, h.clock.Now())
	if err != nil {
		return domain.DomainAllow{}, err
	}
	if err := h.mod.Allow(ctx, a); err != nil {
		return domain.DomainAllow{}, err
	}
	return a, nil
}
