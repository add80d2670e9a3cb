package e2e_test

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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// A remote is one fake fediverse server on loopback: it serves its actors'
// documents and WebFinger, and records every POST to its inboxes after
// verifying the signature with verifyPost (its own implementation, not
// Herald's library), then answers as its behaviour says.
type remote struct {
	t      *testing.T
	srv    *httptest.Server
	base   string // http://127.0.0.1:port
	shared bool   // whether its actors advertise the shared inbox /inbox
	now    func() time.Time
	client *http.Client // what it sends and fetches Herald's keys with

	mu       sync.Mutex
	actors   map[string]*remoteActor
	got      []received
	gets     []error // verification results of the signed GETs it served
	behave   behavior
	heraldPK map[string]*rsa.PublicKey // Herald's keys, by keyId
}

type remoteActor struct {
	name, uri string
	key       *rsa.PrivateKey
	pubPEM    string
}

// received is one POST to an inbox of the remote.
type received struct {
	path        string
	body        []byte
	activity    map[string]any
	keyID       string
	verifyErr   error
	contentType string
	userAgent   string
}

// behavior answers an inbox POST after it was recorded.
type behavior func(w http.ResponseWriter, r *http.Request)

func answer(status int, headers ...string) behavior {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
	}
}

var accepted = answer(http.StatusAccepted)

// slow answers after the client gave up (or after 10 s).
func slow(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
	w.WriteHeader(http.StatusAccepted)
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter, r *http.Request) {
	if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
		_ = c.Close()
	}
}

func newRemote(t *testing.T, shared bool, now func() time.Time, names ...string) *remote {
	t.Helper()
	rm := &remote{t: t, shared: shared, now: now, client: http.DefaultClient, actors: map[string]*remoteActor{}, behave: accepted, heraldPK: map[string]*rsa.PublicKey{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{name}", rm.actorDoc)
	mux.HandleFunc("GET /.well-known/webfinger", rm.webfinger)
	mux.HandleFunc("POST /users/{name}/inbox", rm.inbox)
	mux.HandleFunc("POST /inbox", rm.inbox)
	rm.srv = httptest.NewServer(mux)
	t.Cleanup(rm.srv.Close)
	rm.base = rm.srv.URL
	for _, n := range names {
		rm.addActor(n)
	}
	return rm
}

func (rm *remote) addActor(name string) *remoteActor {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		rm.t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	a := &remoteActor{name: name, uri: rm.base + "/users/" + name, key: key,
		pubPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
	rm.mu.Lock()
	rm.actors[name] = a
	rm.mu.Unlock()
	return a
}

func (rm *remote) actor(name string) *remoteActor {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.actors[name]
}

func (rm *remote) host() string { return strings.TrimPrefix(rm.base, "http://") }

func (rm *remote) setBehavior(b behavior) {
	rm.mu.Lock()
	rm.behave = b
	rm.mu.Unlock()
}

func (rm *remote) actorDoc(w http.ResponseWriter, r *http.Request) {
	a := rm.actor(r.PathValue("name"))
	if a == nil {
		http.NotFound(w, r)
		return
	}
	// Herald fetches actors with a GET signed as its instance actor.
	err := rm.verifyGet(r)
	rm.mu.Lock()
	rm.gets = append(rm.gets, err)
	rm.mu.Unlock()
	doc := map[string]any{
		"@context": []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
		"id":       a.uri, "type": "Person", "preferredUsername": a.name, "inbox": a.uri + "/inbox",
		"outbox": a.uri + "/outbox", "followers": a.uri + "/followers",
		"publicKey": map[string]string{"id": a.uri + "#main-key", "owner": a.uri, "publicKeyPem": a.pubPEM},
	}
	if rm.shared {
		doc["endpoints"] = map[string]string{"sharedInbox": rm.base + "/inbox"}
	}
	w.Header().Set("Content-Type", "application/activity+json")
	_ = json.NewEncoder(w).Encode(doc)
}

func (rm *remote) webfinger(w http.ResponseWriter, r *http.Request) {
	user, host, _ := strings.Cut(strings.TrimPrefix(r.URL.Query().Get("resource"), "acct:"), "@")
	a := rm.actor(user)
	if a == nil || host != rm.host() {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/jrd+json")
	fmt.Fprintf(w, `{"subject":"acct:%s@%s","links":[{"rel":"self","type":"application/activity+json","href":%q}]}`, user, host, a.uri)
}

func (rm *remote) inbox(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rec := received{path: r.URL.Path, body: body, contentType: r.Header.Get("Content-Type"), userAgent: r.Header.Get("User-Agent")}
	rec.keyID, rec.verifyErr = rm.verifyPost(r, body)
	_ = json.Unmarshal(body, &rec.activity)
	rm.mu.Lock()
	rm.got = append(rm.got, rec)
	b := rm.behave
	rm.mu.Unlock()
	b(w, r)
}

// received returns what arrived so far, optionally only of one type.
func (rm *remote) received(typ string) []received {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	var out []received
	for _, g := range rm.got {
		if typ == "" || g.activity["type"] == typ {
			out = append(out, g)
		}
	}
	return out
}

func (rm *remote) signedGets() []error {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return append([]error(nil), rm.gets...)
}

var sigParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

func signatureParams(h string) map[string]string {
	params := map[string]string{}
	for _, m := range sigParam.FindAllStringSubmatch(h, -1) {
		params[m[1]] = m[2]
	}
	return params
}

// verifyPost checks an inbox POST the way a strict remote does, from
// scratch: rsa-sha256 over "(request-target) host date digest", the
// Digest of the body, and the signer's key fetched from its actor
// document on Herald.
func (rm *remote) verifyPost(r *http.Request, body []byte) (string, error) {
	p := signatureParams(r.Header.Get("Signature"))
	if p["algorithm"] != "rsa-sha256" || p["headers"] != "(request-target) host date digest" {
		return p["keyId"], fmt.Errorf("signature parameters %v", p)
	}
	sum := sha256.Sum256(body)
	if want := "SHA-256=" + base64.StdEncoding.EncodeToString(sum[:]); r.Header.Get("Digest") != want {
		return p["keyId"], fmt.Errorf("digest %q, want %q", r.Header.Get("Digest"), want)
	}
	if _, err := http.ParseTime(r.Header.Get("Date")); err != nil {
		return p["keyId"], fmt.Errorf("date %q", r.Header.Get("Date"))
	}
	signing := "(request-target): post " + r.URL.RequestURI() + "\nhost: " + r.Host + "\ndate: " + r.Header.Get("Date") + "\ndigest: " + r.Header.Get("Digest")
	return p["keyId"], rm.checkRSA(p, signing)
}

// verifyGet checks a signed GET: "(request-target) host date".
func (rm *remote) verifyGet(r *http.Request) error {
	p := signatureParams(r.Header.Get("Signature"))
	if p["algorithm"] != "rsa-sha256" || p["headers"] != "(request-target) host date" {
		return fmt.Errorf("GET signature parameters %v", p)
	}
	signing := "(request-target): get " + r.URL.RequestURI() + "\nhost: " + r.Host + "\ndate: " + r.Header.Get("Date")
	return rm.checkRSA(p, signing)
}

func (rm *remote) checkRSA(p map[string]string, signing string) error {
	pub, err := rm.heraldKey(p["keyId"])
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(p["signature"])
	if err != nil {
		return err
	}
	h := sha256.Sum256([]byte(signing))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig)
}

// heraldKey fetches the public key of a keyId from the actor document it
// names (as any server does), once.
func (rm *remote) heraldKey(keyID string) (*rsa.PublicKey, error) {
	rm.mu.Lock()
	pub, ok := rm.heraldPK[keyID]
	rm.mu.Unlock()
	if ok {
		return pub, nil
	}
	doc, _, _ := strings.Cut(keyID, "#")
	req, _ := http.NewRequest(http.MethodGet, doc, nil)
	req.Header.Set("Accept", "application/activity+json")
	resp, err := rm.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var actor struct {
		ID        string `json:"id"`
		PublicKey struct {
			ID, Owner, PublicKeyPem string
		} `json:"publicKey"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&actor); err != nil {
		return nil, err
	}
	if actor.PublicKey.ID != keyID || actor.PublicKey.Owner != actor.ID {
		return nil, fmt.Errorf("actor %s publishes key %q owned by %q, not %s", actor.ID, actor.PublicKey.ID, actor.PublicKey.Owner, keyID)
	}
	block, _ := pem.Decode([]byte(actor.PublicKey.PublicKeyPem))
	if block == nil {
		return nil, errors.New("public key is not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok = k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("not an RSA key")
	}
	rm.mu.Lock()
	rm.heraldPK[keyID] = pub
	rm.mu.Unlock()
	return pub, nil
}

// send POSTs an activity of one of the remote's actors to a Herald inbox,
// signed as Mastodon signs (its own signer, not Herald's).
func (rm *remote) send(a *remoteActor, inbox string, activity map[string]any) (int, string) {
	rm.t.Helper()
	body, _ := json.Marshal(activity)
	return rm.do(rm.signed(a, inbox, body))
}

// signed is the signed POST of body to inbox by a.
func (rm *remote) signed(a *remoteActor, inbox string, body []byte) *http.Request {
	rm.t.Helper()
	req, err := http.NewRequest(http.MethodPost, inbox, bytes.NewReader(body))
	if err != nil {
		rm.t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("Content-Type", "application/activity+json")
	req.Header.Set("Date", rm.now().UTC().Format(http.TimeFormat))
	req.Header.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(sum[:]))
	signing := "(request-target): post " + req.URL.RequestURI() + "\nhost: " + req.URL.Host + "\ndate: " + req.Header.Get("Date") +
		"\ndigest: " + req.Header.Get("Digest") + "\ncontent-type: application/activity+json"
	h := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.key, crypto.SHA256, h[:])
	if err != nil {
		rm.t.Fatal(err)
	}
	req.Header.Set("Signature", fmt.Sprintf(`keyId="%s#main-key",algorithm="rsa-sha256",headers="(request-target) host date digest content-type",signature="%s"`,
		a.uri, base64.StdEncoding.EncodeToString(sig)))
	return req
}

// do sends req with the remote's client: the status and body.
func (rm *remote) do(req *http.Request) (int, string) {
	rm.t.Helper()
	resp, err := rm.client.Do(req)
	if err != nil {
		rm.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// follow sends a Follow of target by the remote actor to inbox.
func (rm *remote) follow(a *remoteActor, target, inbox string) {
	rm.t.Helper()
	status, body := rm.send(a, inbox, map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": a.uri + "/follows/" + strings.ReplaceAll(target, "/", "_"),
		"type": "Follow", "actor": a.uri, "object": target,
	})
	if status != http.StatusAccepted {
		rm.t.Fatalf("%s following %s: %d %s", a.uri, target, status, body)
	}
}

// eventually waits (boundedly) until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
