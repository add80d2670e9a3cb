package clients_test

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
	"testing"
	"time"
)

// actorServer is one remote actor on loopback, as a fediverse server
// shows it: its document with its public key (which Herald fetches to
// verify its signature), and what it sends, signed as Mastodon signs
// (draft-cavage HTTP Signatures over a Digest of the body).
type actorServer struct {
	t   *testing.T
	uri string
	key *rsa.PrivateKey
}

func newActorServer(t *testing.T, name string) *actorServer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	a := &actorServer{t: t, key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/"+name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/activity+json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"@context": []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
			"id":       a.uri, "type": "Person", "preferredUsername": name, "inbox": a.uri + "/inbox", "outbox": a.uri + "/outbox",
			"followers": a.uri + "/followers",
			"publicKey": map[string]string{"id": a.uri + "#main-key", "owner": a.uri, "publicKeyPem": pub},
		})
	})
	mux.HandleFunc("POST /users/"+name+"/inbox", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a.uri = srv.URL + "/users/" + name
	return a
}

// send POSTs activity to inbox, signed with the actor's key; the status.
func (a *actorServer) send(inbox string, activity map[string]any) int {
	a.t.Helper()
	body, err := json.Marshal(activity)
	if err != nil {
		a.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, inbox, bytes.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("Content-Type", "application/activity+json")
	req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(sum[:]))
	signing := fmt.Sprintf("(request-target): post %s\nhost: %s\ndate: %s\ndigest: %s", req.URL.RequestURI(), req.URL.Host, req.Header.Get("Date"), req.Header.Get("Digest"))
	h := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.key, crypto.SHA256, h[:])
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Signature", fmt.Sprintf(`keyId="%s#main-key",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="%s"`,
		a.uri, base64.StdEncoding.EncodeToString(sig)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		a.t.Logf("%s answered %d: %s", inbox, resp.StatusCode, out)
	}
	return resp.StatusCode
}

// mention sends a public note of the actor mentioning persona (its URI
// and its acct), to persona's inbox; it returns the note's URI.
func (a *actorServer) mention(personaURI, acct, text string) string {
	a.t.Helper()
	const public = "https://www.w3.org/ns/activitystreams#Public"
	note := a.uri + "/statuses/1"
	status := a.send(personaURI+"/inbox", map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": note + "/activity", "type": "Create", "actor": a.uri,
		"to": []string{public}, "cc": []string{personaURI},
		"object": map[string]any{
			"id": note, "type": "Note", "attributedTo": a.uri, "to": []string{public}, "cc": []string{personaURI},
			"content":   `<p><span class="h-card"><a href="` + personaURI + `" class="u-url mention">@<span>` + acct + `</span></a></span> ` + text + `</p>`,
			"published": time.Now().UTC().Format(time.RFC3339),
			"tag":       []map[string]string{{"type": "Mention", "href": personaURI, "name": "@" + acct}},
		},
	})
	if status != http.StatusAccepted && status != http.StatusOK {
		a.t.Fatalf("the mention was refused: %d", status)
	}
	return note
}
