package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.ModerationStore = (*ModerationStore)(nil)
	_ ports.ReportStore     = (*ReportStore)(nil)
)

// ModerationStore keeps the domain blocks and allows in domain_blocks and
// domain_allows (migration 012), whose primary key is the domain: a
// second block or allow of one fails the INSERT (domain.ErrAlreadyExists).
type ModerationStore struct{ db *DB }

// NewModerationStore returns the store on db.
func NewModerationStore(db *DB) *ModerationStore { return &ModerationStore{db: db} }

const blockColumns = `domain, severity, reason, public_comment, reject_media, reject_reports, obfuscate, created_at`

// AddDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) AddDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	_, err := s.db.w.ExecContext(ctx, `INSERT INTO domain_blocks (`+blockColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		b.Domain, string(b.Severity), b.Reason, b.PublicComment, b.RejectMedia, b.RejectReports, b.Obfuscate, stamp(b.CreatedAt))
	if err != nil {
		return fmt.Errorf("block of %s: %w", b.Domain, interpretError(err))
	}
	return nil
}

// UpdateDomainBlock implements ports.ModerationStore: every column but
// the domain and created_at.
func (s *ModerationStore) UpdateDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	res, err := s.db.w.ExecContext(ctx, `
UPDATE domain_blocks SET severity = ?2, reason = ?3, public_comment = ?4, reject_media = ?5, reject_reports = ?6, obfuscate = ?7
WHERE domain = ?1`, b.Domain, string(b.Severity), b.Reason, b.PublicComment, b.RejectMedia, b.RejectReports, b.Obfuscate)
	if err != nil {
		return fmt.Errorf("block of %s: %w", b.Domain, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("block of %s: %w", b.Domain, domain.ErrNotFound)
	}
	return nil
}

// RemoveDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainBlock(ctx context.Context, d string) error {
	return s.remove(ctx, "block", `DELETE FROM domain_blocks WHERE domain = ?`, d)
}

// remove runs one DELETE of a domain's row; q is one of this file's
// constants, never input.
func (s *ModerationStore) remove(ctx context.Context, what, q, d string) error {
	res, err := s.db.w.ExecContext(ctx, q, d)
	if err != nil {
		return fmt.Errorf("remove the %s of %s: %w", what, d, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("%s of %s: %w", what, d, domain.ErrNotFound)
	}
	return nil
}

// DomainBlocks implements ports.ModerationStore, in the primary key's
// (byte) order.
func (s *ModerationStore) DomainBlocks(ctx context.Context) ([]domain.DomainBlock, error) {
	out, err := query(ctx, s.db, func(r scanner) (domain.DomainBlock, error) {
		var b domain.DomainBlock
		var severity string
		var created int64
		err := r.Scan(&b.Domain, &severity, &b.Reason, &b.PublicComment, &b.RejectMedia, &b.RejectReports, &b.Obfuscate, &created)
		b.Severity, b.CreatedAt = domain.Severity(severity), fromNanos(sql.NullInt64{Int64: created, Valid: true})
		return b, err
	}, `SELECT `+blockColumns+` FROM domain_blocks ORDER BY domain`)
	if err != nil {
		return nil, fmt.Errorf("domain blocks: %w", interpretError(err))
	}
	return out, nil
}

// AddDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) AddDomainAllow(ctx context.Context, a domain.DomainAllow) error {
	_, err := s.db.w.ExecContext(ctx, `INSERT INTO domain_allows (domain, created_at) VALUES (?, ?)`, a.Domain, stamp(a.CreatedAt))
	if err != nil {
		return fmt.Errorf("allow of %s: %w", a.Domain, interpretError(err))
	}
	return nil
}

// RemoveDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainAllow(ctx context.Context, d string) error {
	return s.remove(ctx, "allow", `DELETE FROM domain_allows WHERE domain = ?`, d)
}

// DomainAllows implements ports.ModerationStore, in the primary key's
// (byte) order.
func (s *ModerationStore) DomainAllows(ctx context.Context) ([]domain.DomainAllow, error) {
	out, err := query(ctx, s.db, func(r scanner) (domain.DomainAllow, error) {
		var a domain.DomainAllow
		var created int64
		err := r.Scan(&a.Domain, &created)
		a.CreatedAt = fromNanos(sql.NullInt64{Int64: created, Valid: true})
		return a, err
	}, `SELECT domain, created_at FROM domain_allows ORDER BY domain`)
	if err != nil {
		return nil, fmt.Errorf("domain allows: %w", interpretError(err))
	}
	return out, nil
}

// ReportStore keeps the reports in reports (migration 012), one per Flag
// by reports_activity_id_key.
type ReportStore struct{ db *DB }

// NewReportStore returns the store on db.
func NewReportStore(db *DB) *ReportStore { return &ReportStore{db: db} }

const reportColumns = `id, activity_id, reporter_uri, targets, objects, comment, created_at, resolved_at, resolution`

func scanReport(row scanner) (domain.Report, error) {
	var r domain.Report
	var targets, objects string
	var created int64
	var resolved sql.NullInt64
	if err := row.Scan(&r.ID, &r.ActivityID, &r.ReporterURI, &targets, &objects, &r.Comment, &created, &resolved, &r.Resolution); err != nil {
		return domain.Report{}, err
	}
	if err := json.Unmarshal([]byte(targets), &r.Targets); err != nil {
		return domain.Report{}, fmt.Errorf("targets of report %s: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(objects), &r.Objects); err != nil {
		return domain.Report{}, fmt.Errorf("objects of report %s: %w", r.ID, err)
	}
	r.CreatedAt, r.ResolvedAt = fromNanos(sql.NullInt64{Int64: created, Valid: true}), fromNanos(resolved)
	return r, nil
}

// uriList is a list of URIs as a JSON array, [] for none.
func uriList(uris []string) (string, error) {
	if len(uris) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(uris)
	return string(b), err
}

// AddReport implements ports.ReportStore: ON CONFLICT (activity_id) DO
// NOTHING keeps the first report of a Flag; an id another Flag's report
// has fails on the primary key (domain.ErrAlreadyExists).
func (s *ReportStore) AddReport(ctx context.Context, r domain.Report) (bool, error) {
	targets, err := uriList(r.Targets)
	if err != nil {
		return false, err
	}
	objects, err := uriList(r.Objects)
	if err != nil {
		return false, err
	}
	res, err := s.db.w.ExecContext(ctx, `
INSERT INTO reports (`+reportColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (activity_id) DO NOTHING`,
		r.ID, r.ActivityID, r.ReporterURI, targets, objects, r.Comment, stamp(r.CreatedAt), nanos(r.ResolvedAt), r.Resolution)
	if err != nil {
		return false, fmt.Errorf("report %s: %w", r.ID, interpretError(err))
	}
	return affected(res) == 1, nil
}

// Report implements ports.ReportStore.
func (s *ReportStore) Report(ctx context.Context, id string) (domain.Report, error) {
	r, err := scanReport(s.db.r.QueryRowContext(ctx, `SELECT `+reportColumns+` FROM reports WHERE id = ?`, id))
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
	out, err := query(ctx, s.db, scanReport, `SELECT `+reportColumns+` FROM reports `+where+`ORDER BY created_at DESC, id DESC LIMIT ?`,
		limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("reports: %w", interpretError(err))
	}
	return out, nil
}

// ResolveReport implements ports.ReportStore in one UPDATE: a report
// resolved already keeps its resolution, and still counts as found (SQLite
// counts the rows a WHERE matched, changed or not).
func (s *ReportStore) ResolveReport(ctx context.Context, id string, at time.Time, note string) error {
	res, err := s.db.w.ExecContext(ctx, `
UPDATE reports SET resolved_at = coalesce(resolved_at, ?2), resolution = CASE WHEN resolved_at IS NULL THEN ?3 ELSE resolution END
WHERE id = ?1`, id, stamp(at), note)
	if err != nil {
		return fmt.Errorf("resolve report %s: %w", id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("report %s: %w", id, domain.ErrNotFound)
	}
	return nil
}
