package activitypub

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/heraldfed/herald/domain"
)

// Errors of the ActivityPub edge itself.
var (
	errBodyTooLarge = errors.New("request body too large")
	errMalformed    = errors.New("malformed request")
	errSignature    = errors.New("signature rejected")
	errNotAccepted  = errors.New("not acceptable")
)

// statusTable maps errors to statuses, first match first. detail says
// whether the error's text may go to the remote: it may for what the edge
// and the federation use cases write about the request itself (so a remote
// admin can see why a delivery was refused); it may not for store errors.
var statusTable = []struct {
	err    error
	status int
	detail bool
}{
	{errBodyTooLarge, http.StatusRequestEntityTooLarge, true},
	{errMalformed, http.StatusBadRequest, true},
	{errSignature, http.StatusUnauthorized, true},
	{errNotAccepted, http.StatusNotAcceptable, true},
	{domain.ErrUnauthorized, http.StatusUnauthorized, true},
	{domain.ErrForbidden, http.StatusForbidden, true},
	{domain.ErrInvalidName, http.StatusNotFound, false},
	{domain.ErrInvalidInput, http.StatusUnprocessableEntity, true},
	{domain.ErrNotFound, http.StatusNotFound, false},
	{domain.ErrAlreadyExists, http.StatusConflict, false},
	{domain.ErrUnavailable, http.StatusServiceUnavailable, false},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, false},
}

// Status is the HTTP status of an error on the ActivityPub surface.
func Status(err error) int {
	s, _ := classify(err)
	return s
}

func classify(err error) (int, string) {
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			if row.detail {
				return row.status, err.Error()
			}
			return row.status, row.err.Error()
		}
	}
	return http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError)
}

type errorBody struct {
	Error string `json:"error"`
}

func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := classify(err)
	level := slog.LevelDebug
	if status >= 500 {
		level = slog.LevelError
	}
	h.log.Log(r.Context(), level, "activitypub request refused", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	writeJSON(w, status, "application/json; charset=utf-8", errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
