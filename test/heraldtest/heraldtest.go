// Package heraldtest starts Herald servers in-process for the end-to-end
// suites (test/e2e, test/hostile), wired by bootstrap exactly as `herald
// serve` wires them, each on a loopback port of its own that is also its
// HERALD_DOMAIN (actor URIs must name the port the server listens on).
package heraldtest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

// Server is one running Herald.
type Server struct {
	Srv  *bootstrap.Server
	Addr string // 127.0.0.1:port, also its HERALD_DOMAIN
	Base string // http://Addr
}

// Start runs a Herald configured by vars (as the environment would;
// HERALD_ADDR and HERALD_DOMAIN are set to the port it gets), logging to
// Logger(t, name), and stops it when the test ends. A port taken between
// the probe and the listen is tried again with another.
func Start(t testing.TB, name string, vars map[string]string) *Server {
	t.Helper()
	for try := 0; ; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		env := map[string]string{"HERALD_ADDR": addr, "HERALD_DOMAIN": addr}
		for k, v := range vars {
			env[k] = v
		}
		cfg, err := bootstrap.LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		srv, cleanup, err := bootstrap.InitializeServer(ctx, cfg, Logger(t, name))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		wait, stop := context.WithTimeout(ctx, 30*time.Second)
		_, err = srv.Addr(wait)
		stop()
		if err != nil {
			cancel()
			cleanup()
			runErr := <-done
			if try < 3 && runErr != nil && strings.Contains(runErr.Error(), "listen") {
				continue
			}
			t.Fatalf("herald %s did not start: %v %v", name, err, runErr)
		}
		t.Cleanup(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Error("herald " + name + " did not stop")
			}
			cleanup()
		})
		return &Server{Srv: srv, Addr: addr, Base: "http://" + addr}
	}
}

// Logger keeps a Herald's logs (debug and up) and prints them when the
// test fails: they say why each request was refused or accepted.
func Logger(t testing.TB, name string) *slog.Logger {
	lb := &LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s logs:\n%s", name, lb.String())
		}
	})
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// LogBuffer keeps what a server logs, at most 4 MiB, safe for concurrent
// writes.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 4<<20 {
		return len(p), nil
	}
	return l.buf.Write(p)
}

// String is what was logged so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
