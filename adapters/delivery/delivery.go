// Package delivery is the outbound Deliverer: it POSTs one activity to one
// inbox with an HTTP Signature (draft-cavage, rsa-sha256, keyId = the actor's
// key URL, signed headers "(request-target) host date digest"), bounded in
// time and in response size, and classifies what happened into a
// domain.Outcome. Its pooled connections (deliveries and fetches alike) pass
// an address guard at dial time, after DNS: every range of the IANA IPv4 and
// IPv6 special-purpose registries is refused (code.dny.dev/ssrf, generated
// from them), private and loopback ones too unless Config.AllowPrivate.
package delivery

import (
	"bytes"
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
	"github.com/go-fed/httpsig"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.Deliverer = (*Client)(nil)

// Config tunes the client.
type Config struct {
	// Timeout bounds one delivery, from dial to the end of the response.
	Timeout time.Duration
	// ConnectTimeout bounds the dial (TCP connect) alone (3 s, at most
	// Timeout): a host that does not even complete a handshake is given up
	// sooner than one that is slow to answer.
	ConnectTimeout time.Duration
	// MaxIdleConns bounds the idle connections kept for reuse, all hosts
	// together (512: enough to reuse connections to a few hundred hosts in
	// rotation, 2 each), and IdleConnTimeout how long one is kept (30 s). A
	// fan-out visits each host's inboxes one after another, so a host's
	// connections are seldom reused once its jobs are done: unbounded, a
	// fan-out to many hosts kept one idle connection (and its buffers and
	// goroutines) for each of them.
	MaxIdleConns    int
	IdleConnTimeout time.Duration
	// MaxResponseBytes is how much of a response body is read (and
	// discarded) so the connection can be reused; the rest is dropped with
	// the connection.
	MaxResponseBytes int64
	// MaxConnsPerHost caps connections to one remote host.
	MaxConnsPerHost int
	// UserAgent names Herald and the instance.
	UserAgent string
	// AllowPrivate lets deliveries reach loopback and private-use
	// addresses (tests and demos only); the other special-purpose ranges
	// (link-local, CGNAT, multicast, NAT64, 6to4, ...) stay refused.
	AllowPrivate bool
	// Now is the clock of the Date header (time.Now if nil).
	Now func() time.Time
}

// Client delivers over HTTP. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
	keys sync.Map // private key PEM → *rsa.PrivateKey, parsed once
}

// ErrRefusedAddress is returned by the dialer for a forbidden address.
var ErrRefusedAddress = errors.New("refusing to connect to a special-purpose address")

// New builds a client.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 64 << 10
	}
	if cfg.MaxConnsPerHost <= 0 {
		cfg.MaxConnsPerHost = 4
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 3 * time.Second
	}
	cfg.ConnectTimeout = min(cfg.ConnectTimeout, cfg.Timeout)
	if cfg.MaxIdleConns <= 0 {
		cfg.MaxIdleConns = 512
	}
	if cfg.IdleConnTimeout <= 0 {
		cfg.IdleConnTimeout = 30 * time.Second
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "Herald"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// Checked on the address actually dialled, after DNS resolution, so a
	// name that resolves (or re-resolves) to 127.0.0.1 is refused.
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second, Control: NewGuard(cfg.AllowPrivate).Control}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would hide the real target from the dial-time guard
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          cfg.MaxIdleConns,
		MaxIdleConnsPerHost:   min(cfg.MaxConnsPerHost, cfg.MaxIdleConns),
		MaxConnsPerHost:       cfg.MaxConnsPerHost,
		IdleConnTimeout:       cfg.IdleConnTimeout,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &Client{cfg: cfg, http: &http.Client{
		Transport: transport,
		// An inbox that redirects a POST is misconfigured; following it
		// would also let a remote point us at an internal address.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Guard is the address check of every connection the client makes: an
// ssrf.Guardian (code.dny.dev/ssrf, its prefix tables generated from the
// IANA IPv4 and IPv6 special-purpose address registries) that allows any
// port, since inboxes are not all on 443. Outside 2000::/3 every IPv6
// address is refused (loopback, unspecified, v4-mapped, NAT64
// 64:ff9b::/96 and 64:ff9b:1::/48, discard 100::/64, ULA fc00::/7,
// link-local fe80::/10, multicast ff00::/8); inside it the registry's
// 2001::/23, 2001:db8::/32, 2002::/16 (6to4, which embeds any IPv4
// address), 2620:4f:8000::/48 and 3fff::/20. A Guard is immutable and safe
// for concurrent use.
type Guard struct {
	ssrf *ssrf.Guardian
	// allowPrivate is kept to say, when a private address is refused,
	// which setting would let it through: a newcomer's first follow is
	// often of a second instance on 127.0.0.1.
	allowPrivate bool
}

// NewGuard builds the check; allowPrivate lets loopback (127.0.0.0/8,
// ::1) and private-use addresses (RFC 1918, fc00::/7) through as well.
func NewGuard(allowPrivate bool) Guard {
	v4 := []netip.Prefix(nil)
	v6 := globallyReachableV6
	if allowPrivate {
		v4 = privateV4
		v6 = append(slices.Clone(v6), privateV6...)
	}
	return Guard{ssrf: ssrf.New(ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...)), allowPrivate: allowPrivate}
}

// PrivateHint is what a refusal of a loopback or private-use address adds
// when AllowPrivate is off: the setting that lets it through.
const PrivateHint = "loopback and private-use addresses are refused unless HERALD_ALLOW_PRIVATE_TARGETS=true (tests, demos)"

// refused wraps a refusal of ip, naming PrivateHint where it applies.
func (g Guard) refused(ip netip.Addr, err error) error {
	if !g.allowPrivate && isPrivate(ip) {
		return fmt.Errorf("%w: %w; %s", ErrRefusedAddress, err, PrivateHint)
	}
	return fmt.Errorf("%w: %w", ErrRefusedAddress, err)
}

func isPrivate(ip netip.Addr) bool {
	for _, p := range append(slices.Clone(privateV4), privateV6...) {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// globallyReachableV6 are the entries inside 2001::/23 that the IANA IPv6
// special-purpose registry marks globally reachable (ssrf refuses the
// whole /23): anycast services and overlay identifiers with no reason to
// refuse them.
var globallyReachableV6 = []netip.Prefix{
	netip.MustParsePrefix("2001:1::1/128"),   // Port Control Protocol Anycast (RFC 7723)
	netip.MustParsePrefix("2001:1::2/128"),   // Traversal Using Relays around NAT Anycast (RFC 8155)
	netip.MustParsePrefix("2001:3::/32"),     // AMT (RFC 7450)
	netip.MustParsePrefix("2001:4:112::/48"), // AS112-v6 (RFC 7535)
	netip.MustParsePrefix("2001:20::/28"),    // ORCHIDv2 (RFC 7343)
	netip.MustParsePrefix("2001:30::/28"),    // Drone Remote ID Protocol Entity Tags (RFC 9374)
}

// privateV4 and privateV6 are what AllowPrivate lets through: loopback and
// private-use ranges, where test servers and demo instances listen.
var (
	privateV4 = []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),    // Loopback (RFC 1122)
		netip.MustParsePrefix("10.0.0.0/8"),     // Private-Use (RFC 1918)
		netip.MustParsePrefix("172.16.0.0/12"),  // Private-Use (RFC 1918)
		netip.MustParsePrefix("192.168.0.0/16"), // Private-Use (RFC 1918)
	}
	privateV6 = []netip.Prefix{
		netip.MustParsePrefix("::1/128"),  // Loopback Address (RFC 4291)
		netip.MustParsePrefix("fc00::/7"), // Unique-Local (RFC 4193)
	}
)

// Check returns an error wrapping ErrRefusedAddress when ip is refused. An
// IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged by its IPv4 part,
// which is where a connection to it goes.
func (g Guard) Check(ip netip.Addr) error {
	if err := g.ssrf.SafeAddr(ip.Unmap()); err != nil {
		return g.refused(ip.Unmap(), err)
	}
	return nil
}

// Control is the net.Dialer hook: it runs on the resolved address of every
// connection, before any packet is sent.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address: %v", ErrRefusedAddress, address, err)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if err := g.ssrf.Safe(network, ap.String(), nil); err != nil {
		return g.refused(ap.Addr(), err)
	}
	return nil
}

// Forbidden reports whether the client refuses ip by default (without
// AllowPrivate).
func Forbidden(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	return !ok || publicOnly.Check(a) != nil
}

var publicOnly = NewGuard(false)

// Deliver implements ports.Deliverer.
func (c *Client) Deliver(ctx context.Context, d ports.Delivery) domain.Outcome {
	u, err := url.Parse(d.Inbox)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return domain.RefusedTarget(fmt.Errorf("inbox %q is not an http(s) URL", d.Inbox))
	}
	key, err := c.key(d.PrivateKeyPEM)
	if err != nil {
		return domain.RefusedTarget(fmt.Errorf("signing key of %s: %v", d.KeyID, err))
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := c.signedRequest(ctx, u, d, key)
	if err != nil {
		return domain.RefusedTarget(err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, ErrRefusedAddress) {
			return domain.RefusedTarget(err)
		}
		return domain.NetworkFailure(err)
	}
	// Drain a bounded amount so the connection goes back to the pool.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, c.cfg.MaxResponseBytes))
	_ = resp.Body.Close()
	return domain.Classify(resp.StatusCode, resp.Header.Get("Retry-After"), c.cfg.Now())
}

func (c *Client) signedRequest(ctx context.Context, u *url.URL, d ports.Delivery, key *rsa.PrivateKey) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/activity+json")
	req.Header.Set("Accept", "application/activity+json, application/ld+json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Date", c.cfg.Now().UTC().Format(http.TimeFormat))
	// Go sends req.Host, not this header; it is set so the signer signs
	// the value that goes on the wire.
	req.Header.Set("Host", u.Host)
	if err := Sign(req, d.KeyID, key, d.Payload); err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(d.Payload))
	req.ContentLength = int64(len(d.Payload))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(d.Payload)), nil }
	// Marks the POST as safe to send again, so Go's transport resends it
	// on a new connection when a pooled one turns out closed by the server
	// (EOF before any answer: its keep-alive or header timeout fired as we
	// wrote). Receivers dedupe an activity by its id, and the engine would
	// send it again anyway, later and counted as a failure of the host. An
	// empty value is never put on the wire (net/http.Transport's docs).
	req.Header["Idempotency-Key"] = nil
	return req, nil
}

// SignedHeaders are the headers every Herald signature covers.
var SignedHeaders = []string{httpsig.RequestTarget, "host", "date", "digest"}

// Sign adds Digest and Signature headers to req for body. A go-fed signer
// is not safe for concurrent use, so one is made per request (cheap next to
// the RSA signature itself).
func Sign(req *http.Request, keyID string, key *rsa.PrivateKey, body []byte) error {
	signer, _, err := httpsig.NewSigner([]httpsig.Algorithm{httpsig.RSA_SHA256}, httpsig.DigestSha256, SignedHeaders, httpsig.Signature, 0)
	if err != nil {
		return fmt.Errorf("signer: %w", err)
	}
	if err := signer.SignRequest(key, keyID, req, body); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	// go-fed labels every signature algorithm="hs2019". The signature is
	// RSASSA-PKCS1-v1_5 with SHA-256, which Mastodon and the older servers
	// that reject hs2019 know as "rsa-sha256"; the parameter is not part of
	// the signed string, so naming it precisely changes nothing else.
	req.Header.Set("Signature", strings.Replace(req.Header.Get("Signature"), `algorithm="hs2019"`, `algorithm="rsa-sha256"`, 1))
	return nil
}

func (c *Client) key(pemText string) (*rsa.PrivateKey, error) {
	if k, ok := c.keys.Load(pemText); ok {
		return k.(*rsa.PrivateKey), nil
	}
	k, err := domain.ParsePrivateKey(pemText)
	if err != nil {
		return nil, err
	}
	c.keys.Store(pemText, k)
	return k, nil
}
