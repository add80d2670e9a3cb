package contract

import (
	"strings"
	"testing"

	"github.com/heraldfed/herald/domain"
)

// coverDomain is one domain the cases of ForeignActorStore.OnDomain and
// JobAdmin.EndDomainJobs try, with what SPEC §11 says of a few hosts.
type coverDomain struct {
	d string
	// pinned are hosts whose answer is stated here, not only computed:
	// should domain.DomainCovers change, the table says so
	// (checkPinned), and the stores are held to it.
	pinned map[string]bool
}

// coverDomains: a name (subdomains covered, any port), a name with a
// LIKE metacharacter in it ('_' is a letter of a domain), IP addresses
// with and without a port (a port: that host:port only), IPv6.
var coverDomains = []coverDomain{
	{"example.com", map[string]bool{
		"example.com": true, "sub.example.com": true, "a.b.example.com": true, "example.com:8443": true,
		"sub.example.com:443": true, "EXAMPLE.COM": true, "Sub.Example.Com:80": true, "example.com.": true,
		"badexample.com": false, "example.com.evil.org": false, "examplexcom": false, "sub.examplexcom": false,
		"xample.com": false, "example.co": false, "evil.org:example.com": false, "example.com.evil.org:443": false,
		// A newline is a byte as any other (no URL has one, but a store
		// must not read its host as two lines).
		"example.com\n": false, "sub\n.example.com": true, "example.com\n:443": false,
	}},
	{"a_b.example", map[string]bool{
		"a_b.example": true, "x.a_b.example": true, "axb.example": false, "x.axb.example": false, "a%b.example": false,
	}},
	{"127.0.0.1:4000", map[string]bool{
		"127.0.0.1:4000": true, "127.0.0.1": false, "127.0.0.1:40001": false, "127.0.0.1:400": false,
		"127.0.0.1:4001": false, "x.127.0.0.1:4000": false, "127x0x0x1:4000": false,
	}},
	{"127.0.0.1", map[string]bool{
		"127.0.0.1": true, "127.0.0.1:4000": true, "127.0.0.10": false, "1127.0.0.1": false,
		"127.0.0.1.evil.org": false, "127x0x0x1": false,
	}},
	{"::1", map[string]bool{"[::1]:8080": true, "[::1]": true, "::1": true, "[::2]:8080": false, "[::11]:80": false}},
	{"[::1]:4000", map[string]bool{"[::1]:4000": true, "[::1]:40000": false, "[::1]": false, "::1": false}},
}

// coverHosts are the hosts tried against every domain: each domain's
// pinned hosts, and for each domain the product of a few prefixes, of
// the domain itself spelled a few ways and of a few suffixes, which walks
// every form ports.CheckDomain's comment names (brackets and colons
// where a URL has them and where it has not) around the domain and
// around near misses of it (its dots as any other byte, one byte more).
func coverHosts() []string {
	prefixes := []string{"", "sub.", "x", "[", "x:", "x:a.", "[x]:", "[x]:a.", "a]b."}
	suffixes := []string{"", ".", ":8443", "]", "]:80", ":80:90", ".:443", "].", ".evil.org"}
	seen := map[string]bool{}
	var out []string
	add := func(h string) {
		// Every writer drops a name's trailing dot before its port
		// (domain.CanonicalHost), so a store holds no such form.
		if strings.ToLower(h) != domain.CanonicalHost(h) && strings.Contains(h, ".:") {
			return
		}
		if h != "" && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	for _, cd := range coverDomains {
		for h := range cd.pinned {
			add(h)
		}
		cores := []string{cd.d, strings.ToUpper(cd.d), strings.ReplaceAll(cd.d, ".", "x"), cd.d + "m"}
		for _, p := range prefixes {
			for _, c := range cores {
				for _, s := range suffixes {
					add(p + c + s)
				}
			}
		}
	}
	return out
}

// checkPinned fails when domain.DomainCovers disagrees with a pinned
// answer: the table, not a store, is then out of date.
func checkPinned(t *testing.T) {
	t.Helper()
	for _, cd := range coverDomains {
		if _, err := domain.NormalizeDomain(cd.d); err != nil {
			t.Fatalf("domain %q of the table: %v", cd.d, err)
		}
		for h, want := range cd.pinned {
			if got := domain.DomainCovers(cd.d, h); got != want {
				t.Fatalf("domain.DomainCovers(%q, %q) = %v; the table says %v", cd.d, h, got, want)
			}
		}
	}
}

// notDomains are strings a store must refuse as a domain
// (domain.ErrInvalidInput): not normalized, or not one at all.
var notDomains = []string{"", "Example.com", "example.com.", " example.com", "https://example.com", "*.example.com", "[::1]"}
