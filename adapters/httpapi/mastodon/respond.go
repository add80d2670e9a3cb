package mastodon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/heraldfed/herald/adapters/httpapi/httperr"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// statusTable maps errors to statuses as Mastodon answers them: its own
// errors first, then Herald's common mapping.
var statusTable = httperr.Common.Before(
	httperr.Rule{Err: errBadParams, Status: http.StatusBadRequest, Detail: true},
	httperr.Rule{Err: domain.ErrInsufficientScope, Status: http.StatusForbidden, Detail: true},
	httperr.Rule{Err: domain.ErrInvalidScope, Status: http.StatusUnprocessableEntity, Detail: true},
	httperr.Rule{Err: domain.ErrInvalidClient, Status: http.StatusUnauthorized, Detail: true},
	httperr.Rule{Err: domain.ErrInvalidGrant, Status: http.StatusBadRequest, Detail: true},
	httperr.Rule{Err: domain.ErrUnsupportedGrantType, Status: http.StatusBadRequest, Detail: true},
	httperr.Rule{Err: domain.ErrInvalidRedirectURI, Status: http.StatusBadRequest, Detail: true},
	httperr.Rule{Err: application.ErrAwaitingApproval, Status: http.StatusForbidden, Detail: true},
	httperr.Rule{Err: domain.ErrUnauthorized, Status: http.StatusUnauthorized, Detail: true},
	httperr.Rule{Err: domain.ErrNotFound, Status: http.StatusNotFound, Detail: false},
)

// mastodonError is Mastodon's error entity.
type mastodonError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// reply answers v as JSON with status, or err (writeError) when there is
// one: v is then not written.
func reply(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, status int, v any) {
	if err != nil {
		writeError(w, r, log, err)
		return
	}
	writeJSON(w, status, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers Mastodon's {"error": "..."}; a 5xx's detail is
// logged, not sent. A missing record is "Record not found", as Mastodon
// says it.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, msg := statusTable.Classify(err)
	if status >= 500 {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	} else {
		log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="herald", error="invalid_token"`)
	case http.StatusNotFound:
		msg = "Record not found"
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	writeJSON(w, status, mastodonError{Error: msg})
}

// writeOAuthError answers the token and revoke endpoints' RFC 6749 §5.2
// error: the code, and what went wrong as the description.
func writeOAuthError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := ""
	for _, e := range []error{domain.ErrInvalidClient, domain.ErrInvalidGrant, domain.ErrInvalidScope, domain.ErrUnsupportedGrantType} {
		if errors.Is(err, e) {
			code = e.Error()
		}
	}
	switch {
	case code == "" && errors.Is(err, domain.ErrForbidden):
		log.Debug("revoke refused", "err", err)
		writeJSON(w, http.StatusForbidden, mastodonError{Error: "unauthorized_client", Description: err.Error()})
		return
	case code == "" && errors.Is(err, errBadParams):
		writeJSON(w, http.StatusBadRequest, mastodonError{Error: "invalid_request", Description: err.Error()})
		return
	case code == "":
		writeError(w, r, log, err)
		return
	}
	status := http.StatusBadRequest
	if code == domain.ErrInvalidClient.Error() {
		status = http.StatusUnauthorized
	}
	log.Debug("oauth request refused", "path", r.URL.Path, "error", code, "err", err)
	writeJSON(w, status, mastodonError{Error: code, Description: err.Error()})
}
