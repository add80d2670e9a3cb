package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/gorilla/mux"
)

// Forwarding headers a trusted proxy may write.
const (
	HeaderXForwardedFor = "x-forwarded-for"
	HeaderForwarded     = "forwarded"
)

// Proxies says which TCP peers are reverse proxies of this instance and
// which header they write the client's address in. Behind such a proxy the
// client address (the rate limit's key, the logs' "client") is the
// right-most hop of that header that is not itself a trusted proxy: every
// hop right of it was written by a proxy we trust, every hop left of it by
// the client, who can write anything there.
//
// From an untrusted peer the headers are ignored: anyone can send
// X-Forwarded-For. Only one header is read, the one the proxies write: if
// both were read, a client could put a made-up address in the header the
// proxy does not touch.
type Proxies struct {
	trusted []netip.Prefix
	header  string
}

// NewProxies parses a comma-separated list of networks (CIDR, or bare
// addresses meaning one host) and the header name: x-forwarded-for (the
// default when empty) or forwarded (RFC 7239).
func NewProxies(networks, header string) (*Proxies, error) {
	p := &Proxies{header: HeaderXForwardedFor}
	switch h := strings.ToLower(strings.TrimSpace(header)); h {
	case "", HeaderXForwardedFor:
	case HeaderForwarded:
		p.header = HeaderForwarded
	default:
		return nil, fmt.Errorf("proxy header %q: want x-forwarded-for or forwarded", header)
	}
	for _, n := range strings.Split(networks, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		pre, err := netip.ParsePrefix(n)
		if err != nil {
			a, aerr := netip.ParseAddr(n)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q: want a network such as 10.0.0.0/8 or an address", n)
			}
			pre = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		if pre.Addr().Is4In6() {
			pre = netip.PrefixFrom(pre.Addr().Unmap(), max(pre.Bits()-96, 0))
		}
		p.trusted = append(p.trusted, pre.Masked())
	}
	return p, nil
}

// Register implements Routes so that bootstrap hands the proxies to New
// among the extra surfaces; it adds no route.
func (p *Proxies) Register(*mux.Router) {}

// trusts reports whether a is one of the proxies.
func (p *Proxies) trusts(a netip.Addr) bool {
	for _, n := range p.trusted {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the client's IP address for r: the TCP peer, or, when the
// peer is a trusted proxy, the right-most untrusted hop of the forwarding
// header. A nil Proxies trusts nobody.
func (p *Proxies) ClientAddr(r *http.Request) string {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if p == nil || len(p.trusted) == 0 || !p.trusts(peer) {
		return peer.String()
	}
	var hops []string
	if p.header == HeaderForwarded {
		hops = forwardedFor(r.Header.Values("Forwarded"))
	} else {
		for _, v := range r.Header.Values("X-Forwarded-For") {
			hops = append(hops, strings.Split(v, ",")...)
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			// "unknown", an obfuscated name or garbage: the client is not
			// known, and the last proxy we trust is the best key there is
			// (shared, but not one a client can choose).
			break
		}
		client = a
		if !p.trusts(a) {
			break
		}
	}
	return client.String()
}

// forwardedFor lists the for= values of RFC 7239 Forwarded headers, in
// order.
func forwardedFor(values []string) []string {
	var out []string
	for _, v := range values {
		for _, elem := range strings.Split(v, ",") {
			// A hop without for= still is a hop: keep its place with a
			// value that does not parse.
			hop := ""
			for _, pair := range strings.Split(elem, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
					hop = strings.Trim(strings.TrimSpace(val), `"`)
				}
			}
			out = append(out, hop)
		}
	}
	return out
}

// parseHop reads "ip", "ip:port", "[ipv6]" or "[ipv6]:port".
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// proxiesOf picks the proxies bootstrap passed among the extra surfaces
// (nil: trust none).
func proxiesOf(extra []Routes) *Proxies {
	for _, e := range extra {
		if p, ok := e.(*Proxies); ok && p != nil {
			return p
		}
	}
	return nil
}
