package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/fake"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{domain.ErrNameTaken, 409},
		{fmt.Errorf("wrapped: %w", domain.ErrNameTaken), 409},
		{domain.ErrAlreadyExists, 409},
		{domain.ErrInvalidName, 422},
		{domain.ErrInvalidInput, 422},
		{domain.ErrUnauthorized, 401},
		{domain.ErrForbidden, 403},
		{domain.ErrNotFound, 404},
		{domain.ErrUnavailable, 503},
		{context.DeadlineExceeded, 503},
		{errors.New("boom"), 500},
	}
	for _, tt := range tests {
		if got := httpapi.Status(tt.err); got != tt.want {
			t.Errorf("Status(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

type ready struct{ err error }

func (r ready) Ready(context.Context) error { return r.err }

// stores are the memory stores behind a test's application that the
// test reads.
type stores struct {
	jobs    *memory.JobStore
	names   *memory.NameRegistry
	follows *memory.FollowerStore
	content *memory.ContentStore
}

// newDeps is what every test here builds its application on: fresh
// memory stores and fakes, the clock at 2026-01-01. A test adds what it
// needs more (a fetcher, a registration mode) before application.New.
func newDeps(t *testing.T) (application.Deps, stores) {
	t.Helper()
	accounts := memory.NewAccountStore()
	st := stores{jobs: memory.NewJobStore(), names: memory.NewNameRegistry(), follows: memory.NewFollowerStore(), content: memory.NewContentStore()}
	return application.Deps{
		Users: accounts, Tokens: accounts, Actors: accounts, Names: st.names, Followers: st.follows,
		Foreign: st.content, Posts: st.content, HTML: sanitizer.NewHTMLSanitizer(), Jobs: st.jobs, Passwords: fake.Passwords{}, Keys: &fake.Keys{},
		Clock: fake.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), IDs: fake.NewIDs("id"), URLs: application.NewURLs("local.example"),
		NamePolicy: mustPolicy(t), InstanceActor: "instance",
	}, st
}

func mustPolicy(t *testing.T) domain.NamePolicy {
	t.Helper()
	p, err := domain.NewNamePolicy("instance", nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type server struct {
	*httptest.Server
	stores
	app *application.Application
}

func newServer(t *testing.T, readiness error) *server {
	t.Helper()
	deps, st := newDeps(t)
	s := &server{stores: st, app: application.New(deps)}
	s.Server = httptest.NewServer(httpapi.New(s.app, ready{readiness}, slog.New(slog.DiscardHandler)))
	t.Cleanup(s.Close)
	return s
}

func (s *server) do(t *testing.T, method, path, token, contentType string, body io.Reader) (int, map[string]any) {
	t.Helper()
	return request(t, method, s.URL+path, token, contentType, body)
}

// request sends one request, with a bearer token and a content type when
// given, and decodes the JSON object it answers.
func request(t *testing.T, method, url, token, contentType string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (s *server) post(t *testing.T, path, token, body string) (int, map[string]any) {
	t.Helper()
	return s.do(t, http.MethodPost, path, token, "application/json", strings.NewReader(body))
}

// signUp signs name up (password "correct horse") and returns the
// session's token.
func (s *server) signUp(t *testing.T, name string) string {
	t.Helper()
	code, body := s.post(t, "/api/v1/accounts", "", `{"username":"`+name+`","password":"correct horse"}`)
	token, _ := body["token"].(string)
	if code != 201 || token == "" {
		t.Fatalf("sign-up of %s: %d %v", name, code, body)
	}
	return token
}

func TestProbes(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	if code, body := s.do(t, http.MethodGet, "/healthz", "", "", nil); code != 200 || body["status"] != "ok" {
		t.Fatalf("healthz %d %v", code, body)
	}
	if code, _ := s.do(t, http.MethodGet, "/readyz", "", "", nil); code != 200 {
		t.Fatalf("readyz %d", code)
	}
	down := newServer(t, fmt.Errorf("%w: store down", domain.ErrUnavailable))
	if code, body := down.do(t, http.MethodGet, "/readyz", "", "", nil); code != 503 || body["reason"] == "" {
		t.Fatalf("readyz when not ready: %d %v", code, body)
	}
	if code, _ := down.do(t, http.MethodGet, "/healthz", "", "", nil); code != 200 {
		t.Fatal("healthz must not depend on storage")
	}
}

func TestSignUpAndUse(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	code, body := s.post(t, "/api/v1/accounts", "", `{"username":"Alice","password":"correct horse"}`)
	if code != 201 || body["token"] == "" || body["username"] != "alice" {
		t.Fatalf("sign-up %d %v", code, body)
	}
	persona := body["persona"].(map[string]any)
	if persona["uri"] != "https://local.example/users/alice" {
		t.Fatalf("persona %v", persona)
	}
	token := body["token"].(string)
	if code, body := s.post(t, "/api/v1/sessions", "", `{"username":"alice","password":"correct horse"}`); code != 201 || body["token"] == "" {
		t.Fatalf("login %d %v", code, body)
	}
	if code, body := s.post(t, "/api/v1/personas", token, `{"name":"alice_work"}`); code != 201 || body["name"] != "alice_work" {
		t.Fatalf("persona %d %v", code, body)
	}
	if code, body := s.post(t, "/api/v1/groups", token, `{"name":"club"}`); code != 201 || body["uri"] != "https://local.example/groups/club" {
		t.Fatalf("group %d %v", code, body)
	}
	// A follower to fan out to.
	_ = s.content.Upsert(context.Background(), domain.ForeignAvatar{ActorURI: "https://r.example/users/bob", Inbox: "https://r.example/users/bob/inbox"})
	f, _ := domain.NewFollower("https://r.example/users/bob", "https://local.example/users/alice", "", domain.FollowAccepted, time.Now())
	_, _ = s.follows.Add(context.Background(), f)
	code, body = s.post(t, "/api/v1/posts", token, `{"as":"alice","content":"hello","visibility":"public"}`)
	if code != 201 || body["queued"] != float64(1) || body["inboxes"] != float64(1) {
		t.Fatalf("publish %d %v", code, body)
	}
	c, _ := s.jobs.Counts(context.Background())
	if c[domain.JobQueued] != 1 {
		t.Fatalf("queued %d", c[domain.JobQueued])
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	token := s.signUp(t, "alice")
	other := s.signUp(t, "mallory")
	big := `{"username":"` + strings.Repeat("a", httpapi.MaxBodyBytes) + `","password":"x"}`
	tests := []struct {
		name        string
		method      string
		path        string
		token       string
		contentType string
		body        string
		want        int
	}{
		{"malformed JSON", "POST", "/api/v1/accounts", "", "application/json", `{"username":`, 400},
		{"not an object", "POST", "/api/v1/accounts", "", "application/json", `["alice"]`, 400},
		{"wrong field type", "POST", "/api/v1/accounts", "", "application/json", `{"username":42,"password":"correct horse"}`, 400},
		{"trailing data", "POST", "/api/v1/accounts", "", "application/json", `{"username":"bob","password":"correct horse"} {}`, 400},
		{"empty body", "POST", "/api/v1/accounts", "", "application/json", ``, 400},
		{"oversized body", "POST", "/api/v1/accounts", "", "application/json", big, 413},
		{"form instead of JSON", "POST", "/api/v1/accounts", "", "application/x-www-form-urlencoded", `username=bob`, 415},
		{"invalid name", "POST", "/api/v1/accounts", "", "application/json", `{"username":"bob smith","password":"correct horse"}`, 422},
		{"name taken", "POST", "/api/v1/accounts", "", "application/json", `{"username":"ALICE","password":"correct horse"}`, 409},
		{"reserved name", "POST", "/api/v1/accounts", "", "application/json", `{"username":"postmaster","password":"correct horse"}`, 409},
		{"short password", "POST", "/api/v1/accounts", "", "application/json", `{"username":"bob","password":"x"}`, 422},
		{"wrong password", "POST", "/api/v1/sessions", "", "application/json", `{"username":"alice","password":"wrong horse"}`, 401},
		{"persona without token", "POST", "/api/v1/personas", "", "application/json", `{"name":"x"}`, 401},
		{"persona with bad token", "POST", "/api/v1/personas", "forged", "application/json", `{"name":"x"}`, 401},
		{"post as someone else", "POST", "/api/v1/posts", other, "application/json", `{"as":"alice","content":"hi"}`, 403},
		{"post with bad visibility", "POST", "/api/v1/posts", token, "application/json", `{"as":"alice","content":"hi","visibility":"secret"}`, 422},
		{"unknown endpoint", "GET", "/api/v1/nope", "", "", ``, 404},
		{"wrong method", "GET", "/api/v1/accounts", "", "", ``, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = bytes.NewBufferString(tt.body)
			}
			code, out := s.do(t, tt.method, tt.path, tt.token, tt.contentType, body)
			if code != tt.want {
				t.Fatalf("status %d, want %d (%v)", code, tt.want, out)
			}
			if out["error"] == nil || out["error"] == "" {
				t.Fatalf("no error message: %v", out)
			}
		})
	}
	// Nothing of the refused requests was kept.
	if names, _ := s.names.List(context.Background(), ""); len(names) != 2 {
		t.Fatalf("%d names reserved, want alice and mallory only", len(names))
	}
}

func TestStoreErrorTextStaysServerSide(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	s.signUp(t, "alice")
	// The memory store's message names the store's internals as a driver's would.
	code, body := s.post(t, "/api/v1/accounts", "", `{"username":"alice","password":"correct horse"}`)
	if code != 409 || body["error"] != "name taken" {
		t.Fatalf("%d %v", code, body)
	}
}
