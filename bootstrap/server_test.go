package bootstrap_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

// The whole server on the default store (SQLite, in a data directory of
// the test's own): it starts, answers its probes, and stops cleanly when
// its context ends.
func TestServerStartsAndStops(t *testing.T) {
	t.Parallel()
	cfg, err := bootstrap.LoadConfig([]string{"--herald-addr=127.0.0.1:0", "--herald-bcrypt-cost=4", "--herald-data-dir=" + t.TempDir()},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, cleanup, err := bootstrap.InitializeServer(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	wait, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	addr, err := srv.Addr(wait)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}

// A second server on a taken address says what to do: stop the other
// one, or set HERALD_ADDR.
func TestServerOnATakenAddressSaysWhatToDo(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg, err := bootstrap.LoadConfig([]string{"--herald-addr=" + ln.Addr().String(), "--herald-store=memory", "--herald-bcrypt-cost=4"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, cleanup, err := bootstrap.InitializeServer(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	err = srv.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "HERALD_ADDR") {
		t.Fatalf("run on a taken address: %v, want an error naming HERALD_ADDR", err)
	}
}
