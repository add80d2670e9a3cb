package httpapi_test

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldfed/herald/adapters/httpapi"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	xff := func(v ...string) map[string][]string { return map[string][]string{"X-Forwarded-For": v} }
	fwd := func(v ...string) map[string][]string { return map[string][]string{"Forwarded": v} }
	tests := []struct {
		name    string
		trusted string
		header  string
		peer    string
		headers map[string][]string
		want    string
	}{
		{"no proxies: the peer, header ignored", "", "", "203.0.113.9:5555", xff("198.51.100.1"), "203.0.113.9"},
		{"untrusted peer spoofing X-Forwarded-For", "10.0.0.0/8", "", "203.0.113.9:5555", xff("198.51.100.1"), "203.0.113.9"},
		{"untrusted peer spoofing Forwarded", "10.0.0.0/8", "forwarded", "203.0.113.9:5555", fwd("for=198.51.100.1"), "203.0.113.9"},
		{"trusted peer, one hop", "10.0.0.0/8", "", "10.1.2.3:80", xff("198.51.100.1"), "198.51.100.1"},
		{"trusted peer, client prepended a lie", "10.0.0.0/8", "", "10.1.2.3:80", xff("192.0.2.66, 198.51.100.1"), "198.51.100.1"},
		{"two trusted proxies in a row", "10.0.0.0/8, 172.16.0.0/12", "", "10.1.2.3:80", xff("192.0.2.66, 198.51.100.1, 172.16.5.5"), "198.51.100.1"},
		{"header in several lines", "10.0.0.0/8", "", "10.1.2.3:80", xff("192.0.2.66", "198.51.100.1"), "198.51.100.1"},
		{"trusted peer without header", "10.0.0.0/8", "", "10.1.2.3:80", nil, "10.1.2.3"},
		{"garbage hop: the last trusted proxy", "10.0.0.0/8", "", "10.1.2.3:80", xff("198.51.100.1, not-an-ip"), "10.1.2.3"},
		{"every hop trusted: the left-most", "10.0.0.0/8", "", "10.1.2.3:80", xff("10.9.9.9, 10.8.8.8"), "10.9.9.9"},
		{"single address, not a network", "10.1.2.3", "", "10.1.2.3:80", xff("198.51.100.1"), "198.51.100.1"},
		{"single address, another peer", "10.1.2.3", "", "10.1.2.4:80", xff("198.51.100.1"), "10.1.2.4"},
		{"IPv6 client with port behind two IPv6 proxies", "2001:db8::/48", "", "[2001:db8::1]:443", xff("[2001:db8:ffff::7]:1234, 2001:db8::2"), "2001:db8:ffff::7"},
		{"IPv6 client", "::1/128", "", "[::1]:443", xff("2001:db8:1::5"), "2001:db8:1::5"},
		{"IPv4-mapped peer", "127.0.0.1/32", "", "[::ffff:127.0.0.1]:80", xff("198.51.100.1"), "198.51.100.1"},
		{"X-Forwarded-For read, Forwarded spoofed", "10.0.0.0/8", "", "10.1.2.3:80",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "Forwarded": {"for=192.0.2.66"}}, "198.51.100.1"},
		{"Forwarded read, X-Forwarded-For spoofed", "10.0.0.0/8", "forwarded", "10.1.2.3:80",
			map[string][]string{"X-Forwarded-For": {"192.0.2.66"}, "Forwarded": {"for=198.51.100.1;proto=https"}}, "198.51.100.1"},
		{"Forwarded, quoted IPv6 with port, lie prepended", "10.0.0.0/8", "forwarded", "10.1.2.3:80",
			fwd(`for=192.0.2.66, for="[2001:db8:cafe::17]:4711";proto=https;by=10.1.2.3`), "2001:db8:cafe::17"},
		{"Forwarded for=unknown: the last trusted proxy", "10.0.0.0/8", "forwarded", "10.1.2.3:80", fwd("for=198.51.100.1, for=unknown"), "10.1.2.3"},
		{"Forwarded hop without for=", "10.0.0.0/8", "forwarded", "10.1.2.3:80", fwd("for=198.51.100.1, proto=https"), "10.1.2.3"},
	}
	for _, tt := range tests {
		p, err := httpapi.NewProxies(tt.trusted, tt.header)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = tt.peer
		for k, vs := range tt.headers {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		if got := p.ClientAddr(req); got != tt.want {
			t.Errorf("%s: client %q, want %q", tt.name, got, tt.want)
		}
	}
	var none *httpapi.Proxies
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr, req.Header["X-Forwarded-For"] = "192.0.2.1:1", []string{"198.51.100.1"}
	if got := none.ClientAddr(req); got != "192.0.2.1" {
		t.Errorf("nil proxies: %q", got)
	}
}

func TestNewProxiesRefusesBadSettings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ networks, header string }{
		{"10.0.0.0/33", ""}, {"proxy.example", ""}, {"10.0.0.0/8,,nonsense", ""}, {"10.0.0.0/8", "x-real-ip"},
	} {
		if _, err := httpapi.NewProxies(tt.networks, tt.header); err == nil {
			t.Errorf("NewProxies(%q, %q) accepted", tt.networks, tt.header)
		}
	}
	if _, err := httpapi.NewProxies(" 10.0.0.0/8 , ::1/128,192.0.2.7 ", "Forwarded"); err != nil {
		t.Errorf("a good list refused: %v", err)
	}
}

// Behind a trusted proxy the limit counts each forwarded client apart;
// from an untrusted peer a made-up X-Forwarded-For changes nothing.
func TestRateLimitBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	proxies, err := httpapi.NewProxies("10.0.0.0/8", "")
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := newLimited(t, httpapi.RateLimit{PerMinute: 1, Burst: 2}, proxies)
	via := func(peer, forwarded string) int {
		req := httptest.NewRequest("POST", "/api/v1/sessions", strings.NewReader(wrongLogin))
		req.RemoteAddr = peer
		req.Header.Set("X-Forwarded-For", forwarded)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for i := 0; i < 2; i++ {
		if code := via("10.0.0.5:1", "192.0.2.1"); code != 401 {
			t.Fatalf("client 1, attempt %d: %d", i+1, code)
		}
	}
	if code := via("10.0.0.5:2", "192.0.2.1"); code != 429 {
		t.Fatalf("client 1 over its limit: %d", code)
	}
	// Another client through the same proxy still gets in, and client 1
	// cannot escape by prepending another address.
	if code := via("10.0.0.5:3", "192.0.2.2"); code != 401 {
		t.Fatalf("client 2 through the same proxy: %d", code)
	}
	if code := via("10.0.0.5:4", "198.51.100.77, 192.0.2.1"); code != 429 {
		t.Fatalf("client 1 with a spoofed hop: %d", code)
	}
	// An untrusted peer spoofing a fresh X-Forwarded-For each time shares
	// one bucket: its own address.
	codes := ""
	for i := 0; i < 3; i++ {
		codes += strconv.Itoa(via("203.0.113.50:9", "198.51.100."+strconv.Itoa(i+1))) + " "
	}
	if codes != "401 401 429 " {
		t.Fatalf("untrusted peer with spoofed headers: %s, want 401 401 429", codes)
	}
}
