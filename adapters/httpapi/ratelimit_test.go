package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/application"
)

// manualNow is a hand-driven clock for the limiter.
type manualNow struct {
	mu sync.Mutex
	t  time.Time
}

func (m *manualNow) Now() time.Time { m.mu.Lock(); defer m.mu.Unlock(); return m.t }
func (m *manualNow) Advance(d time.Duration) {
	m.mu.Lock()
	m.t = m.t.Add(d)
	m.mu.Unlock()
}

func newLimited(t *testing.T, cfg httpapi.RateLimit, more ...httpapi.Routes) (http.Handler, *httpapi.RateLimiter, *manualNow) {
	t.Helper()
	clock := &manualNow{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg.Now = clock.Now
	deps, _ := newDeps(t) // its clock starts where the limiter's does
	app := application.New(deps)
	rl := httpapi.NewRateLimiter(cfg)
	return httpapi.New(app, ready{}, slog.New(slog.DiscardHandler), append([]httpapi.Routes{rl}, more...)...), rl, clock
}

func hit(h http.Handler, method, path, remote, token, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// wrongLogin is refused by both: 422 as a sign-up (invalid name), 401 as
// a login.
const wrongLogin = `{"username":"no body","password":"wrong horse"}`

func TestRateLimitSignUpAndLogin(t *testing.T) {
	t.Parallel()
	h, _, clock := newLimited(t, httpapi.RateLimit{PerMinute: 6, Burst: 3})
	const ip = "203.0.113.7:4242"
	// Sign-up and login share the bucket: three attempts pass.
	for i, path := range []string{"/api/v1/accounts", "/api/v1/sessions", "/api/v1/sessions"} {
		if rec := hit(h, "POST", path, ip, "", wrongLogin); rec.Code == 429 {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	for _, path := range []string{"/api/v1/sessions", "/api/v1/accounts"} {
		rec := hit(h, "POST", path, ip, "", wrongLogin)
		if rec.Code != 429 {
			t.Fatalf("%s over the limit: %d", path, rec.Code)
		}
		// One token every 10 s.
		if ra := rec.Header().Get("Retry-After"); ra != "10" {
			t.Fatalf("Retry-After %q, want 10", ra)
		}
		if !strings.Contains(rec.Body.String(), "too many requests") {
			t.Fatalf("body %s", rec.Body)
		}
	}
	// Another client is not affected, nor are other endpoints.
	if rec := hit(h, "POST", "/api/v1/sessions", "198.51.100.1:1", "", wrongLogin); rec.Code != 401 {
		t.Fatalf("other client: %d", rec.Code)
	}
	for i := 0; i < 10; i++ {
		if rec := hit(h, "POST", "/api/v1/personas", ip, "forged", `{"name":"x"}`); rec.Code != 401 {
			t.Fatalf("an unlimited endpoint answered %d", rec.Code)
		}
	}
	// Refused attempts spend nothing: after 4 s the wait is 6 s, after
	// 10 s one attempt passes again, and only one.
	clock.Advance(4 * time.Second)
	if rec := hit(h, "POST", "/api/v1/sessions", ip, "", wrongLogin); rec.Header().Get("Retry-After") != "6" {
		t.Fatalf("after 4 s: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	clock.Advance(6 * time.Second)
	if rec := hit(h, "POST", "/api/v1/sessions", ip, "", wrongLogin); rec.Code != 401 {
		t.Fatalf("after the wait: %d", rec.Code)
	}
	if rec := hit(h, "POST", "/api/v1/sessions", ip, "", wrongLogin); rec.Code != 429 {
		t.Fatalf("second after the wait: %d", rec.Code)
	}
}

func TestRateLimitKeys(t *testing.T) {
	t.Parallel()
	h, rl, _ := newLimited(t, httpapi.RateLimit{PerMinute: 1, Burst: 1})
	tests := []struct {
		name        string
		first, then string
		shared      bool
	}{
		{"same IPv4, other port", "192.0.2.1:1000", "192.0.2.1:2000", true},
		{"other IPv4", "192.0.2.2:1000", "192.0.2.3:1000", false},
		{"same IPv6 /64", "[2001:db8:1:2::1]:1", "[2001:db8:1:2:ffff::9]:1", true},
		{"other IPv6 /64", "[2001:db8:1:3::1]:1", "[2001:db8:1:4::1]:1", false},
	}
	for _, tt := range tests {
		hit(h, "POST", "/api/v1/sessions", tt.first, "", wrongLogin)
		got := hit(h, "POST", "/api/v1/sessions", tt.then, "", wrongLogin).Code == 429
		if got != tt.shared {
			t.Errorf("%s: limited %v, want %v", tt.name, got, tt.shared)
		}
	}
	if n := rl.Clients(); n != 6 {
		t.Fatalf("%d clients tracked, want 6", n)
	}
}

func TestRateLimitMemoryIsBounded(t *testing.T) {
	t.Parallel()
	// Burst 2 at 2 a minute: an idle bucket is full again after 60 s.
	h, rl, clock := newLimited(t, httpapi.RateLimit{PerMinute: 2, Burst: 2, MaxClients: 3})
	ip := func(i int) string { return "192.0.2." + strconv.Itoa(i) + ":1" }
	for i := 1; i <= 3; i++ {
		hit(h, "POST", "/api/v1/sessions", ip(i), "", wrongLogin)
		hit(h, "POST", "/api/v1/sessions", ip(i), "", wrongLogin)
	}
	if rl.Clients() != 3 {
		t.Fatalf("%d clients", rl.Clients())
	}
	// Full: new clients share one overflow bucket (burst 2), so memory
	// stays bounded and a flood of addresses is limited as one.
	for i := 4; i <= 5; i++ {
		if rec := hit(h, "POST", "/api/v1/sessions", ip(i), "", wrongLogin); rec.Code == 429 {
			t.Fatalf("overflow client %d refused too early", i)
		}
	}
	if rec := hit(h, "POST", "/api/v1/sessions", ip(6), "", wrongLogin); rec.Code != 429 {
		t.Fatalf("overflow bucket not shared: %d", rec.Code)
	}
	if rl.Clients() != 3 {
		t.Fatalf("%d clients tracked past the bound", rl.Clients())
	}
	// Not yet full again: eviction must not forgive the tracked clients.
	clock.Advance(59 * time.Second)
	if rec := hit(h, "POST", "/api/v1/sessions", ip(1), "", wrongLogin); rec.Code != 401 {
		t.Fatalf("client 1 after 59 s: %d", rec.Code) // one token refilled
	}
	if rec := hit(h, "POST", "/api/v1/sessions", ip(1), "", wrongLogin); rec.Code != 429 {
		t.Fatalf("client 1 was forgiven: %d", rec.Code)
	}
	// 2 and 3 have been idle for a full refill, 1 has not: only they are
	// evicted, and a new client gets its own bucket again.
	clock.Advance(30 * time.Second)
	hit(h, "POST", "/api/v1/sessions", ip(7), "", wrongLogin)
	if n := rl.Clients(); n != 2 {
		t.Fatalf("%d clients after the idle ones were evicted, want 2 (1 and 7)", n)
	}
	// Client 1 kept its bucket (1.97 tokens now, not a fresh 2).
	hit(h, "POST", "/api/v1/sessions", ip(1), "", wrongLogin)
	if rec := hit(h, "POST", "/api/v1/sessions", ip(1), "", wrongLogin); rec.Code != 429 {
		t.Fatalf("client 1 was forgiven by the sweep: %d", rec.Code)
	}
}
