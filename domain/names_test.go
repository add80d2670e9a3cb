package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestNormalizeName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		wantErr error
	}{
		{"alice", "alice", nil},
		{"Alice", "alice", nil},
		{"  BOB_42 ", "bob_42", nil},
		{"_", "_", nil},
		{strings.Repeat("a", 30), strings.Repeat("a", 30), nil},
		{strings.Repeat("a", 31), "", domain.ErrInvalidName},
		{"", "", domain.ErrInvalidName},
		{"   ", "", domain.ErrInvalidName},
		{"al ice", "", domain.ErrInvalidName},
		{"al-ice", "", domain.ErrInvalidName},
		{"al.ice", "", domain.ErrInvalidName},
		{"@alice", "", domain.ErrInvalidName},
		{"ålice", "", domain.ErrInvalidName},
		{"\u212Aelvin", "", domain.ErrInvalidName}, // Kelvin sign must not fold to k
		{"alice\x00", "", domain.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NormalizeName(tt.in)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("NormalizeName(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNamePolicy(t *testing.T) {
	t.Parallel()
	p, err := domain.NewNamePolicy("herald_bot", []string{"Ops", "billing"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(domain.FixedReservedNames(), "herald_bot", "ops", "OPS", "billing", "Admin", "WWW") {
		if _, err := p.CheckUserName(name); err == nil {
			t.Errorf("%q should never be available", name)
		} else if !errors.Is(err, domain.ErrNameTaken) && !errors.Is(err, domain.ErrInvalidName) {
			t.Errorf("%q: unexpected error %v", name, err)
		}
	}
	for _, name := range []string{"alice", "admins", "rooty", "helper"} {
		if got, err := p.CheckUserName(name); err != nil || got != name {
			t.Errorf("%q should be available: %q %v", name, got, err)
		}
	}
	if _, err := p.CheckUserName("not valid!"); !errors.Is(err, domain.ErrInvalidName) {
		t.Errorf("invalid name: %v", err)
	}
	for _, n := range p.Names() {
		if _, err := domain.NormalizeName(n); err != nil {
			t.Errorf("Names() returned an invalid name %q", n)
		}
	}
	if _, err := domain.NewNamePolicy("", []string{"bad name"}); !errors.Is(err, domain.ErrInvalidName) {
		t.Errorf("invalid configured name accepted: %v", err)
	}
}

func TestFixedReservedNamesAreSpecs(t *testing.T) {
	t.Parallel()
	want := "admin administrator root support abuse postmaster hostmaster webmaster security noreply no-reply info mod moderator staff help system instance api www"
	if got := strings.Join(domain.FixedReservedNames(), " "); got != want {
		t.Fatalf("fixed list drifted from SPEC §3:\n got %s\nwant %s", got, want)
	}
}

func TestNewReservedName(t *testing.T) {
	t.Parallel()
	now := time.Now()
	if r, err := domain.NewReservedName("Alice", domain.NameKindPersona, "a1", now); err != nil || r.Name != "alice" {
		t.Fatalf("got %+v, %v", r, err)
	}
	if _, err := domain.NewReservedName("alice", "robot", "a1", now); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("bad kind: %v", err)
	}
	if _, err := domain.NewReservedName("alice", domain.NameKindGroup, "", now); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("group without owner: %v", err)
	}
	if _, err := domain.NewReservedName("ops", domain.NameKindSystem, "", now); err != nil {
		t.Fatalf("system name without owner: %v", err)
	}
}
