package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/heraldfed/herald/adapters/httpapi/httperr"
)

// MaxBodyBytes bounds every request body (SPEC: bodies over 1 MiB get 413).
const MaxBodyBytes = 1 << 20

// Errors of the HTTP edge itself, mapped like the domain's.
var (
	errBodyTooLarge = errors.New("request body too large")
	errMalformed    = errors.New("malformed request")
	errMediaType    = errors.New("unsupported media type")
)

// statusTable is the client API's: its own edge errors, then the domain's
// common mapping.
var statusTable = httperr.Common.Before(
	httperr.Rule{Err: errBodyTooLarge, Status: http.StatusRequestEntityTooLarge, Detail: true},
	httperr.Rule{Err: errMalformed, Status: http.StatusBadRequest, Detail: true},
	httperr.Rule{Err: errMediaType, Status: http.StatusUnsupportedMediaType, Detail: true},
)

// Status is the HTTP status of an error returned by a use case.
func Status(err error) int { return statusTable.Status(err) }

// classify returns the status and the message the client may see.
func classify(err error) (int, string) { return statusTable.Classify(err) }

type errorBody struct {
	Error string `json:"error"`
}

// writeError answers with the error's status and a JSON message. A 5xx's
// detail is logged, not sent: it may name internals.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, msg := classify(err)
	if status >= 500 {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	} else {
		log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="herald"`)
	}
	writeJSON(w, status, errorBody{Error: msg})
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

// createdOrOK is the status of a write that may have been made already:
// 201 when this request made it, else 200.
func createdOrOK(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads the body into v as decodeJSON does; when it cannot, it
// answers the error itself (logged to log) and reports false.
func decode(w http.ResponseWriter, r *http.Request, log *slog.Logger, v any) bool {
	if err := decodeJSON(w, r, v); err != nil {
		writeError(w, r, log, err)
		return false
	}
	return true
}

// decodeJSON reads one JSON object of at most MaxBodyBytes into v. Unknown
// fields are ignored, as Mastodon's API does; wrong types, trailing data
// and bodies that are not JSON are errMalformed.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return fmt.Errorf("%w: %q, want application/json", errMediaType, ct)
		}
	}
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fmt.Errorf("%w: over %d bytes", errBodyTooLarge, MaxBodyBytes)
		}
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: empty body", errMalformed)
		}
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fmt.Errorf("%w: over %d bytes", errBodyTooLarge, MaxBodyBytes)
		}
		return fmt.Errorf("%w: data after the JSON object", errMalformed)
	}
	return nil
}
