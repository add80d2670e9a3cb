package mastodon_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/application"
)

// fakeRemote is another fediverse server on loopback (an httptest
// server): WebFinger, one actor, one public note, and an inbox that
// records what it is sent. It counts every request, so a test can tell
// that Herald sent none.
type fakeRemote struct {
	srv    *httptest.Server
	user   string
	pubPEM string

	mu       sync.Mutex
	requests int
	inbox    []map[string]any
}

func newFakeRemote(t *testing.T, user string) *fakeRemote {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	rm := &fakeRemote{user: user, pubPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/webfinger", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("resource") != "acct:"+user+"@"+rm.host() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/jrd+json")
		fmt.Fprintf(w, `{"subject":"acct:%s@%s","links":[{"rel":"self","type":"application/activity+json","href":%q}]}`, user, rm.host(), rm.actorURI())
	})
	mux.HandleFunc("GET /users/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != user {
			http.NotFound(w, r)
			return
		}
		rm.write(w, rm.actorDoc())
	})
	mux.HandleFunc("GET /notes/1", func(w http.ResponseWriter, r *http.Request) { rm.write(w, rm.noteDoc()) })
	mux.HandleFunc("POST /users/{name}/inbox", func(w http.ResponseWriter, r *http.Request) {
		var act map[string]any
		_ = json.NewDecoder(r.Body).Decode(&act)
		rm.mu.Lock()
		rm.inbox = append(rm.inbox, act)
		rm.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	rm.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rm.mu.Lock()
		rm.requests++
		rm.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(rm.srv.Close)
	return rm
}

func (rm *fakeRemote) host() string     { return strings.TrimPrefix(rm.srv.URL, "http://") }
func (rm *fakeRemote) acct() string     { return rm.user + "@" + rm.host() }
func (rm *fakeRemote) actorURI() string { return rm.srv.URL + "/users/" + rm.user }
func (rm *fakeRemote) noteURI() string  { return rm.srv.URL + "/notes/1" }

func (rm *fakeRemote) actorDoc() map[string]any {
	return map[string]any{
		"@context": []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
		"id":       rm.actorURI(), "type": "Person", "preferredUsername": rm.user, "inbox": rm.actorURI() + "/inbox",
		"publicKey": map[string]string{"id": rm.actorURI() + "#main-key", "owner": rm.actorURI(), "publicKeyPem": rm.pubPEM},
	}
}

func (rm *fakeRemote) noteDoc() map[string]any {
	return map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": rm.noteURI(), "type": "Note", "attributedTo": rm.actorURI(),
		"content": "<p>hello from afar</p>", "published": "2025-12-31T10:00:00Z", "to": []string{"https://www.w3.org/ns/activitystreams#Public"},
	}
}

func (rm *fakeRemote) write(w http.ResponseWriter, doc map[string]any) {
	w.Header().Set("Content-Type", "application/activity+json")
	_ = json.NewEncoder(w).Encode(doc)
}

func (rm *fakeRemote) served() int {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.requests
}

// httpFetcher is Herald's own fetcher (adapters/delivery: the address
// guard, redirects through CheckHost, size limits), with fetches unsigned:
// the test's instance actor has a placeholder key, and the fake remote
// does not check signatures.
type httpFetcher struct{ c *delivery.Client }

func newHTTPFetcher(allowPrivate bool) httpFetcher {
	return httpFetcher{delivery.New(delivery.Config{AllowPrivate: allowPrivate, Timeout: 5 * time.Second})}
}

func (f httpFetcher) Fetch(ctx context.Context, r application.FetchRequest) (application.Fetched, error) {
	r.KeyID, r.PrivateKeyPEM = "", ""
	return f.c.Fetch(ctx, r)
}

// withFetcher serves setup's federation from f.
func withFetcher(f application.Fetcher) func(*setupOptions) {
	return func(o *setupOptions) { o.fetcher = f }
}

// linkOf returns the path and query of the Link header's rel, "" when
// there is none.
func linkOf(t *testing.T, r response, rel string) string {
	t.Helper()
	for _, part := range strings.Split(r.header.Get("Link"), ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.Contains(params, `rel="`+rel+`"`) {
			continue
		}
		u, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
		if err != nil {
			t.Fatalf("Link %q: %v", r.header.Get("Link"), err)
		}
		return u.RequestURI()
	}
	return ""
}
