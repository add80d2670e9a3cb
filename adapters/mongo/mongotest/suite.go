package mongotest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Option adjusts how a mongotest suite runs on the server at hand.
type Option func(*suiteOptions)

type suiteOptions struct {
	skip        map[string]string
	startAt     uint
	startReason string
	noTTL       bool
	noSparse    string // why the server's index listing has no sparse flag
	noPartial   string // why the server has no partial indexes
}

// Skip marks one case (by its subtest name) as not verifiable on this
// server, with the reason printed when it is skipped.
func Skip(caseName, reason string) Option {
	return func(o *suiteOptions) {
		if o.skip == nil {
			o.skip = make(map[string]string)
		}
		o.skip[caseName] = reason
	}
}

// StartAt makes the migration suite begin from a database recorded at
// version v, for a server that cannot run the migrations up to v; reason
// says why, and what those migrations would have done stays unverified.
func StartAt(v uint, reason string) Option {
	return func(o *suiteOptions) { o.startAt, o.startReason = v, reason }
}

// WithoutTTL says the server has no TTL indexes, so EnsureIndexes must
// report ttl=false and warn once.
func WithoutTTL() Option {
	return func(o *suiteOptions) { o.noTTL = true }
}

// SparseNotListed says the server takes the sparse option but lists its
// indexes without it (FerretDB v1), so only uniqueness can be read back.
func SparseNotListed(reason string) Option {
	return func(o *suiteOptions) { o.noSparse = reason }
}

// WithoutPartialIndexes says the server refuses partial indexes (FerretDB
// v1), so EnsureIndexes must make their plain stand-ins and warn once a
// start; reason says why.
func WithoutPartialIndexes(reason string) Option {
	return func(o *suiteOptions) { o.noPartial = reason }
}

func buildOptions(opts []Option) suiteOptions {
	var o suiteOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

type suiteCase struct {
	name string
	run  func(t *testing.T)
}

func runSuite(t *testing.T, o suiteOptions, cases []suiteCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := o.skip[c.name]; ok {
				t.Skipf("UNVERIFIED on this server: %s", why)
			}
			c.run(t)
		})
	}
}

// testLog is a logger that writes to t.Log and counts warnings, so a test
// can check that something was (or was not) logged.
type testLog struct {
	*slog.Logger
	mu    sync.Mutex
	warns []string
}

func newTestLog(t *testing.T) *testLog {
	l := &testLog{}
	text := slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})
	l.Logger = slog.New(&countingHandler{Handler: text, log: l})
	return l
}

func (l *testLog) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.warns...)
}

type countingHandler struct {
	slog.Handler
	log *testLog
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.log.mu.Lock()
		h.log.warns = append(h.log.warns, r.Message)
		h.log.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithAttrs(as), log: h.log}
}

func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithGroup(name), log: h.log}
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var _ io.Writer = tWriter{}
