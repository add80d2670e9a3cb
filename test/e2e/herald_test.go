package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/heraldtest"
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

// herald is one Herald process wired by bootstrap, exactly as
// `go run ./cmd/herald` wires it, on the memory store.
type herald struct {
	api
	srv    *bootstrap.Server
	domain string
}

// startHerald runs a Herald (heraldtest.Start) on the memory store, env
// adding to or overriding the defaults.
func startHerald(t *testing.T, name string, env map[string]string) *herald {
	t.Helper()
	vars := map[string]string{
		"HERALD_ALLOW_PRIVATE_TARGETS": "true", "HERALD_BCRYPT_COST": "4", "HERALD_STORE": "memory", "HERALD_SHUTDOWN_GRACE": "2s",
	}
	for k, v := range env {
		vars[k] = v
	}
	s := heraldtest.Start(t, name, vars)
	return &herald{api: api{t: t, base: s.Base}, srv: s.Srv, domain: s.Addr}
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
