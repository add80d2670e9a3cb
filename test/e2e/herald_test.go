package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
)

// api talks to one Herald over HTTP, as a client or a curl would.
type api struct {
	t      *testing.T
	base   string       // http://host:port
	client *http.Client // nil: http.DefaultClient
}

func (a api) call(method, path, token string, in any) (int, map[string]any) {
	a.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+path, body)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := a.client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// signUp creates an account and returns its token.
func (a api) signUp(name string) string {
	a.t.Helper()
	status, out := a.call(http.MethodPost, "/api/v1/accounts", "", map[string]string{"username": name, "password": "correct horse"})
	if status != http.StatusCreated {
		a.t.Fatalf("sign-up %s: %d %v", name, status, out)
	}
	return out["token"].(string)
}

func (a api) post(token string, post map[string]any) map[string]any {
	a.t.Helper()
	status, out := a.call(http.MethodPost, "/api/v1/posts", token, post)
	if status != http.StatusCreated {
		a.t.Fatalf("post %v: %d %v", post, status, out)
	}
	return out
}

// logBuffer keeps a test server's logs and prints them if the test fails.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func testLogger(t *testing.T, name string) *slog.Logger {
	lb := &logBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			lb.mu.Lock()
			t.Logf("%s logs:\n%s", name, lb.buf.String())
			lb.mu.Unlock()
		}
	})
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// herald is one Herald process wired by bootstrap, exactly as
// `go run ./cmd/herald` wires it, on the memory store.
type herald struct {
	api
	srv    *bootstrap.Server
	domain string
}

// startHerald runs a Herald whose HERALD_DOMAIN is its own loopback
// address: a free port is picked first, since actor URIs must name the
// port the server listens on.
func startHerald(t *testing.T, name string, env map[string]string) *herald {
	t.Helper()
	for try := 0; ; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		vars := map[string]string{
			"HERALD_ADDR": addr, "HERALD_DOMAIN": addr, "HERALD_ALLOW_PRIVATE_TARGETS": "true",
			"HERALD_BCRYPT_COST": "4", "HERALD_STORE": "memory", "HERALD_SHUTDOWN_GRACE": "2s",
		}
		for k, v := range env {
			vars[k] = v
		}
		cfg, err := bootstrap.LoadConfig(nil, func(k string) string { return vars[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		srv, cleanup, err := bootstrap.InitializeServer(ctx, cfg, testLogger(t, name))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		wait, stop := context.WithTimeout(ctx, 10*time.Second)
		_, err = srv.Addr(wait)
		stop()
		if err != nil {
			cancel()
			cleanup()
			runErr := <-done
			// Someone took the port between our probe and the listen.
			if try < 3 && runErr != nil && strings.Contains(runErr.Error(), "listen") {
				continue
			}
			t.Fatalf("herald %s did not start: %v %v", name, err, runErr)
		}
		t.Cleanup(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Error("herald did not stop")
			}
			cleanup()
		})
		return &herald{api: api{t: t, base: "http://" + addr}, srv: srv, domain: addr}
	}
}

// settled waits until no job of the instance is queued or leased.
func (h *herald) settled(t *testing.T) map[domain.JobState]int {
	t.Helper()
	var counts map[domain.JobState]int
	eventually(t, "the queue to drain", func() bool {
		c, err := h.srv.Stores().JobAdmin.Counts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		counts = c
		return c[domain.JobQueued] == 0 && c[domain.JobLeased] == 0
	})
	return counts
}

func (h *herald) persona(name string) string { return h.base + "/users/" + name }

func itoa(n int) string { return strconv.Itoa(n) }
