package delivery_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// verifyGet checks a signed GET from scratch: "(request-target) host date",
// rsa-sha256, with the public key.
func verifyGet(r *http.Request, pub *rsa.PublicKey) error {
	params := map[string]string{}
	for _, m := range sigParam.FindAllStringSubmatch(r.Header.Get("Signature"), -1) {
		params[m[1]] = m[2]
	}
	if params["algorithm"] != "rsa-sha256" || params["headers"] != "(request-target) host date" || params["keyId"] == "" {
		return fmt.Errorf("signature params %v", params)
	}
	signing := "(request-target): get " + r.URL.RequestURI() + "\nhost: " + r.Host + "\ndate: " + r.Header.Get("Date")
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil {
		return err
	}
	h := sha256.Sum256([]byte(signing))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig)
}

func TestFetchSignsAndReads(t *testing.T) {
	t.Parallel()
	kp := key(t)
	pub, _ := domain.ParsePublicKey(kp.PublicPEM)
	var mu sync.Mutex
	var verr []error
	var accept, ua []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		verr = append(verr, verifyGet(r, pub))
		accept, ua = append(accept, r.Header.Get("Accept")), append(ua, r.Header.Get("User-Agent"))
		mu.Unlock()
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/users/bob?x=1", http.StatusMovedPermanently)
			return
		}
		if r.URL.RequestURI() != "/users/bob?x=1" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/activity+json")
		fmt.Fprint(w, `{"id":"bob"}`)
	}))
	defer srv.Close()
	f, err := client(true, 5*time.Second).Fetch(context.Background(), application.FetchRequest{
		URL: srv.URL + "/old", Accept: "application/activity+json", KeyID: "https://local.example/actor#main-key", PrivateKeyPEM: kp.PrivatePEM,
	})
	if err != nil || string(f.Body) != `{"id":"bob"}` {
		t.Fatalf("body %q err %v", f.Body, err)
	}
	// The document is reported with the URL that finally answered (its
	// origin) and its media type, for the dereferencer to judge.
	if f.URL != srv.URL+"/users/bob?x=1" || f.ContentType != "application/activity+json" {
		t.Fatalf("answered by %q as %q", f.URL, f.ContentType)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(verr) != 2 {
		t.Fatalf("%d requests, want the redirect and its target", len(verr))
	}
	for i, e := range verr {
		if e != nil {
			t.Errorf("request %d: signature does not verify: %v", i, e)
		}
		if accept[i] != "application/activity+json" || !strings.HasPrefix(ua[i], "Herald/") {
			t.Errorf("request %d: accept %q user agent %q", i, accept[i], ua[i])
		}
	}
}

func TestFetchUnsignedWithoutKey(t *testing.T) {
	t.Parallel()
	var sig string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sig = r.Header.Get("Signature")
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	if _, err := client(true, 5*time.Second).Fetch(context.Background(), application.FetchRequest{URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	if sig != "" {
		t.Fatalf("signed without a key: %q", sig)
	}
}

func TestFetchErrors(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", delivery.MaxDocumentBytes+1)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    error
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }, domain.ErrNotFound},
		{"410", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(410) }, domain.ErrNotFound},
		{"401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }, domain.ErrForbidden},
		{"403", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }, domain.ErrForbidden},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, domain.ErrUnavailable},
		{"429", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) }, domain.ErrUnavailable},
		{"over 1 MiB with a length", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, big) }, domain.ErrInvalidInput},
		{"over 1 MiB chunked", func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < len(big); i += 64 << 10 {
				fmt.Fprint(w, big[i:min(i+64<<10, len(big))])
				w.(http.Flusher).Flush()
			}
		}, domain.ErrInvalidInput},
		{"endless redirects", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/again", http.StatusFound) }, domain.ErrForbidden},
		{"closed connection", func(w http.ResponseWriter, r *http.Request) {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		}, domain.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			_, err := client(true, 5*time.Second).Fetch(context.Background(), application.FetchRequest{URL: srv.URL + "/doc"})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("not an http URL", func(t *testing.T) {
		_, err := client(true, time.Second).Fetch(context.Background(), application.FetchRequest{URL: "file:///etc/passwd"})
		if !errors.Is(err, domain.ErrInvalidInput) {
			t.Fatalf("err %v", err)
		}
	})
}

// The SSRF guard of deliveries holds for fetches too: loopback is refused
// unless allowed, and so is a redirect from an allowed host to it (the
// guard is at dial time, on every hop).
func TestFetchRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var hit bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer srv.Close()
	_, err := client(false, 5*time.Second).Fetch(context.Background(), application.FetchRequest{URL: srv.URL + "/users/x"})
	if !errors.Is(err, domain.ErrForbidden) || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("err %v, want a refusal", err)
	}
	if hit {
		t.Fatal("the loopback server was reached")
	}
}

func TestFetchTimesOut(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	_, err := client(true, 200*time.Millisecond).Fetch(context.Background(), application.FetchRequest{URL: srv.URL})
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("err %v", err)
	}
}
