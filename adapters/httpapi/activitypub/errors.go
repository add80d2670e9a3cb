package activitypub

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/heraldfed/herald/adapters/httpapi/httperr"
	"github.com/heraldfed/herald/domain"
)

// Errors of the ActivityPub edge itself.
var (
	errBodyTooLarge = errors.New("request body too large")
	errMalformed    = errors.New("malformed request")
	errSignature    = errors.New("signature rejected")
	errNotAccepted  = errors.New("not acceptable")
)

// statusTable puts the ActivityPub edge's own errors in front of the
// domain's common mapping, and maps two sentinels its own way: an invalid
// name in a URL path names no actor (404), and an authorization failure
// says why, so a remote admin can see why a delivery was refused.
var statusTable = httperr.Common.Before(
	httperr.Rule{Err: errBodyTooLarge, Status: http.StatusRequestEntityTooLarge, Detail: true},
	httperr.Rule{Err: errMalformed, Status: http.StatusBadRequest, Detail: true},
	httperr.Rule{Err: errSignature, Status: http.StatusUnauthorized, Detail: true},
	httperr.Rule{Err: errNotAccepted, Status: http.StatusNotAcceptable, Detail: true},
	httperr.Rule{Err: domain.ErrUnauthorized, Status: http.StatusUnauthorized, Detail: true},
	httperr.Rule{Err: domain.ErrInvalidName, Status: http.StatusNotFound},
)

// Status is the HTTP status of an error on the ActivityPub surface.
func Status(err error) int { return statusTable.Status(err) }

func classify(err error) (int, string) { return statusTable.Classify(err) }

// RetryAfterSeconds is the Retry-After of a 503: long enough for a remote
// server or our network to come back, short enough that a first Follow
// does not wait long (senders apply their own backoff anyway).
const RetryAfterSeconds = 60

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
	if status == http.StatusServiceUnavailable {
		// Not the sender's fault (a key we could not fetch now, our store
		// down): ask it to deliver again rather than lose the activity.
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	writeJSON(w, status, "application/json; charset=utf-8", errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
