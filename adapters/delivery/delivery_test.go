package delivery_test

import (
	"bufio"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	keyOnce sync.Once
	testKey domain.KeyPair
)

func key(t *testing.T) domain.KeyPair {
	t.Helper()
	keyOnce.Do(func() {
		kp, err := security.RSAKeys{}.GenerateKeyPair()
		if err != nil {
			panic(err)
		}
		testKey = kp
	})
	return testKey
}

var sigParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

// verify checks a request's signature from scratch, without go-fed, so the
// test does not trust the library that made the signature.
func verify(r *http.Request, body []byte, pub *rsa.PublicKey) error {
	params := map[string]string{}
	for _, m := range sigParam.FindAllStringSubmatch(r.Header.Get("Signature"), -1) {
		params[m[1]] = m[2]
	}
	if params["algorithm"] != "rsa-sha256" || params["headers"] != "(request-target) host date digest" {
		return fmt.Errorf("signature params %v", params)
	}
	sum := sha256.Sum256(body)
	if want := "SHA-256=" + base64.StdEncoding.EncodeToString(sum[:]); r.Header.Get("Digest") != want {
		return fmt.Errorf("digest %q, want %q", r.Header.Get("Digest"), want)
	}
	signing := strings.Join([]string{
		"(request-target): post " + r.URL.RequestURI(),
		"host: " + r.Host,
		"date: " + r.Header.Get("Date"),
		"digest: " + r.Header.Get("Digest"),
	}, "\n")
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil {
		return err
	}
	h := sha256.Sum256([]byte(signing))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig)
}

func client(allowPrivate bool, timeout time.Duration) *delivery.Client {
	return delivery.New(delivery.Config{Timeout: timeout, AllowPrivate: allowPrivate, UserAgent: "Herald/test (+http://local.example)"})
}

func TestDeliverSignsTheRequest(t *testing.T) {
	t.Parallel()
	kp := key(t)
	pub, _ := domain.ParsePublicKey(kp.PublicPEM)
	payload := []byte(`{"id":"https://local.example/a/1","type":"Create"}`)
	var got error
	var gotCT, gotUA string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = verify(r, body, pub)
		gotCT, gotUA = r.Header.Get("Content-Type"), r.Header.Get("User-Agent")
		if string(body) != string(payload) {
			got = fmt.Errorf("body %q", body)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	o := client(true, 5*time.Second).Deliver(context.Background(), ports.Delivery{
		Inbox: srv.URL + "/users/bob/inbox?x=1", Payload: payload, KeyID: "https://local.example/users/alice#main-key", PrivateKeyPEM: kp.PrivatePEM,
	})
	if o.Kind != domain.OutcomeDelivered || o.Status != 202 {
		t.Fatalf("outcome %+v", o)
	}
	if got != nil {
		t.Fatalf("signature does not verify: %v", got)
	}
	if gotCT != "application/activity+json" || !strings.HasPrefix(gotUA, "Herald/") {
		t.Fatalf("content type %q, user agent %q", gotCT, gotUA)
	}
}

func TestDeliverClassifiesResponses(t *testing.T) {
	t.Parallel()
	kp := key(t)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		kind    domain.OutcomeKind
		status  int
		after   time.Duration
	}{
		{"410 is final", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(410) }, domain.OutcomeFinal, 410, 0},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(429)
		}, domain.OutcomeRetryable, 429, 120 * time.Second},
		{"503 retries", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, domain.OutcomeRetryable, 503, 0},
		{"redirect is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusTemporaryRedirect)
		}, domain.OutcomeRetryable, 307, 0},
		{"huge body is cut off", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			chunk := []byte(strings.Repeat("x", 1<<16))
			for i := 0; i < 1<<10; i++ { // 64 MiB, far beyond the read limit
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, domain.OutcomeDelivered, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			o := client(true, 5*time.Second).Deliver(context.Background(), ports.Delivery{Inbox: srv.URL + "/inbox", Payload: []byte("{}"), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
			if o.Kind != tt.kind || o.Status != tt.status || o.RetryAfter != tt.after {
				t.Fatalf("outcome %+v", o)
			}
		})
	}
}

func TestDeliverNetworkFailures(t *testing.T) {
	t.Parallel()
	kp := key(t)
	// A server that never answers: the per-request timeout ends it.
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop)
	o := client(true, 200*time.Millisecond).Deliver(context.Background(), ports.Delivery{Inbox: hang.URL + "/inbox", Payload: []byte("{}"), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
	if o.Kind != domain.OutcomeRetryable || !o.HostFailure || o.Status != 0 {
		t.Fatalf("timeout: %+v", o)
	}
	// A server that closes the connection without answering.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	o = client(true, 2*time.Second).Deliver(context.Background(), ports.Delivery{Inbox: "http://" + ln.Addr().String() + "/inbox", Payload: []byte("{}"), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
	if o.Kind != domain.OutcomeRetryable || !o.HostFailure {
		t.Fatalf("closed connection: %+v", o)
	}
}

func TestDeliverRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	kp := key(t)
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, inbox := range []string{srv.URL + "/inbox", "http://localhost:" + port + "/inbox", "http://[::1]:" + port + "/inbox"} {
		o := client(false, 2*time.Second).Deliver(context.Background(), ports.Delivery{Inbox: inbox, Payload: []byte("{}"), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
		if o.Kind != domain.OutcomeFinal || o.HostFailure || !strings.Contains(o.Reason, "refus") {
			t.Fatalf("%s: %+v", inbox, o)
		}
	}
	if hits != 0 {
		t.Fatalf("a refused delivery reached the server %d times", hits)
	}
}

func TestForbidden(t *testing.T) {
	t.Parallel()
	for ip, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true, "169.254.169.254": true,
		"100.64.0.1": true, "0.0.0.0": true, "::1": true, "fe80::1": true, "fc00::1": true, "::ffff:127.0.0.1": true, "224.0.0.1": true,
		"93.184.216.34": false, "2606:4700::1111": false, "100.128.0.1": false,
	} {
		if got := delivery.Forbidden(net.ParseIP(ip)); got != want {
			t.Errorf("Forbidden(%s) = %v, want %v", ip, got, want)
		}
	}
}

func TestDeliverBadInput(t *testing.T) {
	t.Parallel()
	kp := key(t)
	for name, d := range map[string]ports.Delivery{
		"not a URL":  {Inbox: "::nope", Payload: []byte("{}"), PrivateKeyPEM: kp.PrivatePEM},
		"ftp inbox":  {Inbox: "ftp://x/inbox", Payload: []byte("{}"), PrivateKeyPEM: kp.PrivatePEM},
		"broken key": {Inbox: "https://x.example/inbox", Payload: []byte("{}"), PrivateKeyPEM: "garbage"},
	} {
		if o := client(true, time.Second).Deliver(context.Background(), d); o.Kind != domain.OutcomeFinal {
			t.Errorf("%s: %+v", name, o)
		}
	}
}

// connCounter counts a test server's open connections.
type connCounter struct {
	mu   sync.Mutex
	open int
}

func (c *connCounter) track(_ net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateNew:
		c.open++
	case http.StateClosed, http.StateHijacked:
		c.open--
	}
}

func (c *connCounter) now() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// A fan-out to many hosts keeps at most MaxIdleConns idle connections, not
// one per host it visited.
func TestDeliverBoundsTheIdlePool(t *testing.T) {
	t.Parallel()
	const hosts, idle = 40, 5
	var cc connCounter
	var inboxes []string
	for i := 0; i < hosts; i++ {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusAccepted)
		}))
		srv.Config.ConnState = cc.track
		srv.Start()
		t.Cleanup(srv.Close)
		inboxes = append(inboxes, srv.URL+"/inbox")
	}
	c := delivery.New(delivery.Config{Timeout: 5 * time.Second, AllowPrivate: true, MaxIdleConns: idle})
	defer c.Close()
	kp := key(t)
	for _, in := range inboxes {
		o := c.Deliver(context.Background(), ports.Delivery{Inbox: in, Payload: []byte(`{}`), KeyID: "https://local.example/users/a#main-key", PrivateKeyPEM: kp.PrivatePEM})
		if o.Kind != domain.OutcomeDelivered {
			t.Fatalf("delivery to %s: %+v", in, o)
		}
	}
	// The server sees a close once the client has dropped a connection;
	// wait (bounded, liveness only) for the closes to arrive.
	deadline := time.Now().Add(5 * time.Second)
	for cc.now() > idle && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := cc.now(); n > idle {
		t.Fatalf("%d connections open after deliveries to %d hosts, want at most MaxIdleConns = %d", n, hosts, idle)
	}
}

// A server may close a kept-alive connection just as the next request is
// written on it (its idle or header timeout fired; a connection dialled
// ahead and pooled unused counts too). The request then dies with EOF
// before any answer. An inbox POST may be sent again (receivers dedupe by
// activity id, and the engine would retry it anyway, minutes later and
// counted against the host), so the client resends it at once on a new
// connection. The server here does that deterministically: it answers the
// first request, reads the second and hangs up.
func TestDeliverResendsWhenAKeptAliveConnectionCloses(t *testing.T) {
	t.Parallel()
	kp := key(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type seen struct {
		conn   int
		header http.Header
		body   string
	}
	got := make(chan seen, 8)
	read := func(conn int, br *bufio.Reader) bool {
		r, err := http.ReadRequest(br)
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(r.Body)
		got <- seen{conn, r.Header, string(body)}
		return true
	}
	const ok = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
	go func() {
		for conn := 1; ; conn++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			if read(conn, br) {
				_, _ = io.WriteString(c, ok)
				if conn == 1 && read(conn, br) {
					_ = c.Close() // the second request on it: no answer
					continue
				}
				_, _ = io.Copy(io.Discard, br)
			}
			_ = c.Close()
		}
	}()
	cl := client(true, 5*time.Second)
	defer cl.Close()
	inbox := "http://" + ln.Addr().String() + "/inbox"
	for i, payload := range []string{`{"id":"https://local.example/a/1"}`, `{"id":"https://local.example/a/2"}`} {
		o := cl.Deliver(context.Background(), ports.Delivery{Inbox: inbox, Payload: []byte(payload), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
		if o.Kind != domain.OutcomeDelivered {
			t.Fatalf("delivery %d: %+v; want it delivered, resent on a new connection", i+1, o)
		}
	}
	want := []struct {
		conn int
		body string
	}{{1, "/a/1"}, {1, "/a/2"}, {2, "/a/2"}}
	for i, w := range want {
		s := <-got
		if s.conn != w.conn || !strings.Contains(s.body, w.body) {
			t.Errorf("request %d: connection %d, body %s; want connection %d, %s", i+1, s.conn, s.body, w.conn, w.body)
		}
		if _, sent := s.header["Idempotency-Key"]; sent {
			t.Errorf("request %d carries Idempotency-Key %q: the marker is for Go's transport only", i+1, s.header.Get("Idempotency-Key"))
		}
	}
}
