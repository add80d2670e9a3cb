package httpapi_test

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// newRegServer is the client API with registrations in mode m and a
// sign-up limit of burst attempts per client.
func newRegServer(t *testing.T, m domain.RegistrationMode, burst int) *server {
	t.Helper()
	deps, st := newDeps(t)
	deps.Registrations = m
	s := &server{stores: st, app: application.New(deps)}
	limit := httpapi.NewRateLimiter(httpapi.RateLimit{PerMinute: 1, Burst: burst})
	s.Server = httptest.NewServer(httpapi.New(s.app, ready{}, slog.New(slog.DiscardHandler), limit))
	t.Cleanup(s.Close)
	return s
}

func TestSignUpByRegistrationMode(t *testing.T) {
	t.Parallel()
	const alice = `{"username":"alice","password":"correct horse","reason":"I run the club"}`

	t.Run("closed: 403 with the reason, and still limited", func(t *testing.T) {
		t.Parallel()
		s := newRegServer(t, domain.RegistrationsClosed, 2)
		for range 2 {
			code, body := s.post(t, "/api/v1/accounts", "", alice)
			if code != 403 || !strings.Contains(body["error"].(string), "registrations are closed") || body["token"] != nil {
				t.Fatalf("closed sign-up %d %v", code, body)
			}
		}
		if code, _ := s.post(t, "/api/v1/accounts", "", alice); code != 429 {
			t.Fatalf("past the sign-up limit: %d, want 429", code)
		}
	})

	t.Run("approval: 202 without a token; login 403 until approved", func(t *testing.T) {
		t.Parallel()
		s := newRegServer(t, domain.RegistrationsApproval, 10)
		code, body := s.post(t, "/api/v1/accounts", "", alice)
		if code != 202 || body["status"] != "pending" || body["username"] != "alice" || body["token"] != nil ||
			!strings.Contains(body["message"].(string), "approval") {
			t.Fatalf("pending sign-up %d %v", code, body)
		}
		code, body = s.post(t, "/api/v1/sessions", "", `{"username":"alice","password":"correct horse"}`)
		if code != 403 || !strings.Contains(body["error"].(string), "awaiting approval") || body["token"] != nil {
			t.Fatalf("login while pending %d %v", code, body)
		}
		if code, _ := s.post(t, "/api/v1/sessions", "", `{"username":"alice","password":"wrong horse"}`); code != 401 {
			t.Fatalf("wrong password of a pending account: %d", code)
		}
		if code, body := s.post(t, "/api/v1/accounts", "", `{"username":"bob","password":"correct horse","reason":"`+strings.Repeat("r", domain.MaxSignUpReason+1)+`"}`); code != 422 {
			t.Fatalf("reason too long: %d %v", code, body)
		}
	})

	t.Run("open: 201 with a token", func(t *testing.T) {
		t.Parallel()
		s := newRegServer(t, domain.RegistrationsOpen, 10)
		if code, body := s.post(t, "/api/v1/accounts", "", alice); code != 201 || body["token"] == nil {
			t.Fatalf("open sign-up %d %v", code, body)
		}
	})
}
