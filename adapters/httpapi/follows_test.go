package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// mapFetcher serves fixed documents; anything else is 404.
type mapFetcher map[string][]byte

func (m mapFetcher) Fetch(_ context.Context, r application.FetchRequest) (application.Fetched, error) {
	if d, ok := m[r.URL]; ok {
		return application.Fetched{Body: d, URL: r.URL, ContentType: application.ActivityJSON}, nil
	}
	return application.Fetched{}, fmt.Errorf("%w: %s", domain.ErrNotFound, r.URL)
}

type followServer struct {
	*httptest.Server
	stores
	app    *application.Application
	blocks *memory.BlockStore
	token  string
	other  string // token of another account
}

const remoteBob = "https://remote.example/users/bob"

func setupFollows(t *testing.T) *followServer {
	t.Helper()
	ctx := context.Background()
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{"id": remoteBob, "type": "Person", "inbox": remoteBob + "/inbox",
		"publicKey": map[string]string{"id": remoteBob + "#main-key", "owner": remoteBob, "publicKeyPem": kp.PublicPEM}})
	fetcher := mapFetcher{
		remoteBob: doc,
		"https://remote.example/.well-known/webfinger?resource=acct%3Abob%40remote.example": []byte(`{"links":[{"rel":"self","type":"application/activity+json","href":"` + remoteBob + `"}]}`),
	}
	deps, st := newDeps(t)
	s := &followServer{stores: st, blocks: memory.NewBlockStore()}
	deps.Tombstones, deps.Blocks, deps.Fetcher = s.content, s.blocks, fetcher
	s.app = application.New(deps)
	if _, err := s.app.InstanceActor.Handle(ctx); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"alice", "mallory"} {
		sess, err := s.app.SignUp.Handle(ctx, application.SignUp{UserName: name, Password: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			s.token = sess.Token
		} else {
			s.other = sess.Token
		}
	}
	log := slog.New(slog.DiscardHandler)
	s.Server = httptest.NewServer(httpapi.New(s.app, ready{}, log, httpapi.NewFollowRoutes(s.app, log)))
	t.Cleanup(s.Close)
	return s
}

func (s *followServer) call(t *testing.T, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	if body == "" {
		return request(t, method, s.URL+path, token, "", nil)
	}
	return request(t, method, s.URL+path, token, "application/json", strings.NewReader(body))
}

func (s *followServer) jobCount(t *testing.T) int {
	t.Helper()
	js, err := s.jobs.List(context.Background(), ports.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(js)
}

// refusal is a POST the client API refuses with status.
type refusal struct {
	name, token, body string
	status            int
}

// refuses posts each refusal to path, one subtest each, and checks that
// none of them queued a job.
func (s *followServer) refuses(t *testing.T, path string, refusals []refusal) {
	t.Helper()
	queued := s.jobCount(t)
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			if status, body := s.call(t, http.MethodPost, path, tt.token, tt.body); status != tt.status {
				t.Fatalf("%d %v, want %d", status, body, tt.status)
			}
		})
	}
	if n := s.jobCount(t); n != queued {
		t.Fatalf("refused POSTs to %s queued jobs: %d, want %d", path, n, queued)
	}
}

func TestFollowEndpoint(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	status, body := s.call(t, http.MethodPost, "/api/v1/follows", s.token, `{"as":"alice","target":"bob@remote.example"}`)
	if status != 201 || body["state"] != "pending" || body["target"] != remoteBob || body["queued"] != 1.0 || body["created"] != true {
		t.Fatalf("%d %v", status, body)
	}
	status, body = s.call(t, http.MethodPost, "/api/v1/follows", s.token, `{"as":"alice","target":"`+remoteBob+`"}`)
	if status != 200 || body["state"] != "pending" || body["created"] != false {
		t.Fatalf("again: %d %v", status, body)
	}
	if n := s.jobCount(t); n != 1 {
		t.Fatalf("%d Follows queued, want 1", n)
	}
	s.refuses(t, "/api/v1/follows", []refusal{
		{"no token", "", `{"as":"alice","target":"bob@remote.example"}`, 401},
		{"someone else's persona", s.other, `{"as":"alice","target":"bob@remote.example"}`, 403},
		{"malformed JSON", s.token, `{"as":`, 400},
		{"not a target", s.token, `{"as":"alice","target":"bob"}`, 422},
		{"unknown remote account", s.token, `{"as":"alice","target":"nobody@remote.example"}`, 404},
		{"unknown local account", s.token, `{"as":"alice","target":"nobody@local.example"}`, 404},
	})
}

func TestListFollowersEndpoint(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	ctx := context.Background()
	for i := range 3 {
		f, _ := domain.NewFollower(fmt.Sprintf("https://r%d.example/u", i), "https://local.example/users/alice", "", domain.FollowAccepted, time.Now())
		_, _ = s.follows.Add(ctx, f)
	}
	var got []string
	path := "/api/v1/personas/alice/followers?limit=2"
	for pages := 0; path != ""; pages++ {
		status, body := s.call(t, http.MethodGet, path, s.token, "")
		if status != 200 || body["total"] != 3.0 || pages > 2 {
			t.Fatalf("%d %v", status, body)
		}
		for _, f := range body["followers"].([]any) {
			got = append(got, fmt.Sprint(f.(map[string]any)["uri"]))
		}
		path = ""
		if next, ok := body["next"].(string); ok {
			path = "/api/v1/personas/alice/followers?limit=2&after=" + url.QueryEscape(next)
		}
	}
	if strings.Join(got, " ") != "https://r0.example/u https://r1.example/u https://r2.example/u" {
		t.Fatalf("followers %v", got)
	}
	for path, want := range map[string]int{
		"/api/v1/personas/alice/followers?state=pending": 200,
		"/api/v1/personas/alice/followers?limit=x":       400,
		"/api/v1/personas/alice/followers?limit=1000":    422,
		"/api/v1/personas/nobody/followers":              404,
		"/api/v1/personas/mallory/followers":             403,
	} {
		if status, body := s.call(t, http.MethodGet, path, s.token, ""); status != want {
			t.Errorf("%s: %d %v, want %d", path, status, body, want)
		}
	}
	if status, _ := s.call(t, http.MethodGet, "/api/v1/personas/alice/followers", "", ""); status != 401 {
		t.Errorf("no token: %d", status)
	}
}

func TestListPostsEndpoint(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	for _, vis := range []string{"public", "followers"} {
		if status, body := s.call(t, http.MethodPost, "/api/v1/posts", s.token, `{"as":"alice","content":"<i>`+vis+`</i> post","visibility":"`+vis+`"}`); status != 201 {
			t.Fatalf("publish: %d %v", status, body)
		}
	}
	status, body := s.call(t, http.MethodGet, "/api/v1/posts?author="+url.QueryEscape("https://local.example/users/alice"), s.token, "")
	posts, _ := body["posts"].([]any)
	// content is plain text: the post is its HTML rendering, markup escaped.
	if status != 200 || len(posts) != 1 || posts[0].(map[string]any)["content"] != "<p>&lt;i&gt;public&lt;/i&gt; post</p>" {
		t.Fatalf("%d %v", status, body)
	}
	for path, want := range map[string]int{"/api/v1/posts": 400, "/api/v1/posts?author=x&before=now": 400, "/api/v1/posts?author=x&limit=0": 200} {
		if status, _ := s.call(t, http.MethodGet, path, s.token, ""); status != want {
			t.Errorf("%s: %d, want %d", path, status, want)
		}
	}
}

// A persona's direct thread through the client API: its own direct post
// listed, and the statuses of a refused read.
func TestDirectThreadEndpoint(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	if status, body := s.call(t, http.MethodPost, "/api/v1/posts", s.token, `{"as":"alice","content":"psst","visibility":"direct","to":["`+remoteBob+`"]}`); status != 201 {
		t.Fatalf("publish: %d %v", status, body)
	}
	with := "&with=" + url.QueryEscape(remoteBob)
	status, body := s.call(t, http.MethodGet, "/api/v1/direct?as=alice"+with, s.token, "")
	dms, _ := body["direct"].([]any)
	if status != 200 || len(dms) != 1 || dms[0].(map[string]any)["content"] != "<p>psst</p>" || len(dms[0].(map[string]any)["participants"].([]any)) != 2 {
		t.Fatalf("%d %v", status, body)
	}
	for path, want := range map[string]int{
		"/api/v1/direct?as=alice":                      400,
		"/api/v1/direct?with=x":                        400,
		"/api/v1/direct?as=alice&with=bob":             422,
		"/api/v1/direct?as=mallory" + with:             403,
		"/api/v1/direct?as=alice&before=now" + with:    400,
		"/api/v1/direct?as=alice&limit=1000000" + with: 422,
	} {
		if status, _ := s.call(t, http.MethodGet, path, s.token, ""); status != want {
			t.Errorf("%s: %d, want %d", path, status, want)
		}
	}
	if status, _ := s.call(t, http.MethodGet, "/api/v1/direct?as=alice"+with, "", ""); status != 401 {
		t.Errorf("no token: %d", status)
	}
}

// A persona's mentions through the client API: a post of alice's that
// addresses mallory is among mallory's mentions, for mallory's account
// only.
func TestMentionsEndpoint(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	mallory := "https://local.example/users/mallory"
	if status, body := s.call(t, http.MethodPost, "/api/v1/posts", s.token, `{"as":"alice","content":"hi @mallory","to":["`+mallory+`"]}`); status != 201 {
		t.Fatalf("publish: %d %v", status, body)
	}
	status, body := s.call(t, http.MethodGet, "/api/v1/mentions?as=mallory", s.other, "")
	posts, _ := body["posts"].([]any)
	linked := `<p>hi <span class="h-card"><a href="` + mallory + `" class="u-url mention" rel="nofollow noreferrer noopener" target="_blank">@<span>mallory</span></a></span></p>`
	if status != 200 || len(posts) != 1 || posts[0].(map[string]any)["content"] != linked || fmt.Sprint(posts[0].(map[string]any)["mentions"]) != "["+mallory+"]" {
		t.Fatalf("%d %v", status, body)
	}
	for path, want := range map[string]int{"/api/v1/mentions": 400, "/api/v1/mentions?as=mallory&before=now": 400, "/api/v1/mentions?as=nobody": 422} {
		if status, _ := s.call(t, http.MethodGet, path, s.other, ""); status != want {
			t.Errorf("%s: %d, want %d", path, status, want)
		}
	}
	if status, _ := s.call(t, http.MethodGet, "/api/v1/mentions?as=mallory", s.token, ""); status != 403 {
		t.Errorf("alice reads mallory's mentions: %d", status)
	}
}

// Edit, delete and boost through the client API: the statuses each
// refusal maps to, and a boost listed among the persona's posts.
func TestOwnPostAndBoostEndpoints(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	status, body := s.call(t, http.MethodPost, "/api/v1/posts", s.token, `{"as":"alice","content":"first"}`)
	id, _ := body["id"].(string)
	uri, _ := body["uri"].(string)
	if status != 201 || id == "" || !strings.HasSuffix(uri, "/"+id) {
		t.Fatalf("publish: %d %v", status, body)
	}
	long := strings.Repeat("é", domain.MaxPostLength/2+1)
	tests := []struct {
		name, method, path, token, body string
		status                          int
	}{
		{"edit without a token", http.MethodPatch, "/api/v1/posts/" + id, "", `{"content":"x"}`, 401},
		{"edit of another account's post", http.MethodPatch, "/api/v1/posts/" + id, s.other, `{"content":"x"}`, 404},
		{"edit of an unknown post", http.MethodPatch, "/api/v1/posts/nope", s.token, `{"content":"x"}`, 404},
		{"edit too long", http.MethodPatch, "/api/v1/posts/" + id, s.token, `{"content":"` + long + `"}`, 422},
		{"edit not JSON", http.MethodPatch, "/api/v1/posts/" + id, s.token, `{"content":`, 400},
		{"delete of another account's post", http.MethodDelete, "/api/v1/posts/" + id, s.other, "", 404},
		{"boost as another account's persona", http.MethodPost, "/api/v1/boosts", s.other, `{"as":"alice","object":"` + uri + `"}`, 403},
		{"boost of a non-URI", http.MethodPost, "/api/v1/boosts", s.token, `{"as":"alice","object":"x"}`, 422},
		{"boost of a note that cannot be fetched", http.MethodPost, "/api/v1/boosts", s.token, `{"as":"alice","object":"https://remote.example/n/404"}`, 422},
		{"reply to a non-URI", http.MethodPost, "/api/v1/posts", s.token, `{"as":"alice","content":"x","in_reply_to":"x"}`, 422},
	}
	for _, tt := range tests {
		if status, body := s.call(t, tt.method, tt.path, tt.token, tt.body); status != tt.status {
			t.Errorf("%s: %d %v, want %d", tt.name, status, body, tt.status)
		}
	}
	if status, body := s.call(t, http.MethodPatch, "/api/v1/posts/"+id, s.token, `{"content":"second"}`); status != 200 || body["content"] != "<p>second</p>" || body["updated"] == "" {
		t.Fatalf("edit: %d %v", status, body)
	}
	if status, body := s.call(t, http.MethodPost, "/api/v1/boosts", s.token, `{"as":"alice","object":"`+uri+`"}`); status != 201 || body["created"] != true {
		t.Fatalf("boost: %d %v", status, body)
	}
	if status, body := s.call(t, http.MethodPost, "/api/v1/boosts", s.token, `{"as":"alice","object":"`+uri+`"}`); status != 200 || body["created"] != false {
		t.Fatalf("boost again: %d %v", status, body)
	}
	_, body = s.call(t, http.MethodGet, "/api/v1/posts?author="+url.QueryEscape("https://local.example/users/alice"), s.token, "")
	posts, _ := body["posts"].([]any)
	var boosts int
	for _, p := range posts {
		if b, ok := p.(map[string]any)["boost"].(map[string]any); ok && b["by"] == "https://local.example/users/alice" {
			boosts++
		}
	}
	if len(posts) != 2 || boosts != 1 {
		t.Fatalf("alice's posts: the post and her boost of it, got %v", posts)
	}
	q := url.Values{"as": {"alice"}, "object": {uri}}
	if status, body := s.call(t, http.MethodDelete, "/api/v1/boosts?"+q.Encode(), s.token, ""); status != 200 || body["created"] != true {
		t.Fatalf("unboost: %d %v", status, body)
	}
	if status, body := s.call(t, http.MethodDelete, "/api/v1/posts/"+id, s.token, ""); status != 200 || body["uri"] != uri {
		t.Fatalf("delete: %d %v", status, body)
	}
	if status, _ := s.call(t, http.MethodDelete, "/api/v1/posts/"+id, s.token, ""); status != 404 {
		t.Fatalf("delete twice: %d", status)
	}
}

func TestReportEndpoint(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	status, body := s.call(t, http.MethodPost, "/api/v1/reports", s.token,
		`{"as":"alice","target":"bob@remote.example","comment":"spam","objects":["`+remoteBob+`/statuses/1"]}`)
	if status != 202 || body["target"] != remoteBob || body["inbox"] != remoteBob+"/inbox" || body["queued"] != 1.0 ||
		!strings.HasPrefix(body["activity"].(string), "https://local.example/actor/activities/") {
		t.Fatalf("%d %v", status, body)
	}
	js, err := s.jobs.List(context.Background(), ports.JobFilter{})
	if err != nil || len(js) != 1 {
		t.Fatal(js, err)
	}
	var flag map[string]any
	if err := json.Unmarshal(js[0].Payload, &flag); err != nil {
		t.Fatal(err)
	}
	if flag["type"] != "Flag" || flag["actor"] != "https://local.example/actor" || flag["content"] != "spam" ||
		fmt.Sprint(flag["object"]) != fmt.Sprint([]string{remoteBob, remoteBob + "/statuses/1"}) {
		t.Fatalf("flag %s", js[0].Payload)
	}
	s.refuses(t, "/api/v1/reports", []refusal{
		{"no token", "", `{"as":"alice","target":"bob@remote.example"}`, 401},
		{"someone else's persona", s.other, `{"as":"alice","target":"bob@remote.example"}`, 403},
		{"malformed JSON", s.token, `{"as":`, 400},
		{"objects not a list", s.token, `{"as":"alice","target":"bob@remote.example","objects":"x"}`, 400},
		{"a local actor", s.token, `{"as":"alice","target":"mallory@local.example"}`, 422},
		{"a post of another host", s.token, `{"as":"alice","target":"bob@remote.example","objects":["https://other.example/s/1"]}`, 422},
		{"unknown remote account", s.token, `{"as":"alice","target":"nobody@remote.example"}`, 404},
	})
}
