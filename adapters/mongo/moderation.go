package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.ModerationStore = (*ModerationStore)(nil)
	_ ports.ReportStore     = (*ReportStore)(nil)
)

// ModerationStore keeps the domain blocks (domain_blocks) and allows
// (domain_allows), each keyed by its domain, so the _id index keeps one
// per domain: a second insert is a duplicate key, domain.ErrAlreadyExists.
type ModerationStore struct {
	blocks, allows *mongodrv.Collection
}

// NewModerationStore returns the store of db.
func NewModerationStore(db *mongodrv.Database) *ModerationStore {
	return &ModerationStore{blocks: collection(db, collDomainBlocks), allows: collection(db, collDomainAllows)}
}

type blockDoc struct {
	Domain        string    `bson:"_id"`
	Severity      string    `bson:"severity"`
	Reason        string    `bson:"reason"`
	PublicComment string    `bson:"publicComment"`
	RejectMedia   bool      `bson:"rejectMedia"`
	RejectReports bool      `bson:"rejectReports"`
	Obfuscate     bool      `bson:"obfuscate"`
	CreatedAt     time.Time `bson:"createdAt"`
}

func (d blockDoc) block() domain.DomainBlock {
	return domain.DomainBlock{Domain: d.Domain, Severity: domain.Severity(d.Severity), Reason: d.Reason, PublicComment: d.PublicComment,
		RejectMedia: d.RejectMedia, RejectReports: d.RejectReports, Obfuscate: d.Obfuscate, CreatedAt: d.CreatedAt.UTC()}
}

type allowDoc struct {
	Domain    string    `bson:"_id"`
	CreatedAt time.Time `bson:"createdAt"`
}

// AddDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) AddDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	err := insertOne(ctx, s.blocks, blockDoc{Domain: b.Domain, Severity: string(b.Severity), Reason: b.Reason, PublicComment: b.PublicComment,
		RejectMedia: b.RejectMedia, RejectReports: b.RejectReports, Obfuscate: b.Obfuscate, CreatedAt: b.CreatedAt.UTC()})
	if err != nil {
		return fmt.Errorf("block of %s: %w", b.Domain, interpretError(err, nil))
	}
	return nil
}

// UpdateDomainBlock implements ports.ModerationStore: every field but the
// domain and createdAt, in one UpdateOne.
func (s *ModerationStore) UpdateDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	res, err := s.blocks.UpdateOne(ctx, bson.D{{Key: "_id", Value: b.Domain}}, bson.D{{Key: "$set", Value: bson.D{
		{Key: "severity", Value: string(b.Severity)}, {Key: "reason", Value: b.Reason}, {Key: "publicComment", Value: b.PublicComment},
		{Key: "rejectMedia", Value: b.RejectMedia}, {Key: "rejectReports", Value: b.RejectReports}, {Key: "obfuscate", Value: b.Obfuscate},
	}}})
	if err != nil {
		return fmt.Errorf("block of %s: %w", b.Domain, interpretError(err, nil))
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("block of %s: %w", b.Domain, domain.ErrNotFound)
	}
	return nil
}

// RemoveDomainBlock implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainBlock(ctx context.Context, d string) error {
	return deleteByID(ctx, s.blocks, "block of", d)
}

// DomainBlocks implements ports.ModerationStore, along _id.
func (s *ModerationStore) DomainBlocks(ctx context.Context) ([]domain.DomainBlock, error) {
	return findAll(ctx, s.blocks, bson.D{}, "domain blocks", blockDoc.block, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
}

// AddDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) AddDomainAllow(ctx context.Context, a domain.DomainAllow) error {
	if err := insertOne(ctx, s.allows, allowDoc{Domain: a.Domain, CreatedAt: a.CreatedAt.UTC()}); err != nil {
		return fmt.Errorf("allow of %s: %w", a.Domain, interpretError(err, nil))
	}
	return nil
}

// RemoveDomainAllow implements ports.ModerationStore.
func (s *ModerationStore) RemoveDomainAllow(ctx context.Context, d string) error {
	return deleteByID(ctx, s.allows, "allow of", d)
}

// DomainAllows implements ports.ModerationStore, along _id.
func (s *ModerationStore) DomainAllows(ctx context.Context) ([]domain.DomainAllow, error) {
	return findAll(ctx, s.allows, bson.D{}, "domain allows", func(d allowDoc) domain.DomainAllow {
		return domain.DomainAllow{Domain: d.Domain, CreatedAt: d.CreatedAt.UTC()}
	}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
}

// ReportStore keeps the reports in reports, keyed by id, one per Flag by
// the unique reports_activity_id index.
type ReportStore struct{ reports *mongodrv.Collection }

// NewReportStore returns the store of db.
func NewReportStore(db *mongodrv.Database) *ReportStore {
	return &ReportStore{reports: collection(db, collReports)}
}

// reportDoc has no resolvedAt while the report is open.
type reportDoc struct {
	ID          string    `bson:"_id"`
	ActivityID  string    `bson:"activityId"`
	ReporterURI string    `bson:"reporterUri"`
	Targets     []string  `bson:"targets"`
	Objects     []string  `bson:"objects"`
	Comment     string    `bson:"comment"`
	CreatedAt   time.Time `bson:"createdAt"`
	ResolvedAt  time.Time `bson:"resolvedAt,omitempty"`
	Resolution  string    `bson:"resolution,omitempty"`
}

func (d reportDoc) report() domain.Report {
	return domain.Report{ID: d.ID, ActivityID: d.ActivityID, ReporterURI: d.ReporterURI, Targets: d.Targets, Objects: d.Objects,
		Comment: d.Comment, CreatedAt: d.CreatedAt.UTC(), ResolvedAt: utc(d.ResolvedAt), Resolution: d.Resolution}
}

// AddReport implements ports.ReportStore: an insert, which the unique
// reports_activity_id index refuses for a Flag reported already
// (concurrent deliveries included). A duplicate key is then that (the
// Flag's report is found: created is false), or the id another Flag's
// report has (domain.ErrAlreadyExists); a server that names no index
// (FerretDB) is answered the same way, by the lookup.
func (s *ReportStore) AddReport(ctx context.Context, r domain.Report) (bool, error) {
	err := insertOne(ctx, s.reports, reportDoc{ID: r.ID, ActivityID: r.ActivityID, ReporterURI: r.ReporterURI,
		Targets: orEmpty(r.Targets), Objects: orEmpty(r.Objects), Comment: r.Comment, CreatedAt: r.CreatedAt.UTC(),
		ResolvedAt: utc(r.ResolvedAt), Resolution: r.Resolution})
	if err == nil {
		return true, nil
	}
	if err = interpretError(err, nil); !errors.Is(err, domain.ErrAlreadyExists) {
		return false, fmt.Errorf("report %s: %w", r.ID, err)
	}
	n, cerr := s.reports.CountDocuments(ctx, bson.D{{Key: "activityId", Value: r.ActivityID}}, options.Count().SetLimit(1))
	switch {
	case cerr != nil:
		return false, fmt.Errorf("report %s: %w (and the lookup that would say which key failed: %v)", r.ID, err, interpretError(cerr, nil))
	case n > 0:
		return false, nil
	}
	return false, fmt.Errorf("report %s: %w", r.ID, err)
}

// orEmpty is uris, or an empty array for none (never a null).
func orEmpty(uris []string) []string {
	if uris == nil {
		return []string{}
	}
	return uris
}

// Report implements ports.ReportStore.
func (s *ReportStore) Report(ctx context.Context, id string) (domain.Report, error) {
	var d reportDoc
	if err := s.reports.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return domain.Report{}, fmt.Errorf("report %s: %w", id, interpretError(err, nil))
	}
	return d.report(), nil
}

// Reports implements ports.ReportStore along reports_created.
func (s *ReportStore) Reports(ctx context.Context, open bool, limit int) ([]domain.Report, error) {
	filter := bson.D{}
	if open {
		filter = bson.D{{Key: "resolvedAt", Value: bson.D{{Key: "$exists", Value: false}}}}
	}
	opts := options.Find().SetSort(bson.D{{Key: "createdAt", Value: -1}, {Key: "_id", Value: -1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.reports, filter, "reports", reportDoc.report, opts)
}

// ResolveReport implements ports.ReportStore: one UpdateOne of the report
// while it has no resolvedAt (the server checks that again as it writes,
// so of two resolutions one stands, whole); when it matched nothing, a
// lookup tells a resolved report (no error) from none.
func (s *ReportStore) ResolveReport(ctx context.Context, id string, at time.Time, note string) error {
	res, err := s.reports.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "resolvedAt", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "resolvedAt", Value: at.UTC()}, {Key: "resolution", Value: note}}}})
	if err != nil {
		return fmt.Errorf("resolve report %s: %w", id, interpretError(err, nil))
	}
	if res.MatchedCount > 0 {
		return nil
	}
	n, err := s.reports.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}, options.Count().SetLimit(1))
	if err != nil {
		return fmt.Errorf("resolve report %s: %w", id, interpretError(err, nil))
	}
	if n == 0 {
		return fmt.Errorf("report %s: %w", id, domain.ErrNotFound)
	}
	return nil
}
