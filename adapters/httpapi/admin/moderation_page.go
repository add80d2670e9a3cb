package admin

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// The moderation view is a page of its own, beside the delivery queue's:
// that one reloads itself every few seconds, which would wipe a domain an
// operator is typing into a form.
const moderationPath = "/admin/moderation"

// How much of each list the moderation view shows; the API pages through
// all of it.
const (
	pageBlocks        = 50
	pageAllows        = 100
	pageReports       = 20
	pageRegistrations = 20
)

type blockView struct {
	Domain, Severity, Reason, PublicComment, Since string
}

type reportView struct {
	ID, Reporter, Comment, Received string
	Targets, Objects                []string
}

type registrationView struct {
	ID, UserName, Reason, Since string
}

type moderationView struct {
	CSRF  string
	Flash string
	Mode  string
	// Blocks are one page (pageBlocks, from ?from=) of BlocksTotal, by
	// domain: BlocksFrom to BlocksTo, counted from 1; BlocksPrev and
	// BlocksNext link the pages around it.
	Blocks                 []blockView
	BlocksTotal            int
	BlocksFrom, BlocksTo   int
	BlocksPage             int
	BlocksPrev, BlocksNext string
	Allowlist              bool
	Allows                 []blockView
	AllowsTotal            int
	AllowsMore             int
	// Reports are the newest open ones, at most pageReports (ReportsMore
	// when there may be more).
	Reports       []reportView
	ReportsMore   bool
	Registrations string
	Pending       []registrationView
	PendingMore   bool
}

func (h *Handler) moderation(w http.ResponseWriter, r *http.Request) {
	if !h.pageSession(r) {
		h.page.render(w, http.StatusUnauthorized, "login.html", loginView{})
		return
	}
	ctx := r.Context()
	blocks, err := h.mod.Blocks(ctx)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	v := moderationView{CSRF: h.derive("csrf"), Mode: string(h.mod.Mode()), Registrations: string(h.mod.Registrations()),
		BlocksTotal: len(blocks), BlocksPage: pageBlocks, Allowlist: h.mod.Mode() == domain.FederationAllowlist}
	// The rules are in memory already (Moderation holds them all): a page
	// is a slice of them.
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	if from >= len(blocks) && len(blocks) > 0 {
		from = (len(blocks) - 1) / pageBlocks * pageBlocks
	}
	from = max(0, from)
	to := min(from+pageBlocks, len(blocks))
	v.BlocksFrom, v.BlocksTo = from+1, to
	if from > 0 {
		v.BlocksPrev = fmt.Sprintf("%s?from=%d#blocks", moderationPath, max(0, from-pageBlocks))
	}
	if to < len(blocks) {
		v.BlocksNext = fmt.Sprintf("%s?from=%d#blocks", moderationPath, to)
	}
	for _, b := range blocks[from:to] {
		v.Blocks = append(v.Blocks, blockView{Domain: b.Domain, Severity: string(b.Severity), Reason: b.Reason,
			PublicComment: b.PublicComment, Since: formatTime(b.CreatedAt)})
	}
	if v.Allowlist {
		allows, err := h.mod.Allows(ctx)
		if err != nil {
			h.pageError(w, r, err)
			return
		}
		v.AllowsTotal, v.AllowsMore = len(allows), max(0, len(allows)-pageAllows)
		for _, a := range allows[:min(len(allows), pageAllows)] {
			v.Allows = append(v.Allows, blockView{Domain: a.Domain, Since: formatTime(a.CreatedAt)})
		}
	}
	// One more than shown says whether there are more.
	reports, err := h.mod.Reports(ctx, true, pageReports+1)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	v.ReportsMore = len(reports) > pageReports
	for _, rp := range reports[:min(len(reports), pageReports)] {
		v.Reports = append(v.Reports, reportView{ID: rp.ID, Reporter: rp.ReporterURI, Comment: rp.Comment,
			Received: formatTime(rp.CreatedAt), Targets: rp.Targets, Objects: rp.Objects})
	}
	pending, err := h.mod.Pending(ctx, pageRegistrations+1)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	v.PendingMore = len(pending) > pageRegistrations
	for _, u := range pending[:min(len(pending), pageRegistrations)] {
		v.Pending = append(v.Pending, registrationView{ID: u.ID, UserName: u.UserName, Reason: u.Reason, Since: formatTime(u.CreatedAt)})
	}
	v.Flash = h.takeFlash(w, r)
	h.page.render(w, http.StatusOK, "moderation.html", v)
}

// pageExportBlocks is the page's download of the list: the API's export
// behind the page's session instead of the bearer token.
func (h *Handler) pageExportBlocks(w http.ResponseWriter, r *http.Request) {
	if !h.pageSession(r) {
		h.page.render(w, http.StatusUnauthorized, "login.html", loginView{Error: "Sign in first."})
		return
	}
	h.writeCSV(w, r)
}

func failed(what string, err error) string {
	_, msg := classify(err)
	return fmt.Sprintf("Could not %s: %s", what, msg)
}

func (h *Handler) pageBlock(w http.ResponseWriter, r *http.Request) string {
	f := r.PostForm
	d := strings.TrimSpace(f.Get("domain"))
	res, err := h.mod.Block.Handle(r.Context(), application.BlockDomain{Domain: d, Severity: domain.Severity(f.Get("severity")),
		Reason: f.Get("reason"), PublicComment: f.Get("public_comment")})
	if err != nil {
		return failed("block "+d, err)
	}
	msg := fmt.Sprintf("Blocked %s (%s).", res.Block.Domain, res.Block.Severity)
	if res.Block.Severity == domain.SeveritySuspend {
		msg += fmt.Sprintf(" %d queued deliveries ended, %d follows removed.", res.JobsEnded, res.FollowsRemoved)
	}
	return msg
}

func (h *Handler) pageUnblock(w http.ResponseWriter, r *http.Request) string {
	d := mux.Vars(r)["domain"]
	if err := h.mod.Unblock.Handle(r.Context(), d); err != nil {
		return failed("lift the block of "+d, err)
	}
	return fmt.Sprintf("Lifted the block of %s: it federates again (the follows a suspension removed stay removed).", d)
}

func (h *Handler) pageAllow(w http.ResponseWriter, r *http.Request) string {
	d := strings.TrimSpace(r.PostForm.Get("domain"))
	a, err := h.mod.Allow.Handle(r.Context(), d)
	if err != nil {
		return failed("allow "+d, err)
	}
	return fmt.Sprintf("Allowed %s.", a.Domain)
}

func (h *Handler) pageDisallow(w http.ResponseWriter, r *http.Request) string {
	d := mux.Vars(r)["domain"]
	if err := h.mod.Disallow.Handle(r.Context(), d); err != nil {
		return failed("remove the allow of "+d, err)
	}
	return fmt.Sprintf("%s is no longer allowed.", d)
}

func (h *Handler) pageResolve(w http.ResponseWriter, r *http.Request) string {
	id := mux.Vars(r)["id"]
	if _, err := h.mod.ResolveReport.Handle(r.Context(), application.ResolveReport{ID: id, Note: r.PostForm.Get("note")}); err != nil {
		return failed("resolve report "+id, err)
	}
	return fmt.Sprintf("Resolved report %s.", id)
}

func (h *Handler) pageApprove(w http.ResponseWriter, r *http.Request) string {
	id := mux.Vars(r)["id"]
	u, err := h.mod.Approve.Handle(r.Context(), id)
	if err != nil {
		return failed("approve "+id, err)
	}
	return fmt.Sprintf("Approved %s: the account can sign in.", u.UserName)
}

func (h *Handler) pageReject(w http.ResponseWriter, r *http.Request) string {
	id := mux.Vars(r)["id"]
	res, err := h.mod.Reject.Handle(r.Context(), id)
	if err != nil {
		return failed("reject "+id, err)
	}
	return fmt.Sprintf("Rejected %s: the account is deleted and %s free again.", res.User.UserName, strings.Join(res.Released, ", "))
}
