package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// MaxBodyBytes bounds every request body (SPEC: bodies over 1 MiB get 413).
const MaxBodyBytes = 1 << 20

// Errors of the HTTP edge itself, mapped like the domain's.
var (
	errBodyTooLarge = errors.New("request body too large")
	errMalformed    = errors.New("malformed request")
	errMediaType    = errors.New("unsupported media type")
)

// statusTable maps each sentinel to its status; the first match wins, so
// more specific errors come first.
var statusTable = []struct {
	err    error
	status int
}{
	{errBodyTooLarge, http.StatusRequestEntityTooLarge},
	{errMalformed, http.StatusBadRequest},
	{errMediaType, http.StatusUnsupportedMediaType},
	{domain.ErrNameTaken, http.StatusConflict},
	{domain.ErrAlreadyExists, http.StatusConflict},
	{domain.ErrInvalidName, http.StatusUnprocessableEntity},
	{domain.ErrInvalidInput, http.StatusUnprocessableEntity},
	{domain.ErrUnauthorized, http.StatusUnauthorized},
	{domain.ErrForbidden, http.StatusForbidden},
	{domain.ErrNotFound, http.StatusNotFound},
	{domain.ErrUnavailable, http.StatusServiceUnavailable},
	{context.DeadlineExceeded, http.StatusServiceUnavailable},
}

// Status is the HTTP status of an error returned by a use case.
func Status(err error) int {
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			return row.status
		}
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Error string `json:"error"`
}

// writeError answers with the error's status and a JSON message. A 5xx's
// detail is logged, not sent: it may name internals.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status := Status(err)
	msg := err.Error()
	if status >= 500 {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
		msg = http.StatusText(status)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="herald"`)
	}
	writeJSON(w, status, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
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
