package delivery_test

import (
	"bufio"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
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
	for _, inbox := range []string{srv.URL + "/inbox", "http://localhost:" + port + "/inbox", "http://[::1]:" + port + "/inbox",
		"http://[::ffff:127.0.0.1]:" + port + "/inbox", "http://127.0.0.2:" + port + "/inbox", "http://0.0.0.0:" + port + "/inbox"} {
		o := client(false, 2*time.Second).Deliver(context.Background(), ports.Delivery{Inbox: inbox, Payload: []byte("{}"), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
		if o.Kind != domain.OutcomeFinal || o.HostFailure || !strings.Contains(o.Reason, "refus") {
			t.Fatalf("%s: %+v", inbox, o)
		}
	}
	if hits != 0 {
		t.Fatalf("a refused delivery reached the server %d times", hits)
	}
}

// One address per special-purpose range (IANA IPv4 and IPv6 registries),
// refused with and without AllowPrivate unless the case says otherwise.
func TestGuard(t *testing.T) {
	t.Parallel()
	const (
		refused   = iota // refused in both modes
		private          // refused, but allowed with AllowPrivate
		reachable        // allowed in both modes
	)
	for _, tt := range []struct {
		ip   string
		want int
	}{
		// IPv4 special-purpose registry.
		{"0.0.0.0", refused},         // "this network" 0/8
		{"0.1.2.3", refused},         // 0/8
		{"10.1.2.3", private},        // RFC 1918
		{"100.64.0.1", refused},      // shared address space (CGNAT) 100.64/10
		{"100.127.255.254", refused}, // its last address
		{"127.0.0.1", private},       // loopback
		{"127.255.0.9", private},     // loopback is a /8
		{"169.254.169.254", refused}, // link-local: cloud metadata
		{"172.16.0.1", private},      // RFC 1918
		{"172.31.255.255", private},  // RFC 1918, end of 172.16/12
		{"192.0.0.8", refused},       // IETF protocol assignments 192.0.0/24
		{"192.0.2.1", refused},       // TEST-NET-1
		{"192.31.196.1", refused},    // AS112-v4
		{"192.52.193.1", refused},    // AMT
		{"192.88.99.1", refused},     // 6to4 relay anycast
		{"192.168.1.1", private},     // RFC 1918
		{"192.175.48.1", refused},    // direct delegation AS112
		{"198.18.0.1", refused},      // benchmarking 198.18/15
		{"198.19.255.254", refused},  // its upper half
		{"198.51.100.7", refused},    // TEST-NET-2
		{"203.0.113.9", refused},     // TEST-NET-3
		{"224.0.0.1", refused},       // multicast
		{"239.255.255.250", refused}, // multicast (SSDP)
		{"240.0.0.1", refused},       // reserved 240/4
		{"255.255.255.255", refused}, // limited broadcast
		// IPv6 special-purpose registry, and everything outside 2000::/3.
		{"::", refused},               // unspecified
		{"::1", private},              // loopback
		{"::ffff:127.0.0.1", private}, // v4-mapped: judged by its v4 part
		{"::ffff:169.254.169.254", refused},
		{"::ffff:10.0.0.1", private},
		{"::1.2.3.4", refused},        // v4-compatible (deprecated)
		{"64:ff9b::7f00:1", refused},  // NAT64 well-known prefix (127.0.0.1 inside)
		{"64:ff9b::101:101", refused}, // NAT64 of a public address: still the prefix
		{"64:ff9b:1::1", refused},     // local-use NAT64
		{"100::1", refused},           // discard-only 100::/64
		{"2001::1", refused},          // Teredo 2001::/32
		{"2001:2::1", refused},        // benchmarking 2001:2::/48
		{"2001:10::1", refused},       // ORCHID (deprecated)
		{"2001:1ff::1", refused},      // end of 2001::/23
		{"2001:db8::1", refused},      // documentation
		{"2002:7f00:1::1", refused},   // 6to4 embedding 127.0.0.1
		{"2002:c0a8:101::1", refused}, // 6to4 embedding 192.168.1.1
		{"2002:808:808::1", refused},  // 6to4 of a public address: still 2002::/16
		{"2620:4f:8000::1", refused},  // direct delegation AS112
		{"3fff::1", refused},          // documentation 3fff::/20
		{"fc00::1", private},          // unique local
		{"fd12:3456::1", private},     // unique local
		{"fe80::1", refused},          // link-local
		{"fec0::1", refused},          // site-local (deprecated)
		{"ff02::1", refused},          // multicast
		{"ff05::1:3", refused},        // multicast
		// Globally reachable: public addresses, and the entries of
		// 2001::/23 the registry marks so.
		{"1.1.1.1", reachable},
		{"8.8.8.8", reachable},
		{"93.184.216.34", reachable},
		{"100.63.255.255", reachable},  // just below 100.64/10
		{"100.128.0.1", reachable},     // just above it
		{"172.32.0.1", reachable},      // just above 172.16/12
		{"198.17.255.255", reachable},  // just below 198.18/15
		{"198.20.0.1", reachable},      // just above it
		{"223.255.255.254", reachable}, // just below multicast
		{"::ffff:1.1.1.1", reachable},  // v4-mapped public
		{"2606:4700::1111", reachable},
		{"2a00:1450:4001::1", reachable},
		{"2001:200::1", reachable}, // just past 2001::/23
		{"2001:4860:4860::8888", reachable},
		{"2001:1::1", reachable},     // PCP anycast
		{"2001:1::2", reachable},     // TURN anycast
		{"2001:3::1", reachable},     // AMT
		{"2001:4:112::1", reachable}, // AS112-v6
		{"2001:20::1", reachable},    // ORCHIDv2
		{"2001:30::1", reachable},    // DRIP DETs
	} {
		ip := netip.MustParseAddr(tt.ip)
		for _, allowPrivate := range []bool{false, true} {
			wantRefused := tt.want == refused || (tt.want == private && !allowPrivate)
			err := delivery.NewGuard(allowPrivate).Check(ip)
			if (err != nil) != wantRefused || (err != nil && !errors.Is(err, delivery.ErrRefusedAddress)) {
				t.Errorf("NewGuard(%v).Check(%s) = %v, want refused %v", allowPrivate, ip, err, wantRefused)
			}
			// The dialer's hook judges the address it is given the same way, on any port.
			err = delivery.NewGuard(allowPrivate).Control(network(ip), netip.AddrPortFrom(ip, 8443).String(), nil)
			if (err != nil) != wantRefused {
				t.Errorf("NewGuard(%v).Control(%s) = %v, want refused %v", allowPrivate, ip, err, wantRefused)
			}
			// A refused loopback or private address names the setting
			// that lets it through; no other refusal does, since that
			// setting would not help.
			wantHint := tt.want == private && !allowPrivate
			if err != nil && strings.Contains(err.Error(), delivery.PrivateHint) != wantHint {
				t.Errorf("NewGuard(%v).Control(%s) = %v, want the HERALD_ALLOW_PRIVATE_TARGETS hint %v", allowPrivate, ip, err, wantHint)
			}
		}
		if got := delivery.Forbidden(net.ParseIP(tt.ip)); got != (tt.want != reachable) {
			t.Errorf("Forbidden(%s) = %v", ip, got)
		}
	}
}

func network(ip netip.Addr) string {
	if ip.Unmap().Is4() {
		return "tcp4"
	}
	return "tcp6"
}

// Any port is allowed (inboxes are not all on 443), and only TCP.
func TestGuardPortsAndNetworks(t *testing.T) {
	t.Parallel()
	g := delivery.NewGuard(false)
	for _, port := range []string{"80", "443", "3000", "8080", "65535"} {
		if err := g.Control("tcp4", "1.1.1.1:"+port, nil); err != nil {
			t.Errorf("port %s: %v", port, err)
		}
	}
	for _, bad := range []struct{ network, address string }{
		{"udp4", "1.1.1.1:443"}, {"tcp4", "example.com:443"}, {"tcp4", "1.1.1.1"},
	} {
		if err := g.Control(bad.network, bad.address, nil); !errors.Is(err, delivery.ErrRefusedAddress) {
			t.Errorf("%s %s: %v, want a refusal", bad.network, bad.address, err)
		}
	}
}

// With AllowPrivate, the guard still runs on real dials: 0.0.0.0 (which
// Linux connects to this host) is refused and never reaches the server on
// loopback, while the loopback server itself is reached.
func TestDeliverAllowPrivateStillRefusesTheRest(t *testing.T) {
	t.Parallel()
	kp := key(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	o := client(true, 2*time.Second).Deliver(context.Background(), ports.Delivery{Inbox: "http://0.0.0.0:" + port + "/inbox", Payload: []byte("{}"), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
	if o.Kind != domain.OutcomeFinal || !strings.Contains(o.Reason, "refus") {
		t.Fatalf("0.0.0.0: %+v", o)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("a refused delivery reached the server %d times", n)
	}
	o = client(true, 2*time.Second).Deliver(context.Background(), ports.Delivery{Inbox: srv.URL + "/inbox", Payload: []byte("{}"), KeyID: "k", PrivateKeyPEM: kp.PrivatePEM})
	if o.Kind != domain.OutcomeDelivered || hits.Load() != 1 {
		t.Fatalf("loopback with AllowPrivate: %+v, %d hits", o, hits.Load())
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
