package application

import (
	"context"
	"strings"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// BlockDomain asks for a new domain block (SPEC §11). The flags past
// PublicComment are Mastodon's, kept so a list exports as it came.
type BlockDomain struct {
	Domain        string
	Severity      domain.Severity
	Reason        string // for the operators
	PublicComment string
	RejectMedia   bool
	RejectReports bool
	Obfuscate     bool
}

// BlockDomainHandler blocks a domain and its subdomains.
type BlockDomainHandler struct {
	mod   *Moderation
	clock ports.Clock
}

// Handle adds the block: domain.ErrInvalidInput for a malformed domain or
// severity, domain.ErrAlreadyExists when the domain is blocked already
// (change it with UpdateDomainBlockHandler). A suspension also ends the
// domain's queued deliveries and removes its follows, as the result says.
func (h BlockDomainHandler) Handle(ctx context.Context, cmd BlockDomain) (Blocked, error) {
	b, err := domain.NewDomainBlock(cmd.Domain, cmd.Severity, cmd.Reason, h.clock.Now())
	if err != nil {
		return Blocked{}, err
	}
	b.PublicComment = strings.TrimSpace(cmd.PublicComment)
	b.RejectMedia, b.RejectReports, b.Obfuscate = cmd.RejectMedia, cmd.RejectReports, cmd.Obfuscate
	return h.mod.Block(ctx, b)
}
