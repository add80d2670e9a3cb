package postgres

import (
	"context"
	"fmt"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.ModerationStore = (*ModerationStore)(nil)
	_ ports.ReportStore     = (*ReportStore)(nil)
)

// ModerationStore keeps the domain blocks and allows in domain_blocks and
// domain_allows (migration 021), whose primary key is the domain: a
// second block or allow of one fails the INSERT (23505,
// domain.ErrAlreadyExists).
type ModerationStore struct{ pool *pgxpool.Pool }

// NewModerationStore returns the store on pool.
func NewModerationStore(pool *pgxpool.Pool) *ModerationStore { return &ModerationStore{pool: pool} }

const blockColumns = `domain, severity, reason, public_comment, reject_media, reject_reports, obfuscate, created_at`

// AddDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) AddDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO domain_blocks (`+blockColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		b.Domain, string(b.Severity), b.Reason, b.PublicComment, b.RejectMedia, b.RejectReports, b.Obfuscate, b.CreatedAt)
	if err != nil {
		return fmt.Errorf("block of %s: %w", b.Domain, interpretError(err))
	}
	return nil
}

// UpdateDomainBlock implements ports.ModerationStore: every column but
// the domain and created_at.
func (s *ModerationStore) UpdateDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	tag, err := s.pool.Exec(ctx, `
UPDATE domain_blocks SET severity = $2, reason = $3, public_comment = $4, reject_media = $5, reject_reports = $6, obfuscate = $7
WHERE domain = $1`, b.Domain, string(b.Severity), b.Reason, b.PublicComment, b.RejectMedia, b.RejectReports, b.Obfuscate)
	if err != nil {
		return fmt.Errorf("block of %s: %w", b.Domain, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("block of %s: %w", b.Domain, domain.ErrNotFound)
	}
	return nil
}

// RemoveDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainBlock(ctx context.Context, d string) error {
	return s.remove(ctx, "block", `DELETE FROM domain_blocks WHERE domain = $1`, d)
}

// remove runs one DELETE of a domain's row; q is one of this file's
// constants, never input.
func (s *ModerationStore) remove(ctx context.Context, what, q, d string) error {
	tag, err := s.pool.Exec(ctx, q, d)
	if err != nil {
		return fmt.Errorf("remove the %s of %s: %w", what, d, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s of %s: %w", what, d, domain.ErrNotFound)
	}
	return nil
}

// DomainBlocks implements ports.ModerationStore, in the primary key's
// (byte) order.
func (s *ModerationStore) DomainBlocks(ctx context.Context) ([]domain.DomainBlock, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+blockColumns+` FROM domain_blocks ORDER BY domain`)
	out := []domain.DomainBlock{}
	if err == nil {
		var b domain.DomainBlock
		var severity string
		_, err = pgx.ForEachRow(rows, []any{&b.Domain, &severity, &b.Reason, &b.PublicComment, &b.RejectMedia, &b.RejectReports, &b.Obfuscate, &b.CreatedAt},
			func() error {
				b.Severity, b.CreatedAt = domain.Severity(severity), b.CreatedAt.UTC()
				out = append(out, b)
				return nil
			})
	}
	if err != nil {
		return nil, fmt.Errorf("domain blocks: %w", interpretError(err))
	}
	return out, nil
}

// AddDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) AddDomainAllow(ctx context.Context, a domain.DomainAllow) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO domain_allows (domain, created_at) VALUES ($1, $2)`, a.Domain, a.CreatedAt)
	if err != nil {
		return fmt.Errorf("allow of %s: %w", a.Domain, interpretError(err))
	}
	return nil
}

// RemoveDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainAllow(ctx context.Context, d string) error {
	return s.remove(ctx, "allow", `DELETE FROM domain_allows WHERE domain = $1`, d)
}

// DomainAllows implements ports.ModerationStore, in the primary key's
// (byte) order.
func (s *ModerationStore) DomainAllows(ctx context.Context) ([]domain.DomainAllow, error) {
	rows, err := s.pool.Query(ctx, `SELECT domain, created_at FROM domain_allows ORDER BY domain`)
	out := []domain.DomainAllow{}
	if err == nil {
		var a domain.DomainAllow
		_, err = pgx.ForEachRow(rows, []any{&a.Domain, &a.CreatedAt}, func() error {
			a.CreatedAt = a.CreatedAt.UTC()
			out = append(out, a)
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("domain allows: %w", interpretError(err))
	}
	return out, nil
}

// ReportStore keeps the reports in reports (migration 021), one per Flag
// by reports_activity_id_key.
type ReportStore struct{ pool *pgxpool.Pool }

// NewReportStore returns the store on pool.
func NewReportStore(pool *pgxpool.Pool) *ReportStore { return &ReportStore{pool: pool} }

const reportColumns = `id, activity_id, reporter_uri, targets, objects, comment, created_at, resolved_at, resolution`

func scanReport(row pgx.Row) (domain.Report, error) {
	var r domain.Report
	var resolved pgtype.Timestamptz
	if err := row.Scan(&r.ID, &r.ActivityID, &r.ReporterURI, &r.Targets, &r.Objects, &r.Comment, &r.CreatedAt, &resolved, &r.Resolution); err != nil {
		return domain.Report{}, err
	}
	r.CreatedAt, r.ResolvedAt = r.CreatedAt.UTC(), fromOpt(resolved)
	return r, nil
}

// orEmpty is uris, or an empty list for none: the columns are NOT NULL.
func orEmpty(uris []string) []string {
	if uris == nil {
		return []string{}
	}
	return uris
}

// AddReport implements ports.ReportStore: ON CONFLICT (activity_id) DO
// NOTHING keeps the first report of a Flag, concurrent deliveries
// included; an id another Flag's report has fails on the primary key
// (domain.ErrAlreadyExists).
func (s *ReportStore) AddReport(ctx context.Context, r domain.Report) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
INSERT INTO reports (`+reportColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (activity_id) DO NOTHING`,
		r.ID, r.ActivityID, r.ReporterURI, orEmpty(r.Targets), orEmpty(r.Objects), r.Comment, r.CreatedAt, optTime(r.ResolvedAt), r.Resolution)
	if err != nil {
		return false, fmt.Errorf("report %s: %w", r.ID, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// Report implements ports.ReportStore.
func (s *ReportStore) Report(ctx context.Context, id string) (domain.Report, error) {
	r, err := scanReport(s.pool.QueryRow(ctx, `SELECT `+reportColumns+` FROM reports WHERE id = $1`, id))
	if err != nil {
		return domain.Report{}, fmt.Errorf("report %s: %w", id, interpretError(err))
	}
	return r, nil
}

// Reports implements ports.ReportStore along reports_created_at_idx.
func (s *ReportStore) Reports(ctx context.Context, open bool, limit int) ([]domain.Report, error) {
	where := ""
	if open {
		where = `WHERE resolved_at IS NULL `
	}
	out, err := query(ctx, s.pool, scanReport, `SELECT `+reportColumns+` FROM reports `+where+`ORDER BY created_at DESC, id DESC LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("reports: %w", interpretError(err))
	}
	return out, nil
}

// ResolveReport implements ports.ReportStore in one UPDATE: a report
// resolved already keeps its resolution (a concurrent resolution waits
// for the row and then reads the newest version), and still counts as
// found.
func (s *ReportStore) ResolveReport(ctx context.Context, id string, at time.Time, note string) error {
	tag, err := s.pool.Exec(ctx, `
UPDATE reports SET resolved_at = COALESCE(resolved_at, $2), resolution = CASE WHEN resolved_at IS NULL THEN $3 ELSE resolution END
WHERE id = $1`, id, at, note)
	if err != nil {
		return fmt.Errorf("resolve report %s: %w", id, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("report %s: %w", id, domain.ErrNotFound)
	}
	return nil
}
