package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// Bounds of the moderation bodies: a block's two comments of 1,000
// characters each, and a shared list (Mastodon's import takes 20,000
// lines).
const (
	maxModerationBody = 16 << 10
	maxImportBody     = 8 << 20
)

// decodeBody reads one JSON object of at most limit bytes into v; an empty
// body is allowed when emptyOK (every field then keeps its zero value).
func decodeBody(w http.ResponseWriter, r *http.Request, v any, limit int64, emptyOK bool) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return fmt.Errorf("%w: over %d bytes", errBodyTooLarge, limit)
		case errors.Is(err, io.EOF) && emptyOK:
			return nil
		case errors.Is(err, io.EOF):
			return fmt.Errorf("%w: empty body", errMalformed)
		}
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the JSON object", errMalformed)
	}
	return nil
}

// decode reads a moderation body into v as decodeBody does; when it
// cannot, it answers the error itself and reports false.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any, emptyOK bool) bool {
	if err := decodeBody(w, r, v, maxModerationBody, emptyOK); err != nil {
		h.writeError(w, r, err)
		return false
	}
	return true
}

type blockJSON struct {
	Domain        string    `json:"domain"`
	Severity      string    `json:"severity"`
	Reason        string    `json:"reason"`
	PublicComment string    `json:"public_comment"`
	RejectMedia   bool      `json:"reject_media"`
	RejectReports bool      `json:"reject_reports"`
	Obfuscate     bool      `json:"obfuscate"`
	CreatedAt     time.Time `json:"created_at"`
}

func toBlockJSON(b domain.DomainBlock) blockJSON {
	return blockJSON{Domain: b.Domain, Severity: string(b.Severity), Reason: b.Reason, PublicComment: b.PublicComment,
		RejectMedia: b.RejectMedia, RejectReports: b.RejectReports, Obfuscate: b.Obfuscate, CreatedAt: b.CreatedAt}
}

// blockedJSON is a block with what it ended (a suspension: the domain's
// queued deliveries, and its actors' follows both ways).
type blockedJSON struct {
	Block          blockJSON `json:"block"`
	JobsEnded      int       `json:"jobs_ended"`
	FollowsRemoved int       `json:"follows_removed"`
}

func toBlockedJSON(b application.Blocked) blockedJSON {
	return blockedJSON{Block: toBlockJSON(b.Block), JobsEnded: b.JobsEnded, FollowsRemoved: b.FollowsRemoved}
}

func (h *Handler) listBlocks(w http.ResponseWriter, r *http.Request) {
	bs, err := h.mod.Blocks(r.Context())
	h.reply(w, r, err, http.StatusOK, map[string]any{"mode": h.mod.Mode(), "domain_blocks": each(bs, toBlockJSON)})
}

func (h *Handler) addBlock(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Domain        string `json:"domain"`
		Severity      string `json:"severity"`
		Reason        string `json:"reason"`
		PublicComment string `json:"public_comment"`
		RejectMedia   bool   `json:"reject_media"`
		RejectReports bool   `json:"reject_reports"`
		Obfuscate     bool   `json:"obfuscate"`
	}
	if !h.decode(w, r, &in, false) {
		return
	}
	res, err := h.mod.Block.Handle(r.Context(), application.BlockDomain{Domain: in.Domain, Severity: domain.Severity(in.Severity),
		Reason: in.Reason, PublicComment: in.PublicComment, RejectMedia: in.RejectMedia, RejectReports: in.RejectReports, Obfuscate: in.Obfuscate})
	h.reply(w, r, err, http.StatusCreated, toBlockedJSON(res))
}

// updateBlock changes a block; fields left out of the body keep their
// values.
func (h *Handler) updateBlock(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Severity      *string `json:"severity"`
		Reason        *string `json:"reason"`
		PublicComment *string `json:"public_comment"`
		RejectMedia   *bool   `json:"reject_media"`
		RejectReports *bool   `json:"reject_reports"`
		Obfuscate     *bool   `json:"obfuscate"`
	}
	if !h.decode(w, r, &in, false) {
		return
	}
	cmd := application.UpdateDomainBlock{Domain: mux.Vars(r)["domain"], Reason: in.Reason, PublicComment: in.PublicComment,
		RejectMedia: in.RejectMedia, RejectReports: in.RejectReports, Obfuscate: in.Obfuscate}
	if in.Severity != nil {
		s := domain.Severity(*in.Severity)
		cmd.Severity = &s
	}
	res, err := h.mod.UpdateBlock.Handle(r.Context(), cmd)
	h.reply(w, r, err, http.StatusOK, toBlockedJSON(res))
}

func (h *Handler) removeBlock(w http.ResponseWriter, r *http.Request) {
	h.replyNoContent(w, r, h.mod.Unblock.Handle(r.Context(), mux.Vars(r)["domain"]))
}

type importChangeJSON struct {
	Line   int        `json:"line"`
	Block  blockJSON  `json:"block"`
	Before *blockJSON `json:"before,omitempty"`
}

type importLineJSON struct {
	Line   int    `json:"line"`
	Domain string `json:"domain"`
	Why    string `json:"why"`
}

type importJSON struct {
	DryRun         bool               `json:"dry_run"`
	Added          []importChangeJSON `json:"added"`
	Changed        []importChangeJSON `json:"changed"`
	Unchanged      []importChangeJSON `json:"unchanged"`
	Skipped        []importLineJSON   `json:"skipped"`
	Invalid        []importLineJSON   `json:"invalid"`
	IgnoredColumns []string           `json:"ignored_columns"`
	JobsEnded      int                `json:"jobs_ended"`
	FollowsRemoved int                `json:"follows_removed"`
}

func toImportJSON(res application.ImportResult) importJSON {
	changes := func(cs []application.ImportChange) []importChangeJSON {
		return each(cs, func(c application.ImportChange) importChangeJSON {
			out := importChangeJSON{Line: c.Line, Block: toBlockJSON(c.Block)}
			if c.Before != nil {
				b := toBlockJSON(*c.Before)
				out.Before = &b
			}
			return out
		})
	}
	lines := func(ls []application.ImportLine) []importLineJSON {
		return each(ls, func(l application.ImportLine) importLineJSON {
			return importLineJSON{Line: l.Line, Domain: l.Domain, Why: l.Why}
		})
	}
	ignored := res.IgnoredColumns
	if ignored == nil {
		ignored = []string{}
	}
	return importJSON{DryRun: res.DryRun, Added: changes(res.Added), Changed: changes(res.Changed), Unchanged: changes(res.Unchanged),
		Skipped: lines(res.Skipped), Invalid: lines(res.Invalid), IgnoredColumns: ignored, JobsEnded: res.JobsEnded, FollowsRemoved: res.FollowsRemoved}
}

// importBlocks reads a Mastodon domain-block CSV from the body (text/csv;
// text/plain, no type, and the form type curl --data-binary sends by
// default are taken too) and
// answers what it changed, or with ?dry_run=1 what it would change.
func (h *Handler) importBlocks(w http.ResponseWriter, r *http.Request) {
	dry, err := boolParam(r, "dry_run", "1 or 0")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "text/csv" && mt != "text/plain" && mt != "application/octet-stream" && mt != "application/x-www-form-urlencoded") {
			h.writeError(w, r, fmt.Errorf("%w: %q, want text/csv", errMediaType, ct))
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxImportBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			err = fmt.Errorf("%w: over %d bytes", errBodyTooLarge, maxImportBody)
		}
		h.writeError(w, r, err)
		return
	}
	res, err := h.mod.ImportBlocks.Handle(r.Context(), application.ImportDomainBlocks{CSV: bytes.NewReader(body), DryRun: dry})
	if err != nil && len(res.Added)+len(res.Changed) == 0 {
		h.writeError(w, r, err)
		return
	}
	if err != nil {
		// Applied half way: say what was applied, and why it stopped.
		status, msg := classify(err)
		h.log.Error("domain-block import stopped half way", "err", err)
		writeJSON(w, status, map[string]any{"error": msg, "applied": toImportJSON(res)})
		return
	}
	h.log.Info("operator imported a domain-block list", "dry_run", dry, "added", len(res.Added), "changed", len(res.Changed),
		"skipped", len(res.Skipped), "invalid", len(res.Invalid))
	writeJSON(w, http.StatusOK, toImportJSON(res))
}

func (h *Handler) exportBlocks(w http.ResponseWriter, r *http.Request) {
	h.writeCSV(w, r)
}

// writeCSV answers the blocks as Mastodon's export, for download.
func (h *Handler) writeCSV(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if _, err := h.mod.ExportBlocks.Handle(r.Context(), &buf); err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="domain_blocks.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

type allowJSON struct {
	Domain    string    `json:"domain"`
	CreatedAt time.Time `json:"created_at"`
}

func toAllowJSON(a domain.DomainAllow) allowJSON {
	return allowJSON{Domain: a.Domain, CreatedAt: a.CreatedAt}
}

func (h *Handler) listAllows(w http.ResponseWriter, r *http.Request) {
	as, err := h.mod.Allows(r.Context())
	h.reply(w, r, err, http.StatusOK, map[string]any{"mode": h.mod.Mode(), "domain_allows": each(as, toAllowJSON)})
}

func (h *Handler) addAllow(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Domain string `json:"domain"`
	}
	if !h.decode(w, r, &in, false) {
		return
	}
	a, err := h.mod.Allow.Handle(r.Context(), in.Domain)
	h.reply(w, r, err, http.StatusCreated, toAllowJSON(a))
}

func (h *Handler) removeAllow(w http.ResponseWriter, r *http.Request) {
	h.replyNoContent(w, r, h.mod.Disallow.Handle(r.Context(), mux.Vars(r)["domain"]))
}

type registrationJSON struct {
	ID        string    `json:"id"`
	UserName  string    `json:"username"`
	Reason    string    `json:"reason"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

func toRegistrationJSON(u domain.RootUser) registrationJSON {
	st := u.Status
	if st == "" {
		st = domain.UserActive
	}
	return registrationJSON{ID: u.ID, UserName: u.UserName, Reason: u.Reason, Status: string(st), CreatedAt: u.CreatedAt}
}

// limitParam reads ?limit= (0 when absent: the use case's default).
func limitParam(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: limit %q: want 1 to %d", domain.ErrInvalidInput, v, application.MaxModerationPage)
	}
	return n, nil
}

// boolParam reads the query parameter name as strconv.ParseBool does
// (false when absent); want is what the refusal says it takes.
func boolParam(r *http.Request, name, want string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %s=%q: want %s", domain.ErrInvalidInput, name, v, want)
	}
	return b, nil
}

// listRegistrations lists the sign-ups awaiting approval, oldest first.
func (h *Handler) listRegistrations(w http.ResponseWriter, r *http.Request) {
	limit, err := limitParam(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	us, err := h.mod.Pending(r.Context(), limit)
	h.reply(w, r, err, http.StatusOK, map[string]any{"mode": h.mod.Registrations(), "registrations": each(us, toRegistrationJSON)})
}

func (h *Handler) approveRegistration(w http.ResponseWriter, r *http.Request) {
	u, err := h.mod.Approve.Handle(r.Context(), mux.Vars(r)["id"])
	h.reply(w, r, err, http.StatusOK, toRegistrationJSON(u))
}

func (h *Handler) rejectRegistration(w http.ResponseWriter, r *http.Request) {
	res, err := h.mod.Reject.Handle(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	released := res.Released
	if released == nil {
		released = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": res.User.ID, "username": res.User.UserName, "released": released})
}

type reportJSON struct {
	ID         string     `json:"id"`
	ActivityID string     `json:"activity_id"`
	Reporter   string     `json:"reporter"`
	Targets    []string   `json:"targets"`
	Objects    []string   `json:"objects"`
	Comment    string     `json:"comment"`
	Open       bool       `json:"open"`
	CreatedAt  time.Time  `json:"created_at"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	Resolution string     `json:"resolution,omitempty"`
}

func toReportJSON(rp domain.Report) reportJSON {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return reportJSON{ID: rp.ID, ActivityID: rp.ActivityID, Reporter: rp.ReporterURI, Targets: nonNil(rp.Targets), Objects: nonNil(rp.Objects),
		Comment: rp.Comment, Open: rp.Open(), CreatedAt: rp.CreatedAt, ResolvedAt: optTime(rp.ResolvedAt), Resolution: rp.Resolution}
}

// listReports lists reports newest first: ?state=open (the default) or
// all.
func (h *Handler) listReports(w http.ResponseWriter, r *http.Request) {
	open := true
	switch st := r.URL.Query().Get("state"); st {
	case "", "open":
	case "all":
		open = false
	default:
		h.writeError(w, r, fmt.Errorf("%w: state=%q: want open or all", domain.ErrInvalidInput, st))
		return
	}
	limit, err := limitParam(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rs, err := h.mod.Reports(r.Context(), open, limit)
	h.reply(w, r, err, http.StatusOK, map[string]any{"reports": each(rs, toReportJSON)})
}

func (h *Handler) getReport(w http.ResponseWriter, r *http.Request) {
	rp, err := h.mod.Report(r.Context(), mux.Vars(r)["id"])
	h.reply(w, r, err, http.StatusOK, toReportJSON(rp))
}

// resolveReport resolves a report with {"note"} (the body may be empty).
func (h *Handler) resolveReport(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Note string `json:"note"`
	}
	if !h.decode(w, r, &in, true) {
		return
	}
	rp, err := h.mod.ResolveReport.Handle(r.Context(), application.ResolveReport{ID: mux.Vars(r)["id"], Note: in.Note})
	h.reply(w, r, err, http.StatusOK, toReportJSON(rp))
}
