package hostile_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A peer is one fake server on a loopback port: one "host" for Herald,
// which compares host:port. It serves its actors' documents (with the key
// and the Content-Type each actor is given), notes, an open redirect
// (GET /redirect?to=URL, as a link shortener or a media proxy on a real
// server would), any document a test puts at a path, and records every GET
// it answers and every POST to it.
type peer struct {
	t    *testing.T
	srv  *httptest.Server
	base string // http://127.0.0.1:port
	keys *keyring

	mu     sync.Mutex
	actors map[string]*actor
	docs   map[string]served // by path and query
	gets   []string          // the request URIs of the GETs served
	posts  []inboxPost
}

// served is a document a test put at a path.
type served struct {
	status      int
	contentType string
	body        []byte
}

// inboxPost is one POST Herald made to the peer.
type inboxPost struct {
	path     string
	activity map[string]any
}

// actor is an account on a peer, with the key it signs with.
type actor struct {
	p           *peer
	name, uri   string
	keyID       string
	key         *rsa.PrivateKey
	pubPEM      string
	contentType string // of its actor document
}

func newPeer(t *testing.T, keys *keyring) *peer {
	t.Helper()
	p := &peer{t: t, keys: keys, actors: map[string]*actor{}, docs: map[string]served{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	p.base = p.srv.URL
	return p
}

// actor adds an account named name with a key of its own.
func (p *peer) actor(name string) *actor {
	k := p.keys.next()
	a := &actor{p: p, name: name, uri: p.base + "/users/" + name, key: k, pubPEM: publicPEM(k),
		contentType: "application/activity+json"}
	a.keyID = a.uri + "#main-key"
	p.mu.Lock()
	p.actors[name] = a
	p.mu.Unlock()
	return a
}

// put serves body at path (with its query, if any).
func (p *peer) put(path string, status int, contentType string, body any) {
	b, ok := body.([]byte)
	if !ok {
		b, _ = json.Marshal(body)
	}
	p.mu.Lock()
	p.docs[path] = served{status: status, contentType: contentType, body: b}
	p.mu.Unlock()
}

func (p *peer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var act map[string]any
		_ = json.Unmarshal(body, &act)
		p.mu.Lock()
		p.posts = append(p.posts, inboxPost{path: r.URL.Path, activity: act})
		p.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	p.mu.Lock()
	p.gets = append(p.gets, r.URL.RequestURI())
	doc, ok := p.docs[r.URL.RequestURI()]
	a := p.actors[strings.TrimPrefix(r.URL.Path, "/users/")]
	p.mu.Unlock()
	switch {
	case ok:
		if doc.contentType != "" {
			w.Header().Set("Content-Type", doc.contentType)
		}
		w.WriteHeader(doc.status)
		_, _ = w.Write(doc.body)
	case r.URL.Path == "/redirect":
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	case a != nil && r.URL.Path == "/users/"+a.name:
		p.mu.Lock()
		doc, ct := a.document(), a.contentType
		p.mu.Unlock()
		w.Header().Set("Content-Type", ct)
		_ = json.NewEncoder(w).Encode(doc)
	default:
		http.NotFound(w, r)
	}
}

// document is the actor's document as its server serves it. Call with
// p.mu held.
func (a *actor) document() map[string]any {
	return personDoc(a.uri, a.keyID, a.uri, a.pubPEM)
}

// personDoc is an actor document of id publishing one key.
func personDoc(id, keyID, owner, pubPEM string) map[string]any {
	return map[string]any{
		"@context": []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
		"id":       id, "type": "Person", "preferredUsername": id[strings.LastIndex(id, "/")+1:],
		"inbox": id + "/inbox", "outbox": id + "/outbox", "followers": id + "/followers",
		"publicKey": map[string]string{"id": keyID, "owner": owner, "publicKeyPem": pubPEM},
	}
}

// rotate gives the actor a new key under a new key id, served from now on.
func (a *actor) rotate(keyID string) {
	k := a.p.keys.next()
	a.p.mu.Lock()
	a.key, a.pubPEM, a.keyID = k, publicPEM(k), keyID
	a.p.mu.Unlock()
}

func (a *actor) setContentType(ct string) {
	a.p.mu.Lock()
	a.contentType = ct
	a.p.mu.Unlock()
}

// getsOf counts the GETs the peer answered for path (with its query).
func (p *peer) getsOf(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, g := range p.gets {
		if g == path {
			n++
		}
	}
	return n
}

func (p *peer) allGets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.gets)
}

// received lists the activities of a type POSTed to the peer.
func (p *peer) received(typ string) []inboxPost {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []inboxPost
	for _, g := range p.posts {
		if g.activity["type"] == typ {
			out = append(out, g)
		}
	}
	return out
}

// signedPost is one signed inbox POST, kept whole so that it can be sent
// again byte for byte (a replay).
type signedPost struct {
	url    string
	header http.Header
	body   []byte
}

// sign signs a POST of body to inbox with key under keyID, dated date, as
// Mastodon signs: rsa-sha256 over (request-target) host date digest
// content-type.
func sign(t *testing.T, key *rsa.PrivateKey, keyID, inbox string, body []byte, date time.Time) signedPost {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, inbox, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	h := http.Header{}
	h.Set("Content-Type", "application/activity+json")
	h.Set("Date", date.UTC().Format(http.TimeFormat))
	h.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(sum[:]))
	signing := "(request-target): post " + req.URL.RequestURI() + "\nhost: " + req.URL.Host + "\ndate: " + h.Get("Date") +
		"\ndigest: " + h.Get("Digest") + "\ncontent-type: application/activity+json"
	hs := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, hs[:])
	if err != nil {
		t.Fatal(err)
	}
	h.Set("Signature", fmt.Sprintf(`keyId="%s",algorithm="rsa-sha256",headers="(request-target) host date digest content-type",signature="%s"`,
		keyID, base64.StdEncoding.EncodeToString(sig)))
	return signedPost{url: inbox, header: h, body: body}
}

// answer is Herald's answer to one POST.
type answer struct {
	status     int
	retryAfter string
	body       string
}

func (a answer) String() string { return fmt.Sprintf("%d %s", a.status, strings.TrimSpace(a.body)) }

// post sends a signed POST (again, for a replay).
func post(t *testing.T, sp signedPost) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, sp.url, bytes.NewReader(sp.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = sp.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
}

// send POSTs an activity to inbox, signed by the actor with its own key.
func (a *actor) send(inbox string, activity map[string]any) answer {
	a.p.t.Helper()
	a.p.mu.Lock()
	key, keyID := a.key, a.keyID
	a.p.mu.Unlock()
	return sendWith(a.p.t, key, keyID, inbox, activity)
}

// sendWith POSTs an activity signed with any key under any key id: the
// forger's tool.
func sendWith(t *testing.T, key *rsa.PrivateKey, keyID, inbox string, activity map[string]any) answer {
	t.Helper()
	body, err := json.Marshal(activity)
	if err != nil {
		t.Fatal(err)
	}
	return post(t, sign(t, key, keyID, inbox, body, time.Now()))
}

// mustAccept fails unless Herald answered 202.
func mustAccept(t *testing.T, what string, a answer) {
	t.Helper()
	if a.status != http.StatusAccepted {
		t.Fatalf("%s: %s, want 202", what, a)
	}
}

// keyring hands out distinct RSA keys within a test, from a pool shared by
// every test (RSA-2048 generation is slow under -race; no two actors of one
// test ever share a key).
type keyring struct{ n atomic.Int64 }

var keyPool struct {
	mu   sync.Mutex
	keys []*rsa.PrivateKey
}

func (k *keyring) next() *rsa.PrivateKey {
	i := int(k.n.Add(1) - 1)
	keyPool.mu.Lock()
	defer keyPool.mu.Unlock()
	for len(keyPool.keys) <= i {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keyPool.keys = append(keyPool.keys, key)
	}
	return keyPool.keys[i]
}

// samePEM compares PEM texts as stores keep them (some trim the last
// newline).
func samePEM(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) }

func publicPEM(k *rsa.PrivateKey) string {
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// Activities, as Mastodon sends them.

const asPublic = "https://www.w3.org/ns/activitystreams#Public"

var noteSeq atomic.Int64

// noteURI is a fresh note id of the actor's.
func (a *actor) noteURI() string {
	return a.uri + "/statuses/" + strconv.FormatInt(noteSeq.Add(1), 10)
}

// noteObject is a Note by a, with id, content and addressing.
func noteObject(a *actor, id, content string, to []string, extra map[string]any) map[string]any {
	n := map[string]any{
		"id": id, "type": "Note", "attributedTo": a.uri, "content": content, "to": to,
		"cc": []string{a.uri + "/followers"}, "published": time.Now().UTC().Format(time.RFC3339),
	}
	for k, v := range extra {
		n[k] = v
	}
	return n
}

// create is a Create of a Note by a.
func create(a *actor, id, content string, to []string, extra map[string]any) map[string]any {
	n := noteObject(a, id, content, to, extra)
	return map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": id + "/activity", "type": "Create",
		"actor": a.uri, "to": n["to"], "cc": n["cc"], "object": n,
	}
}

// createFrom is a Create of a note claiming any actor (a forgery when the
// signer is someone else).
func createFrom(actorURI, id, content string, to []string) map[string]any {
	return map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": id + "/activity", "type": "Create",
		"actor": actorURI, "to": to,
		"object": map[string]any{"id": id, "type": "Note", "attributedTo": actorURI, "content": content, "to": to,
			"published": time.Now().UTC().Format(time.RFC3339)},
	}
}

func activity(typ string, a *actor, object any) map[string]any {
	return map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": a.uri + "/activities/" + strconv.FormatInt(noteSeq.Add(1), 10),
		"type": typ, "actor": a.uri, "object": object,
	}
}

// updatePerson is an Update of a's own actor document, as given.
func updatePerson(a *actor, doc map[string]any) map[string]any {
	u := activity("Update", a, doc)
	u["to"] = []string{asPublic}
	return u
}

// Follows.

// followLocal makes a follow the local actor (Herald accepts at once).
func followLocal(t *testing.T, a *actor, local string) {
	t.Helper()
	mustAccept(t, a.uri+" follows "+local, a.send(inboxOf(local), activity("Follow", a, local)))
}

// localFollows makes the local persona `as` follow a through the client
// API, and a accept the Follow Herald sends it.
func localFollows(t *testing.T, h *herald, token, as string, a *actor) {
	t.Helper()
	status, out := h.call(http.MethodPost, "/api/v1/follows", token, map[string]string{"as": as, "target": a.uri})
	if status != http.StatusCreated {
		t.Fatalf("%s follows %s: %d %v", as, a.uri, status, out)
	}
	local := h.persona(as)
	var follow map[string]any
	eventually(t, "the Follow of "+a.uri, func() bool {
		for _, g := range a.p.received("Follow") {
			if g.activity["object"] == a.uri && g.activity["actor"] == local {
				follow = g.activity
				return true
			}
		}
		return false
	})
	accept := activity("Accept", a, map[string]any{"id": follow["id"], "type": "Follow", "actor": local, "object": a.uri})
	mustAccept(t, a.uri+" accepts "+local, a.send(inboxOf(local), accept))
	if s := h.followState(local, a.uri); s != "accepted" {
		t.Fatalf("%s follows %s: %q, want accepted", local, a.uri, s)
	}
}
