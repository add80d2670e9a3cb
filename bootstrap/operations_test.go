package bootstrap_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldfed/herald/bootstrap"
)

// The wired server: the rate limit of sign-in is the configured one, the
// operator surface is off without a token, /metrics answers.
func TestOperationsWiring(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		adminCode int
	}{
		{"admin off", nil, http.StatusNotFound},
		{"admin on", []string{"--herald-admin-token=t0k"}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--herald-addr=127.0.0.1:0", "--herald-bcrypt-cost=4", "--herald-auth-burst=2", "--herald-auth-rate-per-minute=1",
				"--herald-store=memory"}, tt.args...)
			cfg, err := bootstrap.LoadConfig(args, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			srv, stop := startServer(t, cfg)
			addr, err := srv.Addr(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			base := "http://" + addr.String()
			status := func(method, path, body string) (int, http.Header) {
				req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode, resp.Header
			}
			// An invalid name is refused before any password hashing, so
			// the attempts are quick and the wait is about a minute.
			const bad = `{"username":"no body","password":"wrong horse"}`
			for i := range 2 {
				if code, _ := status("POST", "/api/v1/accounts", bad); code != 422 {
					t.Fatalf("attempt %d: %d", i+1, code)
				}
			}
			code, hdr := status("POST", "/api/v1/sessions", bad)
			if ra, _ := strconv.Atoi(hdr.Get("Retry-After")); code != 429 || ra < 30 || ra > 60 {
				t.Fatalf("past HERALD_AUTH_BURST: %d Retry-After %q", code, hdr.Get("Retry-After"))
			}
			for _, p := range []string{"/admin", "/admin/api/queue"} {
				if code, _ := status("GET", p, ""); code != tt.adminCode {
					t.Errorf("%s: %d, want %d", p, code, tt.adminCode)
				}
			}
			if code, _ := status("GET", "/metrics", ""); code != 200 {
				t.Errorf("/metrics: %d", code)
			}
			stop() // and Run ended without an error
		})
	}
}
