package mastodon_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/mastodon"
	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/fake"
)

// server is Herald's whole HTTP surface on the memory stores, with the
// client API, and two accounts: alice (personas alice and alice_work) and
// bob.
type server struct {
	*httptest.Server
	app     *application.Application
	fed     *application.Federation
	api     *application.ClientAPI
	clock   *fake.Clock
	follows *memory.FollowerStore
	content *memory.ContentStore
	jobs    *memory.JobStore
	oauth   *memory.OAuthStore
	fetcher mapFetcher
	// blocks and moderation are the personas' blocks and the operator's
	// federation policy (domain blocks and allows).
	blocks     *memory.BlockStore
	moderation *application.Moderation
	// notes are the personas' notifications, recorded by the inbox.
	notes *memory.NotificationStore
}

// setupOptions change what setup builds.
type setupOptions struct {
	// fetcher replaces the map of documents (a real HTTP fetcher, for
	// remote actors served by an httptest server).
	fetcher application.Fetcher
	mode    domain.FederationMode
}

type mapFetcher map[string][]byte

func (m mapFetcher) Fetch(_ context.Context, r application.FetchRequest) (application.Fetched, error) {
	if d, ok := m[r.URL]; ok {
		return application.Fetched{Body: d, URL: r.URL, ContentType: application.ActivityJSON}, nil
	}
	return application.Fetched{}, fmt.Errorf("%w: %s", domain.ErrNotFound, r.URL)
}

type okReady struct{}

func (okReady) Ready(context.Context) error { return nil }

func setup(t *testing.T, opts ...func(*setupOptions)) *server {
	t.Helper()
	var o setupOptions
	for _, opt := range opts {
		opt(&o)
	}
	ctx := context.Background()
	accounts, names := memory.NewAccountStore(), memory.NewNameRegistry()
	s := &server{follows: memory.NewFollowerStore(), content: memory.NewContentStore(), jobs: memory.NewJobStore(), oauth: memory.NewOAuthStore(),
		clock: fake.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), fetcher: mapFetcher{}, notes: memory.NewNotificationStore()}
	blocks := memory.NewBlockStore()
	s.blocks = blocks
	s.moderation = application.NewModeration(application.ModerationDeps{Store: memory.NewModerationStore(), JobAdmin: s.jobs, Foreign: s.content,
		Followers: s.follows, Mode: o.mode, Clock: s.clock})
	var fetcher application.Fetcher = s.fetcher
	if o.fetcher != nil {
		fetcher = o.fetcher
	}
	ids, urls := fake.NewIDs("id"), application.NewURLs("local.example")
	policy, _ := domain.NewNamePolicy("instance", nil)
	s.app = application.New(application.Deps{
		Users: accounts, Tokens: accounts, Actors: accounts, Names: names, Followers: s.follows, Foreign: s.content, AccountIDs: memory.NewAccountIDStore(),
		Posts: s.content, HTML: sanitizer.NewHTMLSanitizer(), Tombstones: s.content, Moderation: s.moderation, Blocks: blocks, Jobs: s.jobs, OAuth: s.oauth,
		Notifications: s.notes, Passwords: fake.Passwords{}, Keys: &fake.Keys{}, Fetcher: fetcher, Clock: s.clock, IDs: ids,
		URLs: urls, NamePolicy: policy, InstanceActor: "instance", Registrations: domain.RegistrationsOpen,
	})
	s.fed, s.api = &s.app.Federation, &s.app.ClientAPI
	if _, err := s.app.InstanceActor.Handle(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		if _, err := s.app.SignUp.Handle(ctx, application.SignUp{UserName: name, Password: "password-" + name}); err != nil {
			t.Fatal(err)
		}
	}
	u, err := accounts.UserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: u.ID, Name: "alice_work"}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	routes := mastodon.New(s.app, mastodon.Config{Title: "local.example", Version: "test", Registrations: domain.RegistrationsOpen}, log, nil, nil)
	s.Server = httptest.NewServer(httpapi.New(s.app, okReady{}, log, httpapi.NewFollowRoutes(s.app, log), routes))
	t.Cleanup(s.Close)
	return s
}

// client is s's client that does not follow redirects (the authorization
// page's answer is one, to the application).
func (s *server) client() *http.Client {
	c := *s.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", r.status, err, r.body)
	}
}

func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	r.json(t, &m)
	return m
}

func (r response) list(t *testing.T) []map[string]any {
	t.Helper()
	var l []map[string]any
	r.json(t, &l)
	return l
}

// do sends a request; body is a url.Values (a form), a string (JSON) or nil.
func (s *server) do(t *testing.T, method, path, token string, body any) response {
	t.Helper()
	return s.doWith(t, method, path, token, body, nil)
}

// doWith is do with header's fields set on the request besides.
func (s *server) doWith(t *testing.T, method, path, token string, body any, header http.Header) response {
	t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case url.Values:
		rd, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, vs := range header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	resp, err := s.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// formOf reads a page's hidden fields, as a browser would submit them.
func formOf(page []byte) url.Values {
	v := url.Values{}
	for _, m := range hiddenField.FindAllSubmatch(page, -1) {
		v.Set(string(m[1]), html.UnescapeString(string(m[2])))
	}
	return v
}

type app struct{ id, secret string }

const callback = "https://client.example/callback"

func (s *server) registerApp(t *testing.T, scopes string) app {
	t.Helper()
	r := s.do(t, http.MethodPost, "/api/v1/apps", "", url.Values{"client_name": {"Test app"}, "redirect_uris": {callback}, "scopes": {scopes}})
	if r.status != http.StatusOK {
		t.Fatalf("register app: %d %s", r.status, r.body)
	}
	m := r.object(t)
	return app{id: m["client_id"].(string), secret: m["client_secret"].(string)}
}

const pkceVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-and-some-more"

func pkceChallenge() string {
	sum := sha256.Sum256([]byte(pkceVerifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorize walks the authorization page as a browser: sign in as user,
// choose persona; it returns the code the page redirected with.
func (s *server) authorize(t *testing.T, a app, user, persona, scope string) string {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {a.id}, "redirect_uri": {callback}, "scope": {scope}, "state": {"xyz"},
		"code_challenge": {pkceChallenge()}, "code_challenge_method": {"S256"}}
	r := s.do(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("authorize page: %d %s", r.status, r.body)
	}
	form := formOf(r.body)
	form.Set("username", user)
	form.Set("password", "password-"+user)
	r = s.do(t, http.MethodPost, "/oauth/authorize", "", form)
	if r.status != http.StatusOK {
		t.Fatalf("sign in: %d %s", r.status, r.body)
	}
	form = formOf(r.body)
	form.Set("persona", persona)
	form.Set("decision", "approve")
	r = s.do(t, http.MethodPost, "/oauth/authorize", "", form)
	if r.status != http.StatusFound {
		t.Fatalf("consent: %d %s", r.status, r.body)
	}
	loc, err := url.Parse(r.header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), callback+"?") || loc.Query().Get("state") != "xyz" {
		t.Fatalf("consent redirected to %q", r.header.Get("Location"))
	}
	return loc.Query().Get("code")
}

// login runs the whole code flow and returns the access token.
func (s *server) login(t *testing.T, user, persona, scope string) string {
	t.Helper()
	a := s.registerApp(t, "read write follow")
	code := s.authorize(t, a, user, persona, scope)
	r := s.do(t, http.MethodPost, "/oauth/token", "", url.Values{"grant_type": {"authorization_code"}, "client_id": {a.id},
		"client_secret": {a.secret}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {pkceVerifier}})
	if r.status != http.StatusOK {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	return r.object(t)["access_token"].(string)
}

// postStatus posts a status as token's persona (form is a url.Values or
// JSON, as do takes it), fails the test unless it was accepted, and moves
// the clock a minute on, so that each post is later than the one before.
func (s *server) postStatus(t *testing.T, token string, form any) map[string]any {
	t.Helper()
	r := s.do(t, http.MethodPost, "/api/v1/statuses", token, form)
	if r.status != http.StatusOK {
		t.Fatalf("post %v: %d %s", form, r.status, r.body)
	}
	s.clock.Advance(time.Minute)
	return r.object(t)
}
