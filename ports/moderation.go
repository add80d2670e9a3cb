package ports

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
)

// ModerationStore keeps the operator's federation decisions (SPEC §11):
// domain blocks and, for allowlist mode, domain allows. Both are unique by
// their normalized domain.
type ModerationStore interface {
	// AddDomainBlock inserts b; domain.ErrAlreadyExists if its domain is
	// blocked already (the stored block is left as it is).
	AddDomainBlock(ctx context.Context, b domain.DomainBlock) error
	// UpdateDomainBlock replaces the block of b.Domain (severity,
	// comments, flags; CreatedAt is kept); domain.ErrNotFound if none.
	UpdateDomainBlock(ctx context.Context, b domain.DomainBlock) error
	// RemoveDomainBlock deletes the block of d; domain.ErrNotFound if none.
	RemoveDomainBlock(ctx context.Context, d string) error
	// DomainBlocks lists every block, by domain.
	DomainBlocks(ctx context.Context) ([]domain.DomainBlock, error)
	// AddDomainAllow inserts a; domain.ErrAlreadyExists if its domain is
	// allowed already.
	AddDomainAllow(ctx context.Context, a domain.DomainAllow) error
	// RemoveDomainAllow deletes the allow of d; domain.ErrNotFound if none.
	RemoveDomainAllow(ctx context.Context, d string) error
	// DomainAllows lists every allow, by domain.
	DomainAllows(ctx context.Context) ([]domain.DomainAllow, error)
}

// ReportStore keeps the reports (Flags) other servers send, for the
// operator.
type ReportStore interface {
	// AddReport inserts r, once per ActivityID: created is false (and the
	// stored one kept) when a report of that Flag exists.
	AddReport(ctx context.Context, r domain.Report) (created bool, err error)
	// Report returns one report or domain.ErrNotFound.
	Report(ctx context.Context, id string) (domain.Report, error)
	// Reports lists newest first (CreatedAt, then ID), only the open ones
	// when open is true, at most limit.
	Reports(ctx context.Context, open bool, limit int) ([]domain.Report, error)
	// ResolveReport marks an open report resolved at `at` with the
	// operator's note; domain.ErrNotFound if there is no such report, and
	// a report resolved already keeps its first resolution (no error).
	ResolveReport(ctx context.Context, id string, at time.Time, note string) error
}
