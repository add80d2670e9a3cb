package application

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// ExportDomainBlocksHandler writes the domain blocks as Mastodon exports
// them, so other operators (Mastodon's, GoToSocial's, Herald's) can import
// the list: the header `#domain,#severity,#reject_media,#reject_reports,
// #public_comment,#obfuscate` and a line per block, by domain. The
// operators' own reason stays here, as Mastodon keeps its private comment.
type ExportDomainBlocksHandler struct{ mod *Moderation }

// Handle writes the list to w and returns how many blocks it holds.
func (h ExportDomainBlocksHandler) Handle(ctx context.Context, w io.Writer) (int, error) {
	bs, err := h.mod.Blocks(ctx)
	if err != nil {
		return 0, fmt.Errorf("domain blocks: %w", err)
	}
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"#domain", "#severity", "#reject_media", "#reject_reports", "#public_comment", "#obfuscate"})
	for _, b := range bs {
		_ = cw.Write([]string{b.Domain, string(b.Severity), strconv.FormatBool(b.RejectMedia), strconv.FormatBool(b.RejectReports),
			b.PublicComment, strconv.FormatBool(b.Obfuscate)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return 0, fmt.Errorf("write the list: %w", err)
	}
	return len(bs), nil
}
