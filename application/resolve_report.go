package application

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// ResolveReport closes a report with the operator's note.
type ResolveReport struct {
	ID   string
	Note string // what was done; at most domain.MaxReasonLength characters
}

// ResolveReportHandler resolves reports.
type ResolveReportHandler struct {
	reports ports.ReportStore
	clock   ports.Clock
	log     *slog.Logger
}

// Handle resolves the report and returns it: domain.ErrNotFound for an
// unknown id. A report resolved already keeps its first resolution.
func (h ResolveReportHandler) Handle(ctx context.Context, cmd ResolveReport) (domain.Report, error) {
	id, note := strings.TrimSpace(cmd.ID), strings.TrimSpace(cmd.Note)
	if id == "" {
		return domain.Report{}, fmt.Errorf("%w: report id is empty", domain.ErrInvalidInput)
	}
	if n := utf8.RuneCountInString(note); n > domain.MaxReasonLength {
		return domain.Report{}, fmt.Errorf("%w: the note is %d characters, at most %d", domain.ErrInvalidInput, n, domain.MaxReasonLength)
	}
	if err := h.reports.ResolveReport(ctx, id, h.clock.Now(), note); err != nil {
		return domain.Report{}, err
	}
	h.log.InfoContext(ctx, "report resolved", "report_id", id)
	return h.reports.Report(ctx, id)
}
