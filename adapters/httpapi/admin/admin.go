package admin

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/adapters/httpapi/httperr"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// Handler serves the operator API and page. It implements httpapi.Routes.
type Handler struct {
	op    *application.Operator
	mod   *application.Moderator
	token []byte
	log   *slog.Logger
	page  *pageRenderer
}

// New builds the operator surface over op (the queue and the breakers)
// and mod (moderation). An empty token turns it off: Register then adds no
// route.
func New(op *application.Operator, mod *application.Moderator, token string, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{op: op, mod: mod, token: []byte(token), log: log.With("component", "admin"), page: newPageRenderer()}
}

// Enabled reports whether an admin token is configured.
func (h *Handler) Enabled() bool { return len(h.token) > 0 }

// Register adds the operator routes to r, or none when no token is set.
// Full paths, not a subrouter, so a wrong method is 405 as elsewhere.
func (h *Handler) Register(r *mux.Router) {
	if !h.Enabled() {
		h.log.Info("operator API and page are off: HERALD_ADMIN_TOKEN is empty")
		return
	}
	api := func(path string, f http.HandlerFunc, methods ...string) {
		r.Handle(path, h.bearer(f)).Methods(methods...)
	}
	api("/admin/api/queue", h.queue, http.MethodGet)
	api("/admin/api/jobs", h.jobs, http.MethodGet)
	api("/admin/api/jobs/{id}/retry", h.retryJob, http.MethodPost)
	api("/admin/api/hosts/{host}/retry-dead", h.retryHostDead, http.MethodPost)
	api("/admin/api/instances", h.instances, http.MethodGet)
	api("/admin/api/fanouts", h.fanOuts, http.MethodGet)
	api("/admin/api/instances/{host}/lift", h.lift, http.MethodPost)
	api("/admin/api/names", h.listNames, http.MethodGet)
	api("/admin/api/names", h.reserveName, http.MethodPost)
	api("/admin/api/names/{name}", h.releaseName, http.MethodDelete)
	api("/admin/api/personas/{name}", h.deletePersona, http.MethodDelete)
	// Moderation (SPEC §11). The import and export paths come before the
	// {domain} ones they would otherwise match.
	api("/admin/api/domain-blocks/import", h.importBlocks, http.MethodPost)
	api("/admin/api/domain-blocks/export", h.exportBlocks, http.MethodGet)
	api("/admin/api/domain-blocks", h.listBlocks, http.MethodGet)
	api("/admin/api/domain-blocks", h.addBlock, http.MethodPost)
	api("/admin/api/domain-blocks/{domain}", h.updateBlock, http.MethodPut)
	api("/admin/api/domain-blocks/{domain}", h.removeBlock, http.MethodDelete)
	api("/admin/api/domain-allows", h.listAllows, http.MethodGet)
	api("/admin/api/domain-allows", h.addAllow, http.MethodPost)
	api("/admin/api/domain-allows/{domain}", h.removeAllow, http.MethodDelete)
	api("/admin/api/registrations", h.listRegistrations, http.MethodGet)
	api("/admin/api/registrations/{id}/approve", h.approveRegistration, http.MethodPost)
	api("/admin/api/registrations/{id}/reject", h.rejectRegistration, http.MethodPost)
	api("/admin/api/reports", h.listReports, http.MethodGet)
	api("/admin/api/reports/{id}", h.getReport, http.MethodGet)
	api("/admin/api/reports/{id}/resolve", h.resolveReport, http.MethodPost)

	r.HandleFunc("/admin", h.dashboard).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/admin/moderation", h.moderation).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/admin/domain-blocks.csv", h.pageExportBlocks).Methods(http.MethodGet)
	r.Handle("/admin/login", crossOrigin(http.HandlerFunc(h.login))).Methods(http.MethodPost)
	r.Handle("/admin/logout", h.pageAction(h.logout)).Methods(http.MethodPost)
	r.Handle("/admin/instances/{host}/lift", h.pageAction(h.pageLift)).Methods(http.MethodPost)
	r.Handle("/admin/hosts/{host}/retry-dead", h.pageAction(h.pageRetryDead)).Methods(http.MethodPost)
	mod := func(path string, f func(http.ResponseWriter, *http.Request) string) {
		r.Handle(path, h.pageActionTo(moderationPath, f)).Methods(http.MethodPost)
	}
	mod("/admin/domain-blocks", h.pageBlock)
	mod("/admin/domain-blocks/{domain}/lift", h.pageUnblock)
	mod("/admin/domain-allows", h.pageAllow)
	mod("/admin/domain-allows/{domain}/remove", h.pageDisallow)
	mod("/admin/reports/{id}/resolve", h.pageResolve)
	mod("/admin/registrations/{id}/approve", h.pageApprove)
	mod("/admin/registrations/{id}/reject", h.pageReject)
}

// validToken compares in constant time. Both sides are hashed first so the
// comparison takes the same time whatever the length of the guess.
func (h *Handler) validToken(got string) bool {
	if len(h.token) == 0 || got == "" {
		return false
	}
	a := sha256.Sum256([]byte(got))
	b := sha256.Sum256(h.token)
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// derive is an HMAC of the admin token for one purpose (the page's session
// cookie, its CSRF token): stable while the token is, useless without it,
// and never the token itself.
func (h *Handler) derive(purpose string) string {
	m := hmac.New(sha256.New, h.token)
	m.Write([]byte("herald-admin:" + purpose))
	return hex.EncodeToString(m.Sum(nil))
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// bearer lets a request through with "Authorization: Bearer <admin token>".
func (h *Handler) bearer(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("Authorization")
		tok := ""
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			tok = strings.TrimSpace(v[7:])
		}
		if !h.validToken(tok) {
			h.log.Warn("operator API refused: missing or wrong admin token", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			h.writeError(w, r, domain.ErrUnauthorized)
			return
		}
		next(w, r)
	})
}

// statusTable is the domain's common mapping with the operator API's own
// edge errors in front.
var statusTable = httperr.Common.Before(
	httperr.Rule{Err: errBodyTooLarge, Status: http.StatusRequestEntityTooLarge, Detail: true},
	httperr.Rule{Err: errMalformed, Status: http.StatusBadRequest, Detail: true},
	httperr.Rule{Err: errMediaType, Status: http.StatusUnsupportedMediaType, Detail: true},
)

var (
	errMalformed    = errors.New("malformed request")
	errBodyTooLarge = errors.New("request body too large")
	errMediaType    = errors.New("unsupported media type")
)

// Status is the HTTP status of an operator use case's error.
func Status(err error) int { return statusTable.Status(err) }

func classify(err error) (int, string) { return statusTable.Classify(err) }

type errorBody struct {
	Error string `json:"error"`
}

func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := classify(err)
	if status >= 500 {
		h.log.Error("operator request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="herald-admin"`)
	}
	writeJSON(w, status, errorBody{Error: msg})
}

// reply answers v as JSON with status, or err when there is one (v is
// then not written).
func (h *Handler) reply(w http.ResponseWriter, r *http.Request, err error, status int, v any) {
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

// replyNoContent answers 204, or err when there is one.
func (h *Handler) replyNoContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// each converts every element of a list: a list's JSON form.
func each[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
