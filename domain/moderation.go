package domain

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Severity is how hard a domain block bites (SPEC §11), as Mastodon's
// domain blocks have it.
type Severity string

const (
	// SeveritySilence: the domain's posts reach only the personas that
	// follow their author, groups do not boost them, and its follows need
	// approval.
	SeveritySilence Severity = "silence"
	// SeveritySuspend: nothing is accepted from the domain, nothing is sent
	// to or fetched from it, and what it left here is hidden.
	SeveritySuspend Severity = "suspend"
)

// Valid reports whether s is known.
func (s Severity) Valid() bool { return s == SeveritySilence || s == SeveritySuspend }

// FederationMode says whom Herald federates with: everyone but the blocked
// domains, or only the allowed ones.
type FederationMode string

const (
	FederationBlocklist FederationMode = "blocklist"
	FederationAllowlist FederationMode = "allowlist"
)

// Valid reports whether m is known.
func (m FederationMode) Valid() bool { return m == FederationBlocklist || m == FederationAllowlist }

// Limits of what an operator (or an imported list) writes about a domain.
const (
	MaxDomainLength  = 253
	MaxReasonLength  = 1000
	MaxCommentLength = 1000
)

// DomainBlock is the operator's decision about a remote domain and every
// subdomain of it. The fields past Severity are Mastodon's, kept so that a
// list imported from its CSV exports again as it came.
type DomainBlock struct {
	Domain        string // normalized (NormalizeDomain); unique
	Severity      Severity
	Reason        string // for the operators (Mastodon's private comment)
	PublicComment string
	RejectMedia   bool
	RejectReports bool
	Obfuscate     bool
	CreatedAt     time.Time
}

// NewDomainBlock validates a block; domain is normalized here.
func NewDomainBlock(d string, s Severity, reason string, now time.Time) (DomainBlock, error) {
	nd, err := NormalizeDomain(d)
	if err != nil {
		return DomainBlock{}, err
	}
	if !s.Valid() {
		return DomainBlock{}, fmt.Errorf("%w: severity %q is not suspend or silence", ErrInvalidInput, s)
	}
	b := DomainBlock{Domain: nd, Severity: s, Reason: strings.TrimSpace(reason), CreatedAt: now.UTC()}
	return b, b.Check()
}

// Check validates a block as stored or imported.
func (b DomainBlock) Check() error {
	if nd, err := NormalizeDomain(b.Domain); err != nil {
		return err
	} else if nd != b.Domain {
		return fmt.Errorf("%w: domain %q is not normalized", ErrInvalidInput, b.Domain)
	}
	if !b.Severity.Valid() {
		return fmt.Errorf("%w: severity %q is not suspend or silence", ErrInvalidInput, b.Severity)
	}
	if utf8.RuneCountInString(b.Reason) > MaxReasonLength || utf8.RuneCountInString(b.PublicComment) > MaxCommentLength {
		return fmt.Errorf("%w: a comment of a block is at most %d characters", ErrInvalidInput, MaxReasonLength)
	}
	return nil
}

// DomainAllow lets a domain and its subdomains federate in allowlist mode.
type DomainAllow struct {
	Domain    string // normalized; unique
	CreatedAt time.Time
}

// NewDomainAllow validates an allow; domain is normalized here.
func NewDomainAllow(d string, now time.Time) (DomainAllow, error) {
	nd, err := NormalizeDomain(d)
	if err != nil {
		return DomainAllow{}, err
	}
	return DomainAllow{Domain: nd, CreatedAt: now.UTC()}, nil
}

// NormalizeDomain lower-cases and trims a domain an operator names, and
// refuses what cannot be one: a URL, a path, a wildcard, a label that is
// not letters, digits, '-' or '_' (IDNs are given in their ASCII form, as
// Mastodon's exports have them). A port is kept (host:port) for servers
// that only differ by it, as loopback ones in tests do; a domain without
// one covers every port. An IP address is a domain of its own.
func NormalizeDomain(d string) (string, error) {
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %q is not a domain: %s", ErrInvalidInput, clipText(d, 80), why)
	}
	if d == "" {
		return bad("empty")
	}
	if len(d) > MaxDomainLength {
		return bad("too long")
	}
	host, port := d, ""
	if h, p, err := net.SplitHostPort(d); err == nil {
		host, port = h, p
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad("bad port")
		}
	}
	if net.ParseIP(host) != nil {
		if port != "" {
			return net.JoinHostPort(host, port), nil
		}
		return host, nil
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return bad("empty or malformed label")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return bad("only letters, digits, '-', '_' and dots")
			}
		}
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

// CanonicalHost is the form in which Herald keeps a URL's host[:port]:
// lower-cased, and without the trailing dot a fully qualified name may
// carry ("example.com.:443" is "example.com:443"), so that one server has
// one host however its URLs spell it (the job queue's per-host cap and
// breaker, the domain blocks).
func CanonicalHost(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if h, p, err := net.SplitHostPort(host); err == nil && strings.HasSuffix(h, ".") {
		return net.JoinHostPort(strings.TrimSuffix(h, "."), p)
	}
	return host
}

// DomainCovers reports whether a rule about domain d applies to host (a
// URL's host[:port], in any case, with or without a trailing dot): d
// itself or a subdomain of it, on any port, or exactly d when d names a
// port.
func DomainCovers(d, host string) bool {
	host = CanonicalHost(host)
	if strings.Contains(d, ":") && net.ParseIP(d) == nil {
		return host == d
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return host == d || strings.HasSuffix(host, "."+d)
}

// Verdict is what the federation policy says of one host.
type Verdict struct {
	// Severity of the block that applies ("" when none does).
	Severity Severity
	// Domain of the rule that decided: the block, or in allowlist mode
	// the allow (empty when no allow covers the host).
	Domain string
	// NotAllowed: allowlist mode, and no allow covers the host.
	NotAllowed bool
}

// Refused reports whether nothing may federate with the host: it is
// suspended, or not allowed in allowlist mode.
func (v Verdict) Refused() bool { return v.Severity == SeveritySuspend || v.NotAllowed }

// Silenced reports whether the host is silenced (and not refused).
func (v Verdict) Silenced() bool { return v.Severity == SeveritySilence && !v.NotAllowed }

// Why says why a host is refused or silenced, for errors and job reasons.
func (v Verdict) Why() string {
	switch {
	case v.NotAllowed:
		return "not allowed (allowlist mode)"
	case v.Severity == SeveritySuspend:
		return "suspended"
	case v.Severity == SeveritySilence:
		return "silenced"
	}
	return ""
}

// Policy is the operator's federation policy, as pure data: the mode and
// the rules. The most specific block that covers a host decides (a
// silenced subdomain of a suspended domain is silenced), as Mastodon's
// rule_for picks the longest matching domain.
type Policy struct {
	Mode   FederationMode
	blocks []DomainBlock // most specific first
	allows []DomainAllow
}

// NewPolicy builds a policy; an invalid mode is blocklist.
func NewPolicy(mode FederationMode, blocks []DomainBlock, allows []DomainAllow) Policy {
	if !mode.Valid() {
		mode = FederationBlocklist
	}
	bs := append([]DomainBlock(nil), blocks...)
	sort.SliceStable(bs, func(i, j int) bool { return len(bs[i].Domain) > len(bs[j].Domain) })
	return Policy{Mode: mode, blocks: bs, allows: append([]DomainAllow(nil), allows...)}
}

// Of returns the verdict for host.
func (p Policy) Of(host string) Verdict {
	var v Verdict
	for _, b := range p.blocks {
		if DomainCovers(b.Domain, host) {
			v = Verdict{Severity: b.Severity, Domain: b.Domain}
			break
		}
	}
	if p.Mode != FederationAllowlist {
		return v
	}
	for _, a := range p.allows {
		if DomainCovers(a.Domain, host) {
			if v.Domain == "" {
				v.Domain = a.Domain
			}
			return v
		}
	}
	v.NotAllowed = true
	return v
}

// Blocks returns the policy's blocks, most specific first.
func (p Policy) Blocks() []DomainBlock { return append([]DomainBlock(nil), p.blocks...) }

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
