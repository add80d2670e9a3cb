package application

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// ImportDomainBlocks asks to import a domain-block list in Mastodon's CSV
// format (its admin export: `#domain,#severity,#reject_media,
// #reject_reports,#public_comment,#obfuscate`), the format operators share
// lists in. A header line names the columns, in any order; only #domain
// is required (#severity defaults to suspend, as Mastodon's import has it,
// the flags to false); a `#private_comment` column, which some list tools
// add, becomes the block's reason. DryRun computes the changes and makes
// none.
type ImportDomainBlocks struct {
	CSV    io.Reader
	DryRun bool
}

// MaxImportRows bounds one import, as Mastodon's does (20,000 rows).
const MaxImportRows = 20_000

// ImportChange is one block an import adds or changes (or would).
type ImportChange struct {
	Line  int // in the file, from 1 (the header)
	Block domain.DomainBlock
	// Before is the block as it stood, for a change.
	Before *domain.DomainBlock
}

// ImportLine is a line an import leaves alone, and why.
type ImportLine struct {
	Line   int
	Domain string // as written
	Why    string
}

// ImportResult says what an import changed, or what it would change on a
// dry run. Every data line of the file is in exactly one of the lists.
type ImportResult struct {
	DryRun    bool
	Added     []ImportChange
	Changed   []ImportChange
	Unchanged []ImportChange
	// Skipped are valid lines that change nothing by design: Mastodon's
	// severity noop, a domain listed twice, one a broader block covers
	// already.
	Skipped []ImportLine
	// Invalid are lines that cannot be a block: a malformed domain,
	// severity or flag, a comment over the limit.
	Invalid []ImportLine
	// IgnoredColumns are header columns Herald does not read.
	IgnoredColumns []string
	// What the suspensions applied ended (zero on a dry run).
	JobsEnded      int
	FollowsRemoved int
}

// ImportDomainBlocksHandler imports a list: new domains are blocked,
// blocked ones changed where the list differs, through Moderation (a
// suspension ends the domain's queued deliveries and follows, as one made
// by hand does).
type ImportDomainBlocksHandler struct {
	mod   *Moderation
	clock ports.Clock
	log   *slog.Logger
}

// Handle reads the list, plans and, unless cmd.DryRun, applies it. A file
// that is not CSV, has no header with a domain column or has more than
// MaxImportRows lines is domain.ErrInvalidInput and changes nothing;
// a bad line is reported in Invalid and the others are imported. When an
// apply fails half way the result holds what was applied before it.
func (h ImportDomainBlocksHandler) Handle(ctx context.Context, cmd ImportDomainBlocks) (ImportResult, error) {
	rows, ignored, err := readBlockList(cmd.CSV)
	if err != nil {
		return ImportResult{}, err
	}
	current, err := h.mod.Blocks(ctx)
	if err != nil {
		return ImportResult{}, fmt.Errorf("domain blocks: %w", err)
	}
	res := planImport(rows, current, h.clock)
	res.IgnoredColumns, res.DryRun = ignored, cmd.DryRun
	if cmd.DryRun {
		return res, nil
	}
	applied := ImportResult{DryRun: false, Unchanged: res.Unchanged, Skipped: res.Skipped, Invalid: res.Invalid, IgnoredColumns: ignored}
	total := len(res.Added) + len(res.Changed)
	apply := func(c ImportChange, f func(context.Context, domain.DomainBlock) (Blocked, error), into *[]ImportChange) error {
		done, err := f(ctx, c.Block)
		applied.JobsEnded += done.JobsEnded
		applied.FollowsRemoved += done.FollowsRemoved
		if err != nil {
			return fmt.Errorf("line %d (%s): %w; %d of the %d changes were applied before it",
				c.Line, c.Block.Domain, err, len(applied.Added)+len(applied.Changed), total)
		}
		*into = append(*into, c)
		return nil
	}
	for _, c := range res.Added {
		if err := apply(c, h.mod.Block, &applied.Added); err != nil {
			return applied, err
		}
	}
	for _, c := range res.Changed {
		if err := apply(c, h.mod.UpdateBlock, &applied.Changed); err != nil {
			return applied, err
		}
	}
	h.log.InfoContext(ctx, "domain-block list imported", "added", len(applied.Added), "changed", len(applied.Changed),
		"unchanged", len(applied.Unchanged), "skipped", len(applied.Skipped), "invalid", len(applied.Invalid),
		"jobs_ended", applied.JobsEnded, "follows_removed", applied.FollowsRemoved)
	return applied, nil
}

// blockRow is one data line of a list, its cells by column name.
type blockRow struct {
	line  int
	cells map[string]string
	has   map[string]bool // the header names the column
}

// The columns of Mastodon's export, without their '#'.
var blockColumns = []string{"domain", "severity", "reject_media", "reject_reports", "public_comment", "obfuscate"}

// readBlockList reads the header and the data lines.
func readBlockList(r io.Reader) ([]blockRow, []string, error) {
	if r == nil {
		return nil, nil, fmt.Errorf("%w: no list given", domain.ErrInvalidInput)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // Mastodon's own lines may leave trailing cells out
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("%w: the list is empty; want a header line such as #domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate", domain.ErrInvalidInput)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: not a CSV file: %v", domain.ErrInvalidInput, err)
	}
	cols := make([]string, len(header))
	has := map[string]bool{}
	var ignored []string
	for i, c := range header {
		name := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(strings.TrimPrefix(c, "\ufeff"))), "#")
		known := name == "private_comment"
		for _, k := range blockColumns {
			known = known || name == k
		}
		if !known || has[name] {
			ignored = append(ignored, strings.TrimSpace(c))
			continue
		}
		cols[i], has[name] = name, true
	}
	if !has["domain"] {
		return nil, nil, fmt.Errorf("%w: the first line is not a header with a #domain column (want #domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate as Mastodon exports it)", domain.ErrInvalidInput)
	}
	var rows []blockRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, ignored, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: not a CSV file: %v", domain.ErrInvalidInput, err)
		}
		if len(rows) == MaxImportRows {
			return nil, nil, fmt.Errorf("%w: the list has more than %d lines; split it", domain.ErrInvalidInput, MaxImportRows)
		}
		line, _ := cr.FieldPos(0)
		row := blockRow{line: line, cells: map[string]string{}, has: has}
		for i, v := range rec {
			if i < len(cols) && cols[i] != "" {
				row.cells[cols[i]] = strings.TrimSpace(v)
			}
		}
		rows = append(rows, row)
	}
}

// planImport sorts every row into the result's lists against the blocks
// stored now.
func planImport(rows []blockRow, current []domain.DomainBlock, clock ports.Clock) ImportResult {
	var res ImportResult
	stored := make(map[string]domain.DomainBlock, len(current))
	for _, b := range current {
		stored[b.Domain] = b
	}
	existing := domain.NewPolicy(domain.FederationBlocklist, current, nil)
	seen := map[string]int{}
	for _, row := range rows {
		written := row.cells["domain"]
		skip := func(why string) {
			res.Skipped = append(res.Skipped, ImportLine{Line: row.line, Domain: written, Why: why})
		}
		invalid := func(why string) {
			res.Invalid = append(res.Invalid, ImportLine{Line: row.line, Domain: written, Why: why})
		}

		b, noop, err := row.block(clock)
		if err != nil {
			invalid(strings.TrimPrefix(err.Error(), domain.ErrInvalidInput.Error()+": "))
			continue
		}
		if first, ok := seen[b.Domain]; ok {
			skip(fmt.Sprintf("listed again (first at line %d)", first))
			continue
		}
		seen[b.Domain] = row.line
		if noop {
			skip("severity noop: Mastodon's block that only limits media; Herald has no such block")
			continue
		}
		cur, ok := stored[b.Domain]
		if !ok {
			// A broader block decides for this domain now; a narrower one
			// of the list would take over from it, so it is added only
			// where it is stricter (a suspension under a silence).
			if v := existing.Of(b.Domain); v.Domain != "" && !(b.Severity == domain.SeveritySuspend && v.Severity == domain.SeveritySilence) {
				skip(fmt.Sprintf("covered by the block of %s (%s)", v.Domain, v.Severity))
				continue
			}
			res.Added = append(res.Added, ImportChange{Line: row.line, Block: b})
			continue
		}
		next := cur
		next.Severity, next.PublicComment = b.Severity, b.PublicComment
		next.RejectMedia, next.RejectReports, next.Obfuscate = b.RejectMedia, b.RejectReports, b.Obfuscate
		if row.has["private_comment"] {
			next.Reason = b.Reason
		}
		if next == cur {
			res.Unchanged = append(res.Unchanged, ImportChange{Line: row.line, Block: cur})
			continue
		}
		before := cur
		res.Changed = append(res.Changed, ImportChange{Line: row.line, Block: next, Before: &before})
	}
	return res
}

// block is the row's block, or noop for Mastodon's severity noop.
func (r blockRow) block(clock ports.Clock) (b domain.DomainBlock, noop bool, err error) {
	sev := strings.ToLower(r.cells["severity"])
	switch {
	case !r.has["severity"]:
		sev = string(domain.SeveritySuspend)
	case sev == "noop":
		noop = true
		sev = string(domain.SeveritySilence) // checked as a block all the same
	case sev == "":
		return b, false, fmt.Errorf("%w: no severity (want suspend or silence)", domain.ErrInvalidInput)
	}
	b, err = domain.NewDomainBlock(r.cells["domain"], domain.Severity(sev), r.cells["private_comment"], clock.Now())
	if err != nil {
		return b, false, err
	}
	b.PublicComment = r.cells["public_comment"]
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"reject_media", &b.RejectMedia}, {"reject_reports", &b.RejectReports}, {"obfuscate", &b.Obfuscate}} {
		v := r.cells[f.name]
		if v == "" {
			continue
		}
		if *f.dst, err = strconv.ParseBool(v); err != nil {
			return b, false, fmt.Errorf("%w: #%s is %q, want true or false", domain.ErrInvalidInput, f.name, clip(v))
		}
	}
	return b, noop, b.Check()
}
