package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		status      int
		retryAfter  string
		kind        domain.OutcomeKind
		hostFailure bool
		wantAfter   time.Duration
	}{
		{"200", 200, "", domain.OutcomeDelivered, false, 0},
		{"202", 202, "", domain.OutcomeDelivered, false, 0},
		{"204", 204, "", domain.OutcomeDelivered, false, 0},
		{"400 final", 400, "", domain.OutcomeFinal, false, 0},
		{"401 final", 401, "", domain.OutcomeFinal, false, 0},
		{"403 final", 403, "", domain.OutcomeFinal, false, 0},
		{"404 final", 404, "", domain.OutcomeFinal, false, 0},
		{"410 final", 410, "", domain.OutcomeFinal, false, 0},
		{"422 final", 422, "", domain.OutcomeFinal, false, 0},
		{"408 retries and counts against the host", 408, "", domain.OutcomeRetryable, true, 0},
		{"429 without Retry-After", 429, "", domain.OutcomeRetryable, false, 0},
		{"429 delta-seconds", 429, "120", domain.OutcomeRetryable, false, 120 * time.Second},
		{"429 HTTP-date", 429, "Sun, 01 Mar 2026 12:30:00 GMT", domain.OutcomeRetryable, false, 30 * time.Minute},
		{"429 date in the past", 429, "Sun, 01 Mar 2026 11:00:00 GMT", domain.OutcomeRetryable, false, 0},
		{"429 garbage Retry-After", 429, "soon", domain.OutcomeRetryable, false, 0},
		{"500 retries", 500, "", domain.OutcomeRetryable, true, 0},
		{"502 retries", 502, "", domain.OutcomeRetryable, true, 0},
		{"503 retries, Retry-After ignored", 503, "60", domain.OutcomeRetryable, true, 0},
		{"301 retries, host is up", 301, "", domain.OutcomeRetryable, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := domain.Classify(tt.status, tt.retryAfter, now)
			if o.Kind != tt.kind || o.HostFailure != tt.hostFailure || o.RetryAfter != tt.wantAfter || o.Status != tt.status {
				t.Fatalf("Classify(%d, %q) = %+v; want kind %v hostFailure %v retryAfter %v",
					tt.status, tt.retryAfter, o, tt.kind, tt.hostFailure, tt.wantAfter)
			}
			if o.Kind != domain.OutcomeDelivered && o.Reason == "" {
				t.Fatalf("a failure needs a reason: %+v", o)
			}
		})
	}
}

func TestNetworkFailureRetriesAgainstHost(t *testing.T) {
	t.Parallel()
	o := domain.NetworkFailure(errors.New("connection refused"))
	if o.Kind != domain.OutcomeRetryable || !o.HostFailure || o.Reason != "connection refused" || o.StatusClass() != "network" {
		t.Fatalf("NetworkFailure = %+v", o)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"empty", "", 0, false},
		{"zero", "0", 0, false},
		{"seconds with spaces", " 30 ", 30 * time.Second, false},
		{"negative", "-5", 0, true},
		{"huge is clamped, no overflow", "99999999999999999", 2 * domain.MaxRetryAfter, false},
		{"IMF-fixdate", "Sun, 01 Mar 2026 13:00:00 GMT", time.Hour, false},
		{"RFC 850 date", "Sunday, 01-Mar-26 13:00:00 GMT", time.Hour, false},
		{"asctime date", "Sun Mar  1 13:00:00 2026", time.Hour, false},
		{"garbage", "tomorrow", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ParseRetryAfter(tt.in, now)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseRetryAfter(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
