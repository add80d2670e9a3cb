package mastodon_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/heraldfed/herald/domain"
)

// searchOf runs GET /api/v2/search and returns its three lists.
func (s *server) searchOf(t *testing.T, token string, q url.Values) (status int, accounts, statuses, hashtags []map[string]any) {
	t.Helper()
	r := s.do(t, http.MethodGet, "/api/v2/search?"+q.Encode(), token, nil)
	if r.status != http.StatusOK {
		return r.status, nil, nil, nil
	}
	var out struct {
		Accounts, Statuses, Hashtags []map[string]any
	}
	r.json(t, &out)
	if out.Accounts == nil || out.Statuses == nil || out.Hashtags == nil {
		t.Fatalf("search answered a null list: %s", r.body)
	}
	return r.status, out.Accounts, out.Statuses, out.Hashtags
}

// searchReachesNothing checks that a search of q with token finds no
// account, and that rm was sent no request for it.
func (s *server) searchReachesNothing(t *testing.T, rm *fakeRemote, token string, q url.Values) {
	t.Helper()
	before := rm.served()
	if status, accounts, _, _ := s.searchOf(t, token, q); status != 200 || len(accounts) != 0 {
		t.Fatalf("search %v: %d %v", q, status, accounts)
	}
	if n := rm.served() - before; n != 0 {
		t.Fatalf("search %v reached the remote %d times", q, n)
	}
}

// Search with resolve finds a remote account by WebFinger and a post by
// its URL, on a real server (httptest) through Herald's own fetcher;
// without resolve only what Herald holds.
func TestSearchResolvesRemoteAccountsAndPosts(t *testing.T) {
	t.Parallel()
	rm := newFakeRemote(t, "gus")
	s := setup(t, withFetcher(newHTTPFetcher(true)))
	tok := s.login(t, "alice", "alice", "read write follow")
	bob := s.login(t, "bob", "bob", "write")
	bobPost := s.postStatus(t, bob, url.Values{"status": {"hello #Herald"}})

	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	cases := []struct {
		name                        string
		token                       string
		query                       url.Values
		status                      int
		accounts, statuses, hashtag string // the acct, status uri, tag name expected; "" for none
	}{
		{"remote acct without resolve, not held", tok, q("q", "@"+rm.acct()), 200, "", "", ""},
		{"resolve without a user", "", q("q", rm.acct(), "resolve", "true"), 401, "", "", ""},
		{"remote acct with resolve", tok, q("q", "@"+rm.acct(), "resolve", "true"), 200, rm.acct(), "", ""},
		{"remote acct without resolve, now held", tok, q("q", rm.acct()), 200, rm.acct(), "", ""},
		{"its URL, held", "", q("q", rm.actorURI()), 200, rm.acct(), "", ""},
		{"type hashtags leaves accounts out", tok, q("q", rm.acct(), "type", "hashtags"), 200, "", "", ""},
		{"a remote post's URL, resolved", tok, q("q", rm.noteURI(), "resolve", "true"), 200, "", rm.noteURI(), ""},
		{"an unknown remote user", tok, q("q", "nobody@"+rm.host(), "resolve", "true"), 200, "", "", ""},
		{"a local persona by name", "", q("q", "bob"), 200, "bob", "", ""},
		{"a local persona by acct", "", q("q", "@bob@local.example"), 200, "bob", "", ""},
		{"a local persona by URL", "", q("q", "https://local.example/users/bob"), 200, "bob", "", ""},
		{"a local post by URL", "", q("q", bobPost["uri"].(string)), 200, "", bobPost["uri"].(string), ""},
		{"a hashtag", "", q("q", "#herald"), 200, "", "", "herald"},
		{"a hashtag no post carries", "", q("q", "#nothing"), 200, "", "", ""},
		{"a later offset", tok, q("q", "bob", "offset", "1"), 200, "", "", ""},
		{"no query", tok, q("q", ""), 400, "", "", ""},
		{"a bad type", tok, q("q", "bob", "type", "people"), 422, "", "", ""},
	}
	for _, c := range cases {
		status, accounts, statuses, hashtags := s.searchOf(t, c.token, c.query)
		if status != c.status {
			t.Errorf("%s: status %d, want %d", c.name, status, c.status)
			continue
		}
		if status != 200 {
			continue
		}
		check := func(what string, got []map[string]any, key, want string) {
			if want == "" && len(got) != 0 || want != "" && (len(got) != 1 || got[0][key] != want) {
				t.Errorf("%s: %s %v, want %s %q", c.name, what, got, key, want)
			}
		}
		check("accounts", accounts, "acct", c.accounts)
		check("statuses", statuses, "uri", c.statuses)
		check("hashtags", hashtags, "name", c.hashtag)
	}
	if p, err := s.content.PostByObjectURI(t.Context(), rm.noteURI()); err != nil || p.AuthorURI != rm.actorURI() {
		t.Fatalf("the resolved post was not stored: %v %v", p, err)
	}

	// The account search of v1 answers the same accounts, and needs a user.
	r := s.do(t, http.MethodGet, "/api/v1/accounts/search?"+q("q", rm.acct()).Encode(), tok, nil)
	if l := r.list(t); r.status != 200 || len(l) != 1 || l[0]["acct"] != rm.acct() {
		t.Fatalf("accounts search: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/accounts/search?q=bob", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("accounts search without a token: %d", r.status)
	}
}

// A search reaches no server the federation policy or the address guard
// refuses: it finds nothing, and the remote sees no request.
func TestSearchRespectsPolicyAndPrivateTargets(t *testing.T) {
	t.Parallel()
	rm := newFakeRemote(t, "gus")
	resolve := url.Values{"q": {rm.acct()}, "resolve": {"true"}}

	t.Run("private targets refused", func(t *testing.T) {
		s := setup(t, withFetcher(newHTTPFetcher(false)))
		tok := s.login(t, "alice", "alice", "read")
		s.searchReachesNothing(t, rm, tok, resolve)
		s.searchReachesNothing(t, rm, tok, url.Values{"q": {rm.actorURI()}, "resolve": {"true"}}) // by URL
	})

	t.Run("suspended domain", func(t *testing.T) {
		s := setup(t, withFetcher(newHTTPFetcher(true)))
		tok := s.login(t, "alice", "alice", "read")
		b, err := domain.NewDomainBlock("127.0.0.1", domain.SeveritySuspend, "", s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.moderation.Block(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		s.searchReachesNothing(t, rm, tok, resolve)
	})

	t.Run("allowlist", func(t *testing.T) {
		s := setup(t, withFetcher(newHTTPFetcher(true)), func(o *setupOptions) { o.mode = domain.FederationAllowlist })
		tok := s.login(t, "alice", "alice", "read")
		s.searchReachesNothing(t, rm, tok, resolve) // not allowed yet
		a, err := domain.NewDomainAllow("127.0.0.1", s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.moderation.Allow(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		if status, accounts, _, _ := s.searchOf(t, tok, resolve); status != 200 || len(accounts) != 1 {
			t.Fatalf("allowed: %d %v", status, accounts)
		}
	})

	t.Run("scope", func(t *testing.T) {
		s := setup(t)
		tok := s.login(t, "alice", "alice", "read:statuses")
		if status, _, _, _ := s.searchOf(t, tok, url.Values{"q": {"bob"}}); status != http.StatusForbidden {
			t.Fatalf("a token without read:search: %d", status)
		}
	})
}

// What a remote serves for a URL is judged before anything is kept: a
// search by URL stores only an actor or a public note of the server that
// answered, and answers the note (the rest: nothing).
func TestSearchByURLKeepsOnlyWhatItMay(t *testing.T) {
	t.Parallel()
	s := setup(t)
	tok := s.login(t, "alice", "alice", "read")
	const public = "https://www.w3.org/ns/activitystreams#Public"
	docs := map[string]string{
		"https://remote.example/collection":      `{"id":"https://remote.example/collection","type":"OrderedCollection","totalItems":3}`,
		"https://remote.example/notes/followers": `{"id":"https://remote.example/notes/followers","type":"Note","attributedTo":"https://remote.example/users/gus","content":"only for followers","to":["https://remote.example/users/gus/followers"]}`,
		"https://remote.example/notes/foreign":   `{"id":"https://remote.example/notes/foreign","type":"Note","attributedTo":"https://other.example/users/eve","content":"not theirs","to":["` + public + `"]}`,
		// Served by remote.example, claiming an id on another host: only
		// that host's own answer could speak for it, and it has none.
		"https://remote.example/users/mallory": `{"id":"https://victim.example/users/mallory","type":"Person","preferredUsername":"mallory","inbox":"https://victim.example/inbox"}`,
		"https://remote.example/notes/public":  `{"id":"https://remote.example/notes/public","type":"Note","attributedTo":"https://remote.example/users/gus","content":"for everyone","to":["` + public + `"]}`,
	}
	for u, d := range docs {
		s.fetcher[u] = []byte(d)
	}
	cases := []struct {
		url    string
		stored bool
	}{
		{"https://remote.example/collection", false},
		{"https://remote.example/notes/followers", false},
		{"https://remote.example/notes/foreign", false},
		{"https://remote.example/users/mallory", false},
		{"https://remote.example/notes/public", true},
		{"not a url://at all", false},
		{"ftp://remote.example/notes/public", false},
	}
	for _, c := range cases {
		status, accounts, statuses, _ := s.searchOf(t, tok, url.Values{"q": {c.url}, "resolve": {"true"}})
		if status != 200 || len(accounts) != 0 || c.stored != (len(statuses) == 1 && statuses[0]["uri"] == c.url) || len(statuses) > 1 {
			t.Errorf("%s: %d %v %v", c.url, status, accounts, statuses)
		}
		_, err := s.content.PostByObjectURI(t.Context(), c.url)
		if stored := err == nil; stored != c.stored {
			t.Errorf("%s: stored %v, want %v (%v)", c.url, stored, c.stored, err)
		}
	}
	for _, actor := range []string{"https://victim.example/users/mallory", "https://remote.example/users/mallory"} {
		if _, err := s.content.ByActorURI(t.Context(), actor); err == nil {
			t.Errorf("%s was cached", actor)
		}
	}
}
