package httperr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/heraldfed/herald/adapters/httpapi/httperr"
	"github.com/heraldfed/herald/domain"
)

func TestCommon(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err     error
		status  int
		message string
	}{
		{fmt.Errorf("reserve: %w: ERROR duplicate key (SQLSTATE 23505)", domain.ErrNameTaken), 409, "name taken"},
		{fmt.Errorf("%w: password shorter than 8 characters", domain.ErrInvalidInput), 422, "invalid input: password shorter than 8 characters"},
		{domain.ErrUnauthorized, 401, "unauthorized"},
		{fmt.Errorf("%w: not yours", domain.ErrForbidden), 403, "forbidden: not yours"},
		{fmt.Errorf("row: %w", domain.ErrNotFound), 404, "not found"},
		{fmt.Errorf("persona carol: %w", domain.ErrGone), 410, "gone"},
		{fmt.Errorf("deleted and missing: %w", errors.Join(domain.ErrNotFound, domain.ErrGone)), 410, "gone"},
		{fmt.Errorf("%w: dial tcp 10.0.0.5:5432", domain.ErrUnavailable), 503, "unavailable"},
		{errors.New("boom"), 500, "Internal Server Error"},
	}
	for _, tt := range tests {
		status, msg := httperr.Common.Classify(tt.err)
		if status != tt.status || msg != tt.message {
			t.Errorf("Classify(%v) = %d %q, want %d %q", tt.err, status, msg, tt.status, tt.message)
		}
	}
}

func TestBeforeOverridesAndKeepsCommon(t *testing.T) {
	t.Parallel()
	edge := errors.New("edge")
	tbl := httperr.Common.Before(
		httperr.Rule{Err: edge, Status: 400, Detail: true},
		httperr.Rule{Err: domain.ErrInvalidName, Status: 404},
	)
	if s := tbl.Status(edge); s != 400 {
		t.Fatalf("edge %d", s)
	}
	if s := tbl.Status(domain.ErrInvalidName); s != 404 {
		t.Fatalf("override %d", s)
	}
	if s := tbl.Status(domain.ErrNameTaken); s != 409 {
		t.Fatalf("common row lost: %d", s)
	}
	if s := httperr.Common.Status(domain.ErrInvalidName); s != 422 {
		t.Fatalf("Before changed Common: %d", s)
	}
}
