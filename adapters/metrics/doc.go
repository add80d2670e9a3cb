// Package metrics exposes Herald to Prometheus at /metrics, with
// prometheus/client_golang on a registry of its own (no global state). It
// implements ports.EngineObserver, counting what the delivery engine does,
// and collects the queue's depth by state and the number of quarantined
// hosts from the stores at scrape time, cached for a few seconds so that
// frequent scrapes stay cheap.
package metrics
