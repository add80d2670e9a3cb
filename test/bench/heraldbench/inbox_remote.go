package main

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
)

// The inbox scenario's Herald answers as inboxDomain whatever port it
// listens on, so that one set of signed requests (the host header is
// signed) serves every server of a round. A .localhost name keeps
// Herald's actor URIs http, as for a loopback address.
const (
	inboxDomain  = "herald.bench.localhost"
	inboxPersona = "bench"
	inboxActors  = 50
)

func inboxPersonaURI() string { return "http://" + inboxDomain + "/users/" + inboxPersona }

// remoteActors is the loopback "remote server" of the inbox scenario:
// inboxActors actors with RSA-2048 keys, whose documents Herald fetches to
// verify their signatures. It counts the fetches, to show they happen in
// the warm-up only.
type remoteActors struct {
	srv     *httptest.Server
	keys    []*rsa.PrivateKey
	docs    [][]byte
	fetches atomic.Int64
}

func newRemoteActors() (*remoteActors, error) {
	ra := &remoteActors{keys: make([]*rsa.PrivateKey, inboxActors), docs: make([][]byte, inboxActors)}
	ra.srv = httptest.NewServer(http.HandlerFunc(ra.serve))
	pems := make([]string, inboxActors)
	var firstErr error
	var once sync.Once
	parallel(inboxActors, func(i int) {
		kp, err := security.RSAKeys{}.GenerateKeyPair()
		if err == nil {
			ra.keys[i], err = domain.ParsePrivateKey(kp.PrivatePEM)
		}
		if err != nil {
			once.Do(func() { firstErr = err })
			return
		}
		pems[i] = kp.PublicPEM
	})
	if firstErr != nil {
		ra.srv.Close()
		return nil, firstErr
	}
	for i := range ra.docs {
		actor := ra.actor(i)
		doc, err := json.Marshal(map[string]any{
			"@context":          []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
			"id":                actor,
			"type":              "Person",
			"preferredUsername": fmt.Sprintf("r%d", i),
			"name":              fmt.Sprintf("Remote %d", i),
			"inbox":             actor + "/inbox",
			"outbox":            actor + "/outbox",
			"followers":         actor + "/followers",
			"following":         actor + "/following",
			"endpoints":         map[string]string{"sharedInbox": ra.srv.URL + "/inbox"},
			"publicKey":         map[string]string{"id": actor + "#main-key", "owner": actor, "publicKeyPem": pems[i]},
		})
		if err != nil {
			ra.srv.Close()
			return nil, err
		}
		ra.docs[i] = doc
	}
	return ra, nil
}

func (ra *remoteActors) Close() { ra.srv.Close() }

func (ra *remoteActors) actor(i int) string { return fmt.Sprintf("%s/users/r%d", ra.srv.URL, i) }

func (ra *remoteActors) serve(w http.ResponseWriter, r *http.Request) {
	var i int
	if _, err := fmt.Sscanf(r.URL.Path, "/users/r%d", &i); err != nil || i < 0 || i >= inboxActors || r.URL.Path != fmt.Sprintf("/users/r%d", i) {
		http.NotFound(w, r)
		return
	}
	ra.fetches.Add(1)
	w.Header().Set("Content-Type", "application/activity+json")
	_, _ = w.Write(ra.docs[i])
}

// signedPost is one inbox POST, signed ahead of the timed part.
type signedPost struct {
	body   []byte
	header http.Header
}

// sign builds and signs n distinct Create{Note} activities (createNote),
// request i from actor i mod inboxActors. tag keeps the object ids of
// different calls apart. Signing runs on every core; Dates are now.
func (ra *remoteActors) sign(tag string, n int) ([]signedPost, error) {
	posts := make([]signedPost, n)
	var firstErr error
	var once sync.Once
	parallel(n, func(i int) {
		a := i % inboxActors
		actor := ra.actor(a)
		now := time.Now().UTC()
		body, err := createNote(actor, fmt.Sprintf("%s/statuses/%s-%d", actor, tag, i), i, now)
		if err == nil {
			posts[i], err = signInboxPost(actor+"#main-key", ra.keys[a], body, now)
		}
		if err != nil {
			once.Do(func() { firstErr = err })
		}
	})
	return posts, firstErr
}

// createNote is the Create{Note} of note by actor that Mastodon would send
// to the shared inbox of a server whose persona it mentions: public, the
// persona in cc and in a Mention tag, a short HTML paragraph with a mention
// and a link (i numbers the meeting it speaks of).
func createNote(actor, note string, i int, now time.Time) ([]byte, error) {
	persona := inboxPersonaURI()
	content := fmt.Sprintf(`<p><span class="h-card" translate="no"><a href="%s" class="u-url mention">@<span>%s</span></a></span> `+
		`the notes from meeting %d are up: <a href="https://example.org/notes/%d" target="_blank" rel="nofollow noopener noreferrer">`+
		`<span class="invisible">https://</span><span class="">example.org/notes/%d</span></a> — comments welcome before Friday!</p>`,
		persona, inboxPersona, i, i, i)
	to, cc := []string{"https://www.w3.org/ns/activitystreams#Public"}, []string{actor + "/followers", persona}
	return json.Marshal(map[string]any{
		"@context":  "https://www.w3.org/ns/activitystreams",
		"id":        note + "/activity",
		"type":      "Create",
		"actor":     actor,
		"published": now.Format(time.RFC3339),
		"to":        to,
		"cc":        cc,
		"object": map[string]any{
			"id":           note,
			"type":         "Note",
			"attributedTo": actor,
			"content":      content,
			"published":    now.Format(time.RFC3339),
			"url":          note,
			"to":           to,
			"cc":           cc,
			"sensitive":    false,
			"tag":          []map[string]string{{"type": "Mention", "href": persona, "name": "@" + inboxPersona + "@" + inboxDomain}},
		},
	})
}

// signInboxPost signs body as a POST to Herald's shared inbox at
// inboxDomain, with keyID's key and a Date of now.
func signInboxPost(keyID string, key *rsa.PrivateKey, body []byte, now time.Time) (signedPost, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+inboxDomain+"/inbox", bytes.NewReader(body))
	if err != nil {
		return signedPost{}, err
	}
	req.Header.Set("Content-Type", "application/activity+json")
	req.Header.Set("Date", now.Format(http.TimeFormat))
	req.Header.Set("Host", inboxDomain) // what the signer reads; the transport sends req.Host
	if err := delivery.Sign(req, keyID, key, body); err != nil {
		return signedPost{}, err
	}
	return signedPost{body: body, header: req.Header}, nil
}

// parallel runs f(0..n-1) on every core.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// postAll sends posts to url with the given number of clients, each
// request as inboxDomain, and fails on the first answer that is not 202
// Accepted (Herald's answer to a verified activity), with its status and
// body.
func postAll(ctx context.Context, client *http.Client, url string, posts []signedPost, clients int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(posts) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := postOne(ctx, client, url, posts[i]); err != nil {
					cancel(fmt.Errorf("request %d: %w", i, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}

func postOne(ctx context.Context, client *http.Client, url string, p signedPost) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(p.body))
	if err != nil {
		return err
	}
	req.Header = p.header.Clone()
	req.Host = inboxDomain
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_, _ = io.Copy(io.Discard, resp.Body) // so the connection is kept
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("HTTP %d, not 202: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}
