package clients_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/test/heraldtest"
)

// TestMegalodon registers an app with megalodon, signs in through the
// authorization page as a browser would (choosing the persona alice_work
// of the account alice), opens the user stream (WebSocket) and sees its
// own post arrive on it, and posts (with a content warning and a poll),
// reads the home timeline and its next page, favourites and reblogs and
// takes both back, looks up, deletes and revokes with the library's own
// calls; it finds a remote account by search (resolve: WebFinger on a fake
// server this test runs), follows it, reads the relationship, and the
// Follow reaches the remote's inbox. Before it runs, another remote actor
// (a fake server on loopback, its activity signed) mentions alice_work:
// the harness reads that notification, by list and by id, and dismisses it.
func TestMegalodon(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("UNVERIFIED: node is not installed, so no client library drives the Mastodon API here (install Node 20 and npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("UNVERIFIED: npm is not installed, so megalodon cannot be installed (install Node 20 and npm)")
	}
	dir, err := filepath.Abs("harness")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "megalodon")); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}

	remote := newRemote(t, "gus")
	// The remote actors are on loopback: Herald may reach them only with
	// private targets allowed.
	h := heraldtest.Start(t, "herald", map[string]string{"HERALD_STORE": "memory", "HERALD_ALLOW_PRIVATE_TARGETS": "true"})
	signUp := func(body, path string, token string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, h.Base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, m)
		}
		tok, _ := m["token"].(string)
		return tok
	}
	session := signUp(`{"username":"alice","password":"correct horse battery"}`, "/api/v1/accounts", "")
	signUp(`{"name":"alice_work"}`, "/api/v1/personas", session)
	bob := newActorServer(t, "bob")
	const mentionText = "hello from the fediverse"
	bob.mention(h.Base+"/users/alice_work", "alice_work@"+h.Addr, mentionText)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "harness.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HERALD_URL="+h.Base, "HERALD_USER=alice", "HERALD_PASSWORD=correct horse battery", "HERALD_PERSONA=alice_work",
		"HERALD_REMOTE_ACCT="+remote.acct(), "HERALD_REMOTE_URI="+remote.actorURI(),
		"HERALD_MENTIONED_BY="+bob.uri, "HERALD_MENTION_TEXT="+mentionText)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("megalodon saw: %s", strings.TrimSpace(stdout.String()))
	if err != nil {
		t.Fatalf("the megalodon harness failed: %v\n%s", err, stderr.String())
	}
	var seen map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &seen); err != nil || seen["ok"] != true {
		t.Fatalf("the harness did not finish: %s %v", stdout.String(), err)
	}
	// The follow megalodon asked for is delivered by Herald's engine.
	deadline := time.Now().Add(30 * time.Second)
	for !remote.got("Follow", h.Base+"/users/alice_work") {
		if time.Now().After(deadline) {
			t.Fatal("the Follow of gus by alice_work did not reach gus's inbox in 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// remote is a fediverse server on loopback, as small as a search and a
// follow need: WebFinger, one actor (with a real public key), and an
// inbox that keeps what it is sent.
type remote struct {
	srv    *httptest.Server
	user   string
	pubPEM string

	mu    sync.Mutex
	inbox []map[string]any
}

func newRemote(t *testing.T, user string) *remote {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	rm := &remote{user: user, pubPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/webfinger", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("resource") != "acct:"+rm.acct() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/jrd+json")
		fmt.Fprintf(w, `{"subject":"acct:%s","links":[{"rel":"self","type":"application/activity+json","href":%q}]}`, rm.acct(), rm.actorURI())
	})
	mux.HandleFunc("GET /users/"+user, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/activity+json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"@context": []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
			"id":       rm.actorURI(), "type": "Person", "preferredUsername": user, "inbox": rm.actorURI() + "/inbox",
			"publicKey": map[string]string{"id": rm.actorURI() + "#main-key", "owner": rm.actorURI(), "publicKeyPem": rm.pubPEM},
		})
	})
	mux.HandleFunc("POST /users/"+user+"/inbox", func(w http.ResponseWriter, r *http.Request) {
		var act map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&act)
		rm.mu.Lock()
		rm.inbox = append(rm.inbox, act)
		rm.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	rm.srv = httptest.NewServer(mux)
	t.Cleanup(rm.srv.Close)
	return rm
}

func (rm *remote) acct() string     { return rm.user + "@" + strings.TrimPrefix(rm.srv.URL, "http://") }
func (rm *remote) actorURI() string { return rm.srv.URL + "/users/" + rm.user }

// got reports whether the inbox received an activity of that type by actor.
func (rm *remote) got(typ, actor string) bool {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for _, a := range rm.inbox {
		if a["type"] == typ && a["actor"] == actor {
			return true
		}
	}
	return false
}
