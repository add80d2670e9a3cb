package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxNameLength is Mastodon's limit for a username.
const MaxNameLength = 30

// NameKind says what holds a name in the single username space.
type NameKind string

const (
	NameKindPersona  NameKind = "persona"
	NameKindGroup    NameKind = "group"
	NameKindInstance NameKind = "instance"
	NameKindSystem   NameKind = "system"
)

// Valid reports whether k is one of the four kinds.
func (k NameKind) Valid() bool {
	switch k {
	case NameKindPersona, NameKindGroup, NameKindInstance, NameKindSystem:
		return true
	}
	return false
}

// ReservedName is one row per taken name. The store's unique index on Name is
// what arbitrates two simultaneous sign-ups; the policy below only rejects
// names early.
type ReservedName struct {
	Name      string // normalized
	Kind      NameKind
	OwnerID   string // avatar, group or instance actor id; empty for system names
	CreatedAt time.Time
	// DeletedAt is when the actor holding the name was deleted (zero while
	// it lives). The reservation outlives its actor for good (SPEC §3, §11):
	// no one can sign up with a deleted persona's name and take over the
	// identity that other servers remember.
	DeletedAt time.Time
}

// Deleted reports whether the actor that held the name was deleted.
func (n ReservedName) Deleted() bool { return !n.DeletedAt.IsZero() }

// NewReservedName normalizes name and checks kind.
func NewReservedName(name string, kind NameKind, ownerID string, now time.Time) (ReservedName, error) {
	n, err := NormalizeName(name)
	if err != nil {
		return ReservedName{}, err
	}
	if !kind.Valid() {
		return ReservedName{}, fmt.Errorf("%w: unknown name kind %q", ErrInvalidInput, kind)
	}
	if kind != NameKindSystem && ownerID == "" {
		return ReservedName{}, fmt.Errorf("%w: a %s name needs an owner", ErrInvalidInput, kind)
	}
	return ReservedName{Name: n, Kind: kind, OwnerID: ownerID, CreatedAt: now.UTC()}, nil
}

// NormalizeName folds ASCII letters to lower case and checks the result
// against [a-z0-9_]{1,30}. Only ASCII is folded on purpose: Unicode folding
// would turn the Kelvin sign into "k" and let look-alike names collide with,
// or impersonate, existing ones.
func NormalizeName(name string) (string, error) {
	s := strings.TrimSpace(name)
	if s == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidName)
	}
	if len(s) > MaxNameLength {
		return "", fmt.Errorf("%w: longer than %d characters", ErrInvalidName, MaxNameLength)
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
		default:
			return "", fmt.Errorf("%w: %q may contain only letters, digits and _", ErrInvalidName, name)
		}
	}
	return string(b), nil
}

// FixedReservedNames can never be taken by a persona or group (SPEC §3).
var fixedReservedNames = []string{
	"admin", "administrator", "root", "support", "abuse", "postmaster",
	"hostmaster", "webmaster", "security", "noreply", "no-reply", "info", "mod",
	"moderator", "staff", "help", "system", "instance", "api", "www",
}

// FixedReservedNames returns a copy of the names that are never available.
// "no-reply" is on the list although it cannot be a valid name; it stays so
// the list reads as docs/rules.md §3 has it, and so that NormalizeName's rules could
// change without the list silently losing an entry.
func FixedReservedNames() []string { return slices.Clone(fixedReservedNames) }

// NamePolicy knows which names are never available: the fixed list, the
// instance actor's own name and any an operator configured.
type NamePolicy struct {
	never map[string]struct{}
}

// NewNamePolicy builds the policy. Extra names are normalized; an invalid one
// is an error so a typo in configuration does not pass silently.
func NewNamePolicy(instanceActor string, extra []string) (NamePolicy, error) {
	p := NamePolicy{never: make(map[string]struct{}, len(fixedReservedNames)+len(extra)+1)}
	for _, n := range fixedReservedNames {
		p.never[n] = struct{}{}
	}
	all := append([]string{instanceActor}, extra...)
	for _, n := range all {
		if strings.TrimSpace(n) == "" {
			continue
		}
		norm, err := NormalizeName(n)
		if err != nil {
			return NamePolicy{}, fmt.Errorf("reserved name %q: %w", n, err)
		}
		p.never[norm] = struct{}{}
	}
	return p, nil
}

// Never reports whether the normalized name can never be taken by a user.
func (p NamePolicy) Never(normalized string) bool {
	_, ok := p.never[normalized]
	return ok
}

// Names returns the never-available names that are valid names, sorted, for
// seeding the registry with system rows ("no-reply" cannot be asked for, so it
// needs no row).
func (p NamePolicy) Names() []string {
	out := make([]string, 0, len(p.never))
	for n := range p.never {
		if _, err := NormalizeName(n); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// CheckUserName normalizes a name a user asked for and refuses the
// never-available ones with ErrNameTaken, as Mastodon answers "taken" for
// reserved names rather than revealing the list.
func (p NamePolicy) CheckUserName(name string) (string, error) {
	n, err := NormalizeName(name)
	if err != nil {
		return "", err
	}
	if p.Never(n) {
		return "", fmt.Errorf("%w: %q is reserved", ErrNameTaken, n)
	}
	return n, nil
}
