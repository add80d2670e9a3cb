package mastodon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestOAuthCodeFlowOverHTTP(t *testing.T) {
	t.Parallel()
	s := setup(t)
	a := s.registerApp(t, "read write")
	code := s.authorize(t, a, "alice", "alice_work", "read write:statuses")
	r := s.do(t, http.MethodPost, "/oauth/token", "", `{"grant_type":"authorization_code","client_id":"`+a.id+`","client_secret":"`+a.secret+
		`","code":"`+code+`","redirect_uri":"`+callback+`","code_verifier":"`+pkceVerifier+`"}`)
	if r.status != http.StatusOK {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	tok := r.object(t)
	if tok["token_type"] != "Bearer" || tok["scope"] != "read write:statuses" {
		t.Fatalf("token answer %v", tok)
	}
	access := tok["access_token"].(string)
	r = s.do(t, http.MethodGet, "/api/v1/apps/verify_credentials", access, nil)
	if r.status != http.StatusOK || r.object(t)["name"] != "Test app" {
		t.Fatalf("verify app: %d %s", r.status, r.body)
	}
	if _, ok := r.object(t)["client_secret"]; ok {
		t.Fatal("verify_credentials shows the client secret")
	}
	// Revoked: the token stops working.
	r = s.do(t, http.MethodPost, "/oauth/revoke", "", url.Values{"client_id": {a.id}, "client_secret": {a.secret}, "token": {access}})
	if r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/apps/verify_credentials", access, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("revoked token: %d %s", r.status, r.body)
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	s := setup(t)
	a := s.registerApp(t, "read write")
	r := s.do(t, http.MethodPost, "/oauth/token", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {a.id}, "client_secret": {a.secret}})
	if r.status != http.StatusOK || r.object(t)["scope"] != "read" {
		t.Fatalf("client credentials: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/apps/verify_credentials", r.object(t)["access_token"].(string), nil); r.status != http.StatusOK {
		t.Fatalf("app token verify: %d %s", r.status, r.body)
	}
}

// The authorization page refuses, without redirecting, a client or a
// redirect URI it does not know, and sends every other refusal back to
// the application.
func TestAuthorizePageRefusals(t *testing.T) {
	t.Parallel()
	s := setup(t)
	a := s.registerApp(t, "read")
	base := url.Values{"response_type": {"code"}, "client_id": {a.id}, "redirect_uri": {callback}, "state": {"s1"}}
	with := func(k, v string) string {
		q := url.Values{}
		for kk, vv := range base {
			q[kk] = vv
		}
		q.Set(k, v)
		return "/oauth/authorize?" + q.Encode()
	}
	for name, c := range map[string]struct {
		path, wantError string
		status          int
	}{
		"UnknownClient":       {with("client_id", "nope"), "", http.StatusUnauthorized},
		"OtherRedirect":       {with("redirect_uri", "https://evil.example/cb"), "", http.StatusBadRequest},
		"ScopeEscalation":     {with("scope", "read write"), "invalid_scope", http.StatusFound},
		"UnknownScope":        {with("scope", "admin:write"), "invalid_scope", http.StatusFound},
		"Token response type": {with("response_type", "token"), "unsupported_response_type", http.StatusFound},
		"PlainPKCE":           {with("code_challenge_method", "plain"), "invalid_request", http.StatusFound},
		"ChallengeNotASHA256": {with("code_challenge", "short"), "invalid_request", http.StatusFound},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "ChallengeNotASHA256" {
				c.path += "&code_challenge_method=S256"
			}
			r := s.do(t, http.MethodGet, c.path, "", nil)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			loc := r.header.Get("Location")
			if c.wantError == "" {
				if loc != "" || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
					t.Fatalf("redirected to %q for an unknown client or redirect URI", loc)
				}
				return
			}
			u, _ := url.Parse(loc)
			if !strings.HasPrefix(loc, callback) || u.Query().Get("error") != c.wantError || u.Query().Get("state") != "s1" {
				t.Fatalf("redirect %q, want %s with the state", loc, c.wantError)
			}
		})
	}
}

func TestAuthorizePageWrongPasswordAndDeny(t *testing.T) {
	t.Parallel()
	s := setup(t)
	a := s.registerApp(t, "read")
	q := url.Values{"response_type": {"code"}, "client_id": {a.id}, "redirect_uri": {callback}, "state": {"s2"}}
	r := s.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), "", nil)
	if r.header.Get("X-Frame-Options") != "DENY" || !strings.Contains(r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("the page may be framed: %v", r.header)
	}
	form := formOf(r.body)
	form.Set("username", "alice")
	form.Set("password", "password-bob")
	if r := s.do(t, http.MethodPost, "/oauth/authorize", "", form); r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "Wrong user name or password") {
		t.Fatalf("wrong password: %d %s", r.status, r.body)
	}
	form.Set("password", "password-alice")
	r = s.do(t, http.MethodPost, "/oauth/authorize", "", form)
	if !strings.Contains(string(r.body), `value="alice_work"`) || strings.Contains(string(r.body), `value="bob"`) {
		t.Fatalf("consent page lists %s", r.body)
	}
	consent := formOf(r.body)
	consent.Set("decision", "deny")
	r = s.do(t, http.MethodPost, "/oauth/authorize", "", consent)
	if loc := r.header.Get("Location"); r.status != http.StatusFound || !strings.Contains(loc, "error=access_denied") || !strings.Contains(loc, "state=s2") {
		t.Fatalf("deny: %d %q", r.status, loc)
	}
	// A consent spent by a refusal cannot be approved afterwards.
	consent.Set("decision", "approve")
	consent.Set("persona", "alice")
	if r := s.do(t, http.MethodPost, "/oauth/authorize", "", consent); r.status != http.StatusBadRequest {
		t.Fatalf("approving a spent consent: %d %s", r.status, r.body)
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	s := setup(t)
	a := s.registerApp(t, "read")
	for name, c := range map[string]struct {
		form   url.Values
		status int
		code   string
	}{
		"WrongSecret": {url.Values{"grant_type": {"client_credentials"}, "client_id": {a.id}, "client_secret": {"nope"}}, 401, "invalid_client"},
		"Password":    {url.Values{"grant_type": {"password"}, "client_id": {a.id}, "client_secret": {a.secret}}, 400, "unsupported_grant_type"},
		"UnknownCode": {url.Values{"grant_type": {"authorization_code"}, "client_id": {a.id}, "client_secret": {a.secret}, "code": {"nope"}, "redirect_uri": {callback}}, 400, "invalid_grant"},
		"EscalateApp": {url.Values{"grant_type": {"client_credentials"}, "client_id": {a.id}, "client_secret": {a.secret}, "scope": {"write"}}, 400, "invalid_scope"},
	} {
		t.Run(name, func(t *testing.T) {
			r := s.do(t, http.MethodPost, "/oauth/token", "", c.form)
			if r.status != c.status || r.object(t)["error"] != c.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, c.status, c.code)
			}
		})
	}
}
