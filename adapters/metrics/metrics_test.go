package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/metrics"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// countingAdmin counts how often the collector reads the store, and can
// fail.
type countingAdmin struct {
	ports.JobAdmin
	reads atomic.Int64
	fail  atomic.Bool
}

func (c *countingAdmin) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	c.reads.Add(1)
	if c.fail.Load() {
		return nil, fake.ErrInjected
	}
	return c.JobAdmin.Counts(ctx)
}

type bundle struct {
	m         *metrics.Metrics
	srv       *httptest.Server
	jobs      *memory.JobStore
	admin     *countingAdmin
	instances *memory.InstanceStore
	clock     *fake.Clock
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{jobs: memory.NewJobStore(), instances: memory.NewInstanceStore(), clock: fake.NewClock(t0)}
	b.admin = &countingAdmin{JobAdmin: b.jobs}
	b.m = metrics.New(b.admin, b.instances, b.clock, metrics.Options{CacheFor: 5 * time.Second})
	r := mux.NewRouter()
	b.m.Register(r)
	b.srv = httptest.NewServer(r)
	t.Cleanup(b.srv.Close)
	return b
}

func (b *bundle) scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(b.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("scrape %d: %s", resp.StatusCode, body)
	}
	return string(body)
}

func has(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, "\n"+l+"\n") {
			t.Errorf("no line %q", l)
		}
	}
}

func TestEngineObserver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.m
	m.Leased(2*time.Millisecond, 3)
	m.Leased(time.Millisecond, 0)
	m.Flushed(time.Millisecond, 5)
	m.Delivered("a.example", domain.Outcome{Kind: domain.OutcomeDelivered, Status: 202}, 100*time.Millisecond)
	m.Delivered("a.example", domain.Outcome{Kind: domain.OutcomeRetryable, Status: 503}, time.Second)
	m.Delivered("b.example", domain.NetworkFailure(context.DeadlineExceeded), 30*time.Second)
	m.Delivered("c.example", domain.Outcome{Kind: domain.OutcomeFinal, Status: 410}, time.Millisecond)
	m.Settled(domain.JobSucceeded)
	m.Settled(domain.JobQueued)
	m.Settled(domain.JobQueued)
	m.Settled(domain.JobDead)
	m.Reaped(ports.ReapResult{Requeued: 3, Dead: 1})
	m.Quarantined("b.example", t0.Add(time.Hour))
	m.InFlight(5)
	m.InFlight(4)
	m.Refused("inbox")
	m.Refused("inbox")
	m.Refused("delivery")
	text := b.scrape(t)
	has(t, text,
		"herald_jobs_leased_total 3",
		"herald_results_flushed_total 5",
		"herald_flush_duration_seconds_count 1",
		`herald_lease_duration_seconds_count{found="true"} 1`,
		`herald_lease_duration_seconds_count{found="false"} 1`,
		`herald_deliveries_total{outcome="delivered",status_class="2xx"} 1`,
		`herald_deliveries_total{outcome="retryable",status_class="5xx"} 1`,
		`herald_deliveries_total{outcome="retryable",status_class="network"} 1`,
		`herald_deliveries_total{outcome="final",status_class="4xx"} 1`,
		`herald_delivery_duration_seconds_bucket{outcome="retryable",le="1"} 1`,
		`herald_delivery_duration_seconds_count{outcome="retryable"} 2`,
		`herald_jobs_settled_total{state="queued"} 2`,
		`herald_jobs_settled_total{state="succeeded"} 1`,
		`herald_jobs_settled_total{state="dead"} 1`,
		"herald_job_retries_total 2",
		`herald_reaper_recovered_total{to="queued"} 3`,
		`herald_reaper_recovered_total{to="dead"} 1`,
		"herald_reaper_recoveries_total 1",
		"herald_quarantines_total 1",
		"herald_deliveries_in_flight 4",
		`herald_policy_refusals_total{kind="inbox"} 2`,
		`herald_policy_refusals_total{kind="delivery"} 1`,
	)
	if strings.Contains(text, "a.example") {
		t.Error("a host name became a label")
	}
}

func TestStoreGaugesAreCached(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	j, _ := domain.NewJob(contract.JobID("j1"), "https://l.example/a/1", "https://a.example/inbox", "s", "k", []byte("{}"), t0)
	_, _ = b.jobs.Enqueue(ctx, []domain.Job{j})
	_, _ = b.instances.Update(ctx, "down.example", func(r *domain.RemoteInstance) {
		for range domain.BreakerThreshold {
			r.RecordFailure(t0, "503")
		}
	})
	text := b.scrape(t)
	has(t, text, `herald_jobs{state="queued"} 1`, `herald_jobs{state="dead"} 0`, `herald_jobs{state="leased"} 0`,
		`herald_jobs{state="succeeded"} 0`, "herald_hosts_quarantined 1")

	// Within the cache period the store is not read again, and the
	// figures stay as read.
	j2, _ := domain.NewJob(contract.JobID("j2"), "https://l.example/a/2", "https://a.example/inbox", "s", "k", []byte("{}"), t0)
	_, _ = b.jobs.Enqueue(ctx, []domain.Job{j2})
	b.clock.Advance(4 * time.Second)
	has(t, b.scrape(t), `herald_jobs{state="queued"} 1`)
	if n := b.admin.reads.Load(); n != 1 {
		t.Fatalf("%d store reads for two scrapes within the cache period", n)
	}
	b.clock.Advance(time.Second)
	has(t, b.scrape(t), `herald_jobs{state="queued"} 2`)
	if n := b.admin.reads.Load(); n != 2 {
		t.Fatalf("%d store reads", n)
	}
	// The quarantine ends by itself: the gauge follows.
	b.clock.Advance(2 * time.Hour)
	has(t, b.scrape(t), "herald_hosts_quarantined 0")
}

func TestStoreDownLeavesGaugesOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.admin.fail.Store(true)
	text := b.scrape(t)
	if strings.Contains(text, "herald_jobs{") || strings.Contains(text, "herald_hosts_quarantined ") {
		t.Fatal("gauges reported although the store could not be read")
	}
	has(t, text, "herald_metrics_store_errors_total 1")
	// A failure is not cached: the next scrape reads again.
	b.admin.fail.Store(false)
	has(t, b.scrape(t), `herald_jobs{state="queued"} 0`)
}

func TestRegistriesAreSeparate(t *testing.T) {
	t.Parallel()
	a, b := setup(t), setup(t)
	a.m.Quarantined("x", t0)
	has(t, a.scrape(t), "herald_quarantines_total 1")
	has(t, b.scrape(t), "herald_quarantines_total 0")
}
