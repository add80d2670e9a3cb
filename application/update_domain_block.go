package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// UpdateDomainBlock changes an existing block; a nil field keeps its
// current value.
type UpdateDomainBlock struct {
	Domain        string
	Severity      *domain.Severity
	Reason        *string
	PublicComment *string
	RejectMedia   *bool
	RejectReports *bool
	Obfuscate     *bool
}

// UpdateDomainBlockHandler changes a block, a silence into a suspension
// or back among others.
type UpdateDomainBlockHandler struct{ mod *Moderation }

// Handle returns the block as changed: domain.ErrNotFound when the domain
// is not blocked, domain.ErrInvalidInput for a malformed domain or value.
// A block that is a suspension after the change ends the domain's queued
// deliveries and removes its follows, as a new one does.
func (h UpdateDomainBlockHandler) Handle(ctx context.Context, cmd UpdateDomainBlock) (Blocked, error) {
	cur, err := currentBlock(ctx, h.mod, cmd.Domain)
	if err != nil {
		return Blocked{}, err
	}
	b := cur
	if cmd.Severity != nil {
		b.Severity = *cmd.Severity
	}
	if cmd.Reason != nil {
		b.Reason = strings.TrimSpace(*cmd.Reason)
	}
	if cmd.PublicComment != nil {
		b.PublicComment = strings.TrimSpace(*cmd.PublicComment)
	}
	for _, f := range []struct {
		dst *bool
		src *bool
	}{{&b.RejectMedia, cmd.RejectMedia}, {&b.RejectReports, cmd.RejectReports}, {&b.Obfuscate, cmd.Obfuscate}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return h.mod.UpdateBlock(ctx, b)
}

// currentBlock is the stored block of d; domain.ErrNotFound if none.
func currentBlock(ctx context.Context, mod *Moderation, d string) (domain.DomainBlock, error) {
	nd, err := domain.NormalizeDomain(d)
	if err != nil {
		return domain.DomainBlock{}, err
	}
	bs, err := mod.Blocks(ctx)
	if err != nil {
		return domain.DomainBlock{}, fmt.Errorf("domain blocks: %w", err)
	}
	for _, b := range bs {
		if b.Domain == nd {
			return b, nil
		}
	}
	return domain.DomainBlock{}, fmt.Errorf("%w: %s is not blocked", domain.ErrNotFound, nd)
}
