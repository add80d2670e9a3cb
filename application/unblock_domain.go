package application

import "context"

// UnblockDomainHandler lifts a domain block.
type UnblockDomainHandler struct{ mod *Moderation }

// Handle lifts the block of d: federation with the domain resumes (the
// follows a suspension removed stay removed). domain.ErrNotFound when d is
// not blocked, domain.ErrInvalidInput when it is not a domain.
func (h UnblockDomainHandler) Handle(ctx context.Context, d string) error {
	return h.mod.Unblock(ctx, d)
}
