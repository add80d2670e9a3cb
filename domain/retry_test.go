package domain_test

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		n      int
		jitter float64
		want   time.Duration
	}{
		{"first attempt, no jitter", 1, 0, 16 * time.Second},
		{"first attempt, jitter at top is below 0.5·n^4", 1, 0.999999, 16*time.Second + 499999*time.Microsecond},
		{"second attempt", 2, 0, 31 * time.Second},
		{"fifth attempt, half jitter", 5, 0.5, time.Duration((625 + 15 + 0.25*625) * float64(time.Second))},
		{"fifteenth attempt", 15, 0, (50625 + 15) * time.Second},
		{"n below 1 is treated as 1", 0, 0, 16 * time.Second},
		{"negative jitter is clamped", 3, -1, 96 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := domain.RetryDelay(tt.n, tt.jitter)
			if d := got - tt.want; d < -time.Millisecond || d > time.Millisecond {
				t.Fatalf("RetryDelay(%d, %v) = %v, want %v", tt.n, tt.jitter, got, tt.want)
			}
		})
	}
}

func TestRetryDelayJitterNeverReachesHalf(t *testing.T) {
	t.Parallel()
	for n := 1; n <= domain.MaxAttempts; n++ {
		n4 := time.Duration(n*n*n*n) * time.Second
		got := domain.RetryDelay(n, 1) // 1 is outside [0,1) and must clamp below
		if got >= n4+15*time.Second+n4/2 {
			t.Fatalf("n=%d: delay %v reaches n^4+15+0.5·n^4", n, got)
		}
	}
}

// The whole schedule with no and with maximal jitter: about two to three days.
func TestRetryScheduleSpansTwoToThreeDays(t *testing.T) {
	t.Parallel()
	var low, high time.Duration
	for n := 1; n < domain.MaxAttempts; n++ {
		low += domain.RetryDelay(n, 0)
		high += domain.RetryDelay(n, 0.999)
	}
	if low < 48*time.Hour || high > 80*time.Hour {
		t.Fatalf("schedule spans %v to %v; want about 2 to 3 days", low, high)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	retry := domain.Outcome{Kind: domain.OutcomeRetryable, Status: 503, HostFailure: true, Reason: "HTTP 503"}
	tests := []struct {
		name      string
		prior     int
		outcome   domain.Outcome
		wantState domain.JobState
		wantRunAt time.Time
		wantAtt   int
	}{
		{"success", 0, domain.Outcome{Kind: domain.OutcomeDelivered, Status: 202}, domain.JobSucceeded, now, 1},
		{"first failure waits 16 s", 0, retry, domain.JobQueued, now.Add(16 * time.Second), 1},
		{"third failure waits 96 s", 2, retry, domain.JobQueued, now.Add(96 * time.Second), 3},
		{"15th failure still retries", 14, retry, domain.JobQueued, now.Add(domain.RetryDelay(15, 0)), 15},
		{"16th failure is dead", 15, retry, domain.JobDead, now, 16},
		{"final 4xx is dead at once", 0, domain.Outcome{Kind: domain.OutcomeFinal, Status: 410, Reason: "gone"}, domain.JobDead, now, 1},
		{"429 waits Retry-After when longer", 0,
			domain.Outcome{Kind: domain.OutcomeRetryable, Status: 429, RetryAfter: time.Hour}, domain.JobQueued, now.Add(time.Hour), 1},
		{"429 waits at least the curve", 3,
			domain.Outcome{Kind: domain.OutcomeRetryable, Status: 429, RetryAfter: time.Second}, domain.JobQueued, now.Add(domain.RetryDelay(4, 0)), 4},
		{"429 Retry-After is bounded", 0,
			domain.Outcome{Kind: domain.OutcomeRetryable, Status: 429, RetryAfter: 400 * 24 * time.Hour}, domain.JobQueued, now.Add(domain.MaxRetryAfter), 1},
		{"429 at the last attempt is dead", 15,
			domain.Outcome{Kind: domain.OutcomeRetryable, Status: 429, RetryAfter: time.Minute}, domain.JobDead, now, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := domain.Decide(tt.prior, tt.outcome, now, 0)
			if d.State != tt.wantState || !d.RunAt.Equal(tt.wantRunAt) || d.Attempts != tt.wantAtt {
				t.Fatalf("Decide = %+v; want state %s, runAt %v, attempts %d", d, tt.wantState, tt.wantRunAt, tt.wantAtt)
			}
			if d.State == domain.JobDead && d.Reason == "" && tt.outcome.Reason != "" {
				t.Fatalf("dead without a reason: %+v", d)
			}
		})
	}
}
