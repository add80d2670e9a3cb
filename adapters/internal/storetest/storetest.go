// Package storetest holds the helpers the SQL stores' tests (PostgreSQL,
// SQLite) share: a test's context and log, and the job they enqueue. It
// is for tests only; no adapter's code imports it.
package storetest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// Context is a test's context: cancelled when the test ends, and after
// three minutes, so a store that hangs fails the test instead of the run.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Logger logs at debug level to t.Log, so a store's log lines show with
// the failing test.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// NewJob is a valid queued job named id (contract.JobID) to an inbox on
// host, due at runAt.
func NewJob(t testing.TB, id, host string, runAt time.Time) domain.Job {
	t.Helper()
	j, err := domain.NewJob(contract.JobID(id), "https://local.example/act/"+id, "https://"+host+"/inbox", "actor-1",
		"https://local.example/users/alice#main-key", []byte(`{"id":"`+id+`"}`), runAt)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
