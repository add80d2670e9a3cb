package domain_test

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestQuarantineLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level int
		want  time.Duration
	}{
		{1, time.Hour}, {2, 2 * time.Hour}, {3, 4 * time.Hour}, {4, 8 * time.Hour},
		{5, 16 * time.Hour}, {6, 32 * time.Hour}, {7, 64 * time.Hour}, {8, 128 * time.Hour},
		{9, 7 * 24 * time.Hour}, {50, 7 * 24 * time.Hour},
	}
	for _, tt := range tests {
		if got := domain.QuarantineLength(tt.level); got != tt.want {
			t.Errorf("QuarantineLength(%d) = %v, want %v", tt.level, got, tt.want)
		}
	}
}

func TestBreakerQuarantinesAfterTenFailures(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := domain.NewRemoteInstance("Dead.Example")
	if r.Host != "dead.example" {
		t.Fatalf("host not lower-cased: %q", r.Host)
	}
	for i := 1; i < domain.BreakerThreshold; i++ {
		if r.RecordFailure(now, "refused") {
			t.Fatalf("quarantined after %d failures", i)
		}
	}
	if r.Quarantined(now) {
		t.Fatal("quarantined before the threshold")
	}
	if !r.RecordFailure(now, "refused") {
		t.Fatal("10th failure did not quarantine")
	}
	if !r.QuarantinedUntil.Equal(now.Add(time.Hour)) || !r.Quarantined(now.Add(59*time.Minute)) || r.Quarantined(now.Add(time.Hour)) {
		t.Fatalf("first quarantine should last exactly 1 h: until %v", r.QuarantinedUntil)
	}
}

func TestBreakerDoublesUpToAWeek(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := domain.NewRemoteInstance("dead.example")
	for i := 0; i < domain.BreakerThreshold; i++ {
		r.RecordFailure(now, "x")
	}
	want := time.Hour
	for level := 2; level <= 12; level++ {
		now = r.QuarantinedUntil // the quarantine ends; the probe fails
		if !r.RecordFailure(now, "x") {
			t.Fatalf("level %d: failure after a quarantine did not start the next", level)
		}
		want = min(want*2, 7*24*time.Hour)
		if got := r.QuarantinedUntil.Sub(now); got != want {
			t.Fatalf("level %d: quarantine %v, want %v", level, got, want)
		}
	}
}

func TestBreakerFailureDuringQuarantineDoesNotExtendIt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := domain.NewRemoteInstance("h")
	for i := 0; i < domain.BreakerThreshold; i++ {
		r.RecordFailure(now, "x")
	}
	until := r.QuarantinedUntil
	if r.RecordFailure(now.Add(time.Minute), "late") {
		t.Fatal("a failure during the quarantine started another")
	}
	if !r.QuarantinedUntil.Equal(until) || r.QuarantineLevel != 1 {
		t.Fatalf("quarantine changed: %+v", r)
	}
}

func TestBreakerSuccessResets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := domain.NewRemoteInstance("h")
	for i := 0; i < 3*domain.BreakerThreshold; i++ {
		r.RecordFailure(now, "x")
		now = now.Add(8 * 24 * time.Hour)
	}
	r.RecordSuccess(now)
	if !r.Healthy() || !r.LastSuccessAt.Equal(now) {
		t.Fatalf("success did not reset: %+v", r)
	}
	for i := 1; i < domain.BreakerThreshold; i++ {
		if r.RecordFailure(now, "x") {
			t.Fatalf("after a success, quarantined after only %d failures", i)
		}
	}
	if !r.RecordFailure(now, "x") || r.QuarantinedUntil.Sub(now) != time.Hour {
		t.Fatalf("after a success the next quarantine should be 1 h again: %+v", r)
	}
}

func TestBreakerLiftKeepsLevel(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := domain.NewRemoteInstance("h")
	for i := 0; i < domain.BreakerThreshold; i++ {
		r.RecordFailure(now, "x")
	}
	r.Lift()
	if r.Quarantined(now) || r.ConsecutiveFailures != 0 || r.QuarantineLevel != 1 {
		t.Fatalf("lift: %+v", r)
	}
	for i := 0; i < domain.BreakerThreshold; i++ {
		r.RecordFailure(now, "x")
	}
	if r.QuarantinedUntil.Sub(now) != 2*time.Hour {
		t.Fatalf("after a lift the next quarantine doubles: %v", r.QuarantinedUntil.Sub(now))
	}
}
