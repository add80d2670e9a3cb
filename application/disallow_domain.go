package application

import "context"

// DisallowDomainHandler removes a domain allow: in allowlist mode nothing
// federates with the domain any more.
type DisallowDomainHandler struct{ mod *Moderation }

// Handle removes the allow of d; domain.ErrNotFound when there is none.
func (h DisallowDomainHandler) Handle(ctx context.Context, d string) error {
	return h.mod.Disallow(ctx, d)
}
