package application

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Moderator gathers what the operator decides about who federates and who
// joins (SPEC §11), for the operator API, the operator page and the CLI:
// domain blocks (one at a time, or a Mastodon CSV list at once), domain
// allows, pending sign-ups and the reports other servers sent. Blocks and
// allows go through Moderation, so this process applies them at once and
// the others within its cache time. It sits beside Operator (the queue and
// the breakers) with its own constructor, so either can be wired alone.
type Moderator struct {
	Block         BlockDomainHandler
	UpdateBlock   UpdateDomainBlockHandler
	Unblock       UnblockDomainHandler
	ImportBlocks  ImportDomainBlocksHandler
	ExportBlocks  ExportDomainBlocksHandler
	Allow         AllowDomainHandler
	Disallow      DisallowDomainHandler
	Approve       ApproveRegistrationHandler
	Reject        RejectRegistrationHandler
	ResolveReport ResolveReportHandler
	// DeletePersona deletes anyone's persona (DeletePersona.ByOperator).
	DeletePersona DeletePersonaHandler

	deps ModeratorDeps
}

// ModeratorDeps are the Moderator's collaborators.
type ModeratorDeps struct {
	Moderation *Moderation
	Users      ports.UserStore
	Actors     ports.ActorStore
	Names      ports.NameRegistry
	Followers  ports.FollowerStore
	Reports    ports.ReportStore
	// Registrations is HERALD_REGISTRATIONS, shown with the pending list.
	Registrations domain.RegistrationMode
	URLs          URLs
	Clock         ports.Clock
	Log           *slog.Logger
	// Deletions is told when a persona deletion begins (the server's
	// PersonaDeletionsHandler); nil (the CLI): the servers find it at
	// their next pass.
	Deletions Waker
}

// NewModerator builds the moderation use cases.
func NewModerator(d ModeratorDeps) *Moderator {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.Log = d.Log.With("component", "moderation")
	if d.Registrations == "" {
		d.Registrations = domain.RegistrationsOpen
	}
	return &Moderator{
		Block:         BlockDomainHandler{mod: d.Moderation, clock: d.Clock},
		UpdateBlock:   UpdateDomainBlockHandler{mod: d.Moderation},
		Unblock:       UnblockDomainHandler{mod: d.Moderation},
		ImportBlocks:  ImportDomainBlocksHandler{mod: d.Moderation, clock: d.Clock, log: d.Log},
		ExportBlocks:  ExportDomainBlocksHandler{mod: d.Moderation},
		Allow:         AllowDomainHandler{mod: d.Moderation, clock: d.Clock},
		Disallow:      DisallowDomainHandler{mod: d.Moderation},
		Approve:       ApproveRegistrationHandler{deps: d},
		Reject:        RejectRegistrationHandler{deps: d},
		ResolveReport: ResolveReportHandler{reports: d.Reports, clock: d.Clock, log: d.Log},
		DeletePersona: NewDeletePersonaHandler(d.Actors, d.Names, d.URLs, d.Clock, d.Log, d.Deletions),
		deps:          d,
	}
}

// Mode is the federation mode Herald runs in (HERALD_FEDERATION_MODE).
func (m *Moderator) Mode() domain.FederationMode { return m.deps.Moderation.Mode() }

// Registrations is who may sign up (HERALD_REGISTRATIONS).
func (m *Moderator) Registrations() domain.RegistrationMode { return m.deps.Registrations }

// Blocks lists the domain blocks, by domain.
func (m *Moderator) Blocks(ctx context.Context) ([]domain.DomainBlock, error) {
	bs, err := m.deps.Moderation.Blocks(ctx)
	if err != nil {
		return nil, fmt.Errorf("domain blocks: %w", err)
	}
	return bs, nil
}

// Allows lists the domain allows, by domain.
func (m *Moderator) Allows(ctx context.Context) ([]domain.DomainAllow, error) {
	as, err := m.deps.Moderation.Allows(ctx)
	if err != nil {
		return nil, fmt.Errorf("domain allows: %w", err)
	}
	return as, nil
}

// Paging bounds of the moderation lists (registrations, reports).
const (
	DefaultModerationPage = 50
	MaxModerationPage     = 500
)

func moderationLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultModerationPage, nil
	case limit < 0 || limit > MaxModerationPage:
		return 0, fmt.Errorf("%w: limit %d is not from 1 to %d", domain.ErrInvalidInput, limit, MaxModerationPage)
	}
	return limit, nil
}

// Pending lists the sign-ups awaiting approval, oldest first, at most
// limit (0: DefaultModerationPage).
func (m *Moderator) Pending(ctx context.Context, limit int) ([]domain.RootUser, error) {
	limit, err := moderationLimit(limit)
	if err != nil {
		return nil, err
	}
	us, err := m.deps.Users.UsersByStatus(ctx, domain.UserPending, limit)
	if err != nil {
		return nil, fmt.Errorf("pending sign-ups: %w", err)
	}
	return us, nil
}

// Reports lists the reports newest first, only the open ones when open is
// true, at most limit (0: DefaultModerationPage).
func (m *Moderator) Reports(ctx context.Context, open bool, limit int) ([]domain.Report, error) {
	limit, err := moderationLimit(limit)
	if err != nil {
		return nil, err
	}
	rs, err := m.deps.Reports.Reports(ctx, open, limit)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	return rs, nil
}

// Report returns one report; domain.ErrNotFound if there is none.
func (m *Moderator) Report(ctx context.Context, id string) (domain.Report, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return domain.Report{}, fmt.Errorf("%w: report id is empty", domain.ErrInvalidInput)
	}
	return m.deps.Reports.Report(ctx, id)
}
