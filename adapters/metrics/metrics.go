package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.EngineObserver = (*Metrics)(nil)
var _ ports.PolicyObserver = (*Metrics)(nil)

// DefaultCacheFor is how long one reading of the stores serves scrapes.
const DefaultCacheFor = 5 * time.Second

// Buckets of the latency histograms, in seconds. A lease is one indexed
// query (milliseconds); a delivery is a remote POST bounded by the
// delivery timeout (30 s).
var (
	leaseBuckets    = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	deliveryBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30}
)

// Metrics is the engine observer and the /metrics surface (httpapi.Routes).
type Metrics struct {
	reg *prometheus.Registry

	leased       prometheus.Counter
	leaseLatency *prometheus.HistogramVec
	deliveries   *prometheus.CounterVec
	deliveryTime *prometheus.HistogramVec
	settled      *prometheus.CounterVec
	retries      prometheus.Counter
	reaped       *prometheus.CounterVec
	reaperPasses prometheus.Counter
	quarantines  prometheus.Counter
	inFlight     prometheus.Gauge
	flushed      prometheus.Counter
	flushLatency prometheus.Histogram
	refusals     *prometheus.CounterVec
}

// Options tune the store collector. Zero values take the defaults.
type Options struct {
	CacheFor time.Duration
	Log      *slog.Logger
}

// New builds the metrics on a fresh registry. jobs and instances are read
// at scrape time (through a cache of opts.CacheFor on clock).
func New(jobs ports.JobAdmin, instances ports.InstanceStore, clock ports.Clock, opts Options) *Metrics {
	if opts.CacheFor <= 0 {
		opts.CacheFor = DefaultCacheFor
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		leased: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_jobs_leased_total",
			Help: "Jobs leased by this process's delivery engine."}),
		leaseLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "herald_lease_duration_seconds",
			Help: "Time one lease query (a batch) took, by whether it found a job.", Buckets: leaseBuckets}, []string{"found"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "herald_deliveries_total",
			Help: "Delivery attempts by outcome (delivered, retryable, final) and HTTP status class (2xx ... 5xx, network)."},
			[]string{"outcome", "status_class"}),
		deliveryTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "herald_delivery_duration_seconds",
			Help: "Time one delivery attempt took, by outcome.", Buckets: deliveryBuckets}, []string{"outcome"}),
		settled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "herald_jobs_settled_total",
			Help: "Where jobs went after an attempt: succeeded, queued (to be retried) or dead."}, []string{"state"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_job_retries_total",
			Help: "Failed attempts that were scheduled to be retried."}),
		reaped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "herald_reaper_recovered_total",
			Help: "Jobs whose lease had expired that the reaper recovered, by where they went (queued or dead)."}, []string{"to"}),
		reaperPasses: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_reaper_recoveries_total",
			Help: "Reaper passes that found expired leases."}),
		quarantines: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_quarantines_total",
			Help: "Times a remote host's circuit breaker opened."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "herald_deliveries_in_flight",
			Help: "Deliveries running now in this process."}),
		flushed: prometheus.NewCounter(prometheus.CounterOpts{Name: "herald_results_flushed_total",
			Help: "Delivery results written to the store in batches by the engine's completer."}),
		flushLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "herald_flush_duration_seconds",
			Help: "Time one batch of results took to write.", Buckets: leaseBuckets}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "herald_policy_refusals_total",
			Help: "What the federation policy (domain blocks, allowlist mode) refused, by where: inbox (a request), fetch, delivery, follow."},
			[]string{"kind"}),
	}
	reg.MustRegister(m.leased, m.leaseLatency, m.deliveries, m.deliveryTime, m.settled, m.retries, m.reaped,
		m.reaperPasses, m.quarantines, m.inFlight, m.flushed, m.flushLatency, m.refusals,
		&storeCollector{jobs: jobs, instances: instances, clock: clock, cacheFor: opts.CacheFor, log: opts.Log},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry is the registry the metrics live on (for tests and extra
// collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, Timeout: 10 * time.Second})
}

// Register implements httpapi.Routes: GET /metrics.
func (m *Metrics) Register(r *mux.Router) {
	r.Handle("/metrics", m.Handler()).Methods(http.MethodGet, http.MethodHead)
}

// Leased implements ports.EngineObserver.
func (m *Metrics) Leased(took time.Duration, jobs int) {
	label := "false"
	if jobs > 0 {
		label = "true"
		m.leased.Add(float64(jobs))
	}
	m.leaseLatency.WithLabelValues(label).Observe(took.Seconds())
}

// Flushed implements ports.EngineObserver.
func (m *Metrics) Flushed(took time.Duration, results int) {
	m.flushed.Add(float64(results))
	m.flushLatency.Observe(took.Seconds())
}

// Delivered implements ports.EngineObserver. The host is not a label: the
// number of remote hosts is unbounded.
func (m *Metrics) Delivered(host string, o domain.Outcome, took time.Duration) {
	kind := o.Kind.String()
	m.deliveries.WithLabelValues(kind, o.StatusClass()).Inc()
	m.deliveryTime.WithLabelValues(kind).Observe(took.Seconds())
}

// Settled implements ports.EngineObserver.
func (m *Metrics) Settled(state domain.JobState) {
	m.settled.WithLabelValues(string(state)).Inc()
	if state == domain.JobQueued {
		m.retries.Inc()
	}
}

// Reaped implements ports.EngineObserver.
func (m *Metrics) Reaped(r ports.ReapResult) {
	m.reaperPasses.Inc()
	m.reaped.WithLabelValues(string(domain.JobQueued)).Add(float64(r.Requeued))
	m.reaped.WithLabelValues(string(domain.JobDead)).Add(float64(r.Dead))
}

// Quarantined implements ports.EngineObserver.
func (m *Metrics) Quarantined(host string, until time.Time) { m.quarantines.Inc() }

// Refused implements ports.PolicyObserver.
func (m *Metrics) Refused(kind string) { m.refusals.WithLabelValues(kind).Inc() }

// InFlight implements ports.EngineObserver.
func (m *Metrics) InFlight(n int) { m.inFlight.Set(float64(n)) }

var (
	jobsDesc = prometheus.NewDesc("herald_jobs", "Jobs in the queue by state (all processes sharing the store).",
		[]string{"state"}, nil)
	quarantinedDesc = prometheus.NewDesc("herald_hosts_quarantined", "Remote hosts whose circuit breaker is open now.", nil, nil)
	storeErrorsDesc = prometheus.NewDesc("herald_metrics_store_errors_total",
		"Scrapes whose reading of the queue or the breakers failed (their gauges are then left out).", nil, nil)
)

// storeCollector reads the queue's counts and the quarantined hosts at
// scrape time, keeping one reading for cacheFor. It counts its own failed
// readings and reports the count itself: the registry gathers collectors
// concurrently, so a separate counter could be gathered before the failure
// of the same scrape was counted.
type storeCollector struct {
	jobs      ports.JobAdmin
	instances ports.InstanceStore
	clock     ports.Clock
	cacheFor  time.Duration
	log       *slog.Logger

	mu          sync.Mutex
	at          time.Time
	ok          bool
	counts      map[domain.JobState]int
	quarantined int
	failures    int
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- quarantinedDesc
	ch <- storeErrorsDesc
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if !c.ok || now.Sub(c.at) >= c.cacheFor || now.Before(c.at) {
		c.read(now)
	}
	ch <- prometheus.MustNewConstMetric(storeErrorsDesc, prometheus.CounterValue, float64(c.failures))
	if !c.ok {
		return
	}
	for _, st := range domain.JobStates() {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(c.counts[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(quarantinedDesc, prometheus.GaugeValue, float64(c.quarantined))
}

// read refreshes the cache. A failed reading is not cached, so the next
// scrape tries again, and the gauges are left out rather than reported as
// zero, which would look like an empty queue.
func (c *storeCollector) read(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.jobs.Counts(ctx)
	if err == nil {
		var q []domain.RemoteInstance
		if q, err = c.instances.List(ctx, now); err == nil {
			c.counts, c.quarantined, c.at, c.ok = counts, len(q), now, true
			return
		}
	}
	c.ok = false
	c.failures++
	c.log.Warn("metrics: cannot read the queue or the breakers", "err", err)
}
