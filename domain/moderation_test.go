package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestNormalizeDomain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"Example.COM", "example.com"},
		{" example.com. ", "example.com"},
		{"sub_domain.example", "sub_domain.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1:4000", "127.0.0.1:4000"},
		{"[::1]:4000", "[::1]:4000"},
		{"::1", "::1"},
		{"example.com:8443", "example.com:8443"},
	} {
		if got, err := domain.NormalizeDomain(tt.in); err != nil || got != tt.want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "https://example.com", "example.com/path", "*.example.com", "exa mple.com",
		"-example.com", "example-.com", "example..com", "bücher.example", "example.com:0", "example.com:99999",
		strings.Repeat("a", 64) + ".example", strings.Repeat("a.", 130) + "example"} {
		if got, err := domain.NormalizeDomain(bad); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want ErrInvalidInput", bad, got, err)
		}
	}
}

func TestDomainCovers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d, host string
		want    bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "EXAMPLE.com", true},
		{"example.com", "sub.example.com", true},
		{"example.com", "a.b.example.com:8443", true},
		{"example.com", "example.com.", true},
		// A fully qualified name with a port is the same server: a
		// suspended one must not get past its block by spelling its
		// URLs so.
		{"example.com", "example.com.:443", true},
		{"example.com", "badexample.com", false},
		{"example.com", "example.com.evil.org", false},
		{"example.com", "example.co", false},
		{"127.0.0.1:4000", "127.0.0.1:4000", true},
		{"127.0.0.1:4000", "127.0.0.1:4001", false},
		{"127.0.0.1:4000", "127.0.0.1", false},
		{"127.0.0.1", "127.0.0.1:4000", true},
		{"::1", "[::1]:8080", true},
	} {
		if got := domain.DomainCovers(tt.d, tt.host); got != tt.want {
			t.Errorf("DomainCovers(%q, %q) = %v, want %v", tt.d, tt.host, got, tt.want)
		}
	}
}

func TestCanonicalHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Example.COM": "example.com", "example.com.": "example.com", "example.com.:443": "example.com:443",
		"example.com:443": "example.com:443", "[::1]:80": "[::1]:80",
	} {
		if got := domain.CanonicalHost(in); got != want {
			t.Errorf("CanonicalHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	block := func(d string, s domain.Severity) domain.DomainBlock {
		b, err := domain.NewDomainBlock(d, s, "", now)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	allow := func(d string) domain.DomainAllow {
		a, err := domain.NewDomainAllow(d, now)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	blocks := []domain.DomainBlock{block("bad.example", domain.SeveritySuspend), block("loud.bad.example", domain.SeveritySilence)}
	for _, tt := range []struct {
		name              string
		mode              domain.FederationMode
		host              string
		refused, silenced bool
	}{
		{"unblocked", domain.FederationBlocklist, "good.example", false, false},
		{"suspended", domain.FederationBlocklist, "bad.example", true, false},
		{"a suspended domain's subdomain", domain.FederationBlocklist, "x.bad.example:8443", true, false},
		{"the most specific block decides", domain.FederationBlocklist, "a.loud.bad.example", false, true},
		{"allowlist: not allowed", domain.FederationAllowlist, "other.example", true, false},
		{"allowlist: an allowed domain's subdomain", domain.FederationAllowlist, "sub.good.example", false, false},
		{"allowlist: a block inside an allowed domain", domain.FederationAllowlist, "bad.example", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			allows := []domain.DomainAllow{allow("good.example"), allow("bad.example")}
			v := domain.NewPolicy(tt.mode, blocks, allows).Of(tt.host)
			if v.Refused() != tt.refused || v.Silenced() != tt.silenced {
				t.Fatalf("%+v: refused %v silenced %v, want %v %v", v, v.Refused(), v.Silenced(), tt.refused, tt.silenced)
			}
		})
	}
}

func TestNewReport(t *testing.T) {
	t.Parallel()
	now := time.Now()
	r, err := domain.NewReport("r1", "https://x.example/flags/1", "https://x.example/actor",
		[]string{"https://h.example/users/a", "https://h.example/users/a"}, nil, "  spam  ", now)
	if err != nil || len(r.Targets) != 1 || r.Comment != "spam" || !r.Open() {
		t.Fatalf("%+v %v", r, err)
	}
	many := make([]string, domain.MaxReportURIs+1)
	for i := range many {
		many[i] = "https://h.example/statuses/" + strings.Repeat("x", i+1)
	}
	for name, args := range map[string]struct {
		targets []string
		comment string
	}{
		"names nothing":        {nil, "x"},
		"names too much":       {many, "x"},
		"an oversized comment": {[]string{"https://h.example/users/a"}, strings.Repeat("é", domain.MaxReportComment+1)},
	} {
		if _, err := domain.NewReport("r", "f", "a", args.targets, nil, args.comment, now); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
