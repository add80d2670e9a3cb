package domain

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OAuth 2 errors of the Mastodon-compatible client API, named for the
// error codes of RFC 6749 §5.2 that the token endpoint answers with.
var (
	// ErrInvalidClient: unknown client id, or a wrong client secret.
	ErrInvalidClient = errors.New("invalid_client")
	// ErrInvalidGrant: an authorization code that is unknown, expired,
	// already used, issued to another client or redirect URI, or whose
	// PKCE verifier does not match.
	ErrInvalidGrant = errors.New("invalid_grant")
	// ErrInvalidScope: a scope that is unknown or beyond what the
	// application registered.
	ErrInvalidScope = errors.New("invalid_scope")
	// ErrUnsupportedGrantType: a grant other than authorization_code and
	// client_credentials.
	ErrUnsupportedGrantType = errors.New("unsupported_grant_type")
	// ErrInvalidRedirectURI: a redirect URI the application did not
	// register (never redirected to: shown to the person instead).
	ErrInvalidRedirectURI = errors.New("invalid redirect_uri")
	// ErrInsufficientScope: the token lacks the scope an endpoint needs.
	ErrInsufficientScope = errors.New("this action is outside the authorized scopes")
)

// OutOfBand is the redirect URI that asks the authorization page to show
// the code instead of redirecting (Mastodon's, from RFC 6749's drafts).
const OutOfBand = "urn:ietf:wg:oauth:2.0:oob"

// Lifetimes of what the authorization flow hands out (Mastodon's code
// lives 10 minutes).
const (
	OAuthCodeTTL    = 10 * time.Minute
	OAuthConsentTTL = 10 * time.Minute
)

// Limits on what an application registers.
const (
	MaxAppNameLength   = 200
	MaxRedirectURIs    = 10
	MaxRedirectURILen  = 2000
	MaxAppWebsiteLen   = 2000
	maxScopeListLength = 64
)

// The scopes of Mastodon's API (docs.joinmastodon.org/api/oauth-scopes):
// the three top-level ones, "push" and "profile", and the granular ones
// each top-level scope grants. admin:* scopes are not offered.
var (
	readScopes = []string{"read:accounts", "read:blocks", "read:bookmarks", "read:favourites", "read:filters",
		"read:follows", "read:lists", "read:mutes", "read:notifications", "read:search", "read:statuses"}
	writeScopes = []string{"write:accounts", "write:blocks", "write:bookmarks", "write:conversations", "write:favourites",
		"write:filters", "write:follows", "write:lists", "write:media", "write:mutes", "write:notifications",
		"write:reports", "write:statuses"}
	// followScopes is what the deprecated "follow" grants.
	followScopes = []string{"read:blocks", "write:blocks", "read:follows", "write:follows", "read:mutes", "write:mutes"}
)

// KnownScope reports whether s is a scope Herald grants.
func KnownScope(s string) bool {
	switch s {
	case "read", "write", "follow", "push", "profile":
		return true
	}
	return slices.Contains(readScopes, s) || slices.Contains(writeScopes, s)
}

// Scopes is a set of OAuth scopes: sorted, distinct, each known.
type Scopes []string

// ParseScopes reads a scope list as Mastodon takes it: separated by
// spaces (or by '+', as some clients leave them in a query), empty for
// def. An unknown scope is ErrInvalidScope.
func ParseScopes(s, def string) (Scopes, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '+' || r == '\t' || r == '\n' })
	if len(fields) == 0 {
		fields = strings.Fields(def)
	}
	if len(fields) > maxScopeListLength {
		return nil, fmt.Errorf("%w: more than %d scopes", ErrInvalidScope, maxScopeListLength)
	}
	out := make(Scopes, 0, len(fields))
	for _, f := range fields {
		if !KnownScope(f) {
			return nil, fmt.Errorf("%w: unknown scope %q", ErrInvalidScope, clipText(f, 64))
		}
		out = append(out, f)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// String is the space-separated list OAuth answers carry.
func (s Scopes) String() string { return strings.Join(s, " ") }

// Grants reports whether the set allows what needs (one scope, granular
// or not): a scope grants itself; "read" and "write" grant their granular
// scopes; "follow" grants the follows', blocks' and mutes' ones; "profile"
// is granted by read and read:accounts (it is only verify_credentials).
func (s Scopes) Grants(needs string) bool {
	for _, have := range s {
		switch {
		case have == needs:
			return true
		case have == "read" && strings.HasPrefix(needs, "read:"),
			have == "write" && strings.HasPrefix(needs, "write:"),
			have == "follow" && slices.Contains(followScopes, needs),
			needs == "profile" && (have == "read" || have == "read:accounts"):
			return true
		}
	}
	return false
}

// Within reports whether every scope of s is granted by of: a token may
// ask for the application's scopes or fewer, never more.
func (s Scopes) Within(of Scopes) bool {
	for _, x := range s {
		if !of.Grants(x) {
			return false
		}
	}
	return true
}

// OAuthApp is a client application registered through POST /api/v1/apps.
// Its client id is public; its secret is stored only as a hash.
type OAuthApp struct {
	ID           string
	ClientID     string // unique
	SecretHash   string // HashToken of the client secret
	Name         string
	Website      string
	RedirectURIs []string
	Scopes       Scopes
	CreatedAt    time.Time
}

// NewOAuthApp validates an application: a name, at least one redirect URI
// (absolute, without a fragment, or OutOfBand), known scopes.
func NewOAuthApp(id, clientID, secretHash, name, website string, redirectURIs []string, scopes Scopes, now time.Time) (OAuthApp, error) {
	name = strings.TrimSpace(name)
	switch {
	case id == "" || clientID == "" || secretHash == "":
		return OAuthApp{}, fmt.Errorf("%w: an application needs an id, a client id and a secret", ErrInvalidInput)
	case name == "":
		return OAuthApp{}, fmt.Errorf("%w: client_name is missing", ErrInvalidInput)
	case len(name) > MaxAppNameLength:
		return OAuthApp{}, fmt.Errorf("%w: client_name is longer than %d bytes", ErrInvalidInput, MaxAppNameLength)
	case len(website) > MaxAppWebsiteLen:
		return OAuthApp{}, fmt.Errorf("%w: website is longer than %d bytes", ErrInvalidInput, MaxAppWebsiteLen)
	case len(scopes) == 0:
		return OAuthApp{}, fmt.Errorf("%w: no scope", ErrInvalidScope)
	}
	if website != "" {
		if u, err := url.Parse(website); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return OAuthApp{}, fmt.Errorf("%w: website is not an http(s) URL", ErrInvalidInput)
		}
	}
	uris, err := checkRedirectURIs(redirectURIs)
	if err != nil {
		return OAuthApp{}, err
	}
	for _, s := range scopes {
		if !KnownScope(s) {
			return OAuthApp{}, fmt.Errorf("%w: unknown scope %q", ErrInvalidScope, clipText(s, 64))
		}
	}
	return OAuthApp{ID: id, ClientID: clientID, SecretHash: secretHash, Name: name, Website: website,
		RedirectURIs: uris, Scopes: scopes, CreatedAt: now.UTC()}, nil
}

func checkRedirectURIs(in []string) ([]string, error) {
	var out []string
	for _, u := range in {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: redirect_uris is missing", ErrInvalidInput)
	}
	if len(out) > MaxRedirectURIs {
		return nil, fmt.Errorf("%w: more than %d redirect URIs", ErrInvalidInput, MaxRedirectURIs)
	}
	for _, raw := range out {
		if raw == OutOfBand {
			continue
		}
		u, err := url.Parse(raw)
		if len(raw) > MaxRedirectURILen || err != nil || u.Scheme == "" || u.Fragment != "" {
			return nil, fmt.Errorf("%w: redirect URI %q is not an absolute URI without a fragment", ErrInvalidInput, clipText(raw, 100))
		}
		if s := strings.ToLower(u.Scheme); s == "javascript" || s == "data" || s == "vbscript" || s == "file" {
			return nil, fmt.Errorf("%w: redirect URI scheme %q is not allowed", ErrInvalidInput, s)
		}
	}
	return out, nil
}

// Redirects reports whether uri is one of the application's redirect
// URIs, compared exactly (RFC 6749 §3.1.2.3 with registered URIs: no
// prefix or pattern matching).
func (a OAuthApp) Redirects(uri string) bool { return slices.Contains(a.RedirectURIs, uri) }

// CheckSecret compares a presented client secret with the stored hash in
// constant time; ErrInvalidClient when it differs.
func (a OAuthApp) CheckSecret(secret string) error {
	if secret == "" || subtle.ConstantTimeCompare([]byte(HashToken(secret)), []byte(a.SecretHash)) != 1 {
		return ErrInvalidClient
	}
	return nil
}

// GrantKind tells the short-lived grants of the authorization page apart.
type GrantKind string

const (
	// GrantConsent is a signed-in person's pending consent: issued when
	// the password was right, spent when a persona is chosen.
	GrantConsent GrantKind = "consent"
	// GrantCode is an authorization code, spent at the token endpoint.
	GrantCode GrantKind = "code"
)

// OAuthGrant is a one-time grant of the authorization flow, stored by the
// hash of its secret: single use (UsedAt is set by the first use),
// expiring, bound to its client, redirect URI, scopes and PKCE challenge.
type OAuthGrant struct {
	Hash        string
	Kind        GrantKind
	ClientID    string
	UserID      string
	AvatarID    string // empty for a consent grant: the persona is chosen with it
	RedirectURI string
	Scopes      Scopes
	// Challenge and ChallengeMethod are PKCE's (RFC 7636); empty when the
	// client sent none.
	Challenge       string
	ChallengeMethod string
	CreatedAt       time.Time
	ExpiresAt       time.Time
	UsedAt          time.Time
}

// Check validates a grant before it is stored.
func (g OAuthGrant) Check() error {
	switch {
	case g.Hash == "" || g.ClientID == "" || g.UserID == "" || g.RedirectURI == "":
		return fmt.Errorf("%w: a grant needs a hash, a client, a user and a redirect URI", ErrInvalidInput)
	case g.Kind != GrantConsent && g.Kind != GrantCode:
		return fmt.Errorf("%w: grant kind %q", ErrInvalidInput, g.Kind)
	case g.Kind == GrantCode && g.AvatarID == "":
		return fmt.Errorf("%w: an authorization code needs a persona", ErrInvalidInput)
	case !g.ExpiresAt.After(g.CreatedAt):
		return fmt.Errorf("%w: a grant must expire after it is made", ErrInvalidInput)
	}
	return nil
}

// Expired reports whether the grant can no longer be used at now.
func (g OAuthGrant) Expired(now time.Time) bool { return !now.Before(g.ExpiresAt) }

// PKCE methods: Herald takes S256 only. "plain" protects nothing a
// stolen code does not already carry, and OAuth 2.1 drops it.
const PKCES256 = "S256"

// CheckPKCEChallenge validates what /oauth/authorize received: none at
// all, or an S256 challenge of 43 base64url characters (a SHA-256).
func CheckPKCEChallenge(challenge, method string) error {
	if challenge == "" && method == "" {
		return nil
	}
	if method != PKCES256 {
		return fmt.Errorf("%w: code_challenge_method must be S256", ErrInvalidInput)
	}
	if b, err := base64.RawURLEncoding.DecodeString(challenge); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("%w: code_challenge is not a base64url SHA-256", ErrInvalidInput)
	}
	return nil
}

// VerifyPKCE checks a code's verifier against its challenge (RFC 7636
// §4.6); a code issued with a challenge needs the verifier, and a
// verifier sent for a code issued without one is refused too.
func (g OAuthGrant) VerifyPKCE(verifier string) error {
	if g.Challenge == "" {
		if verifier != "" {
			return fmt.Errorf("%w: code_verifier sent for a code issued without a challenge", ErrInvalidGrant)
		}
		return nil
	}
	if len(verifier) < 43 || len(verifier) > 128 {
		return fmt.Errorf("%w: code_verifier must be 43 to 128 characters", ErrInvalidGrant)
	}
	sum := sha256.Sum256([]byte(verifier))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(g.Challenge)) != 1 {
		return fmt.Errorf("%w: code_verifier does not match the code_challenge", ErrInvalidGrant)
	}
	return nil
}

// OAuthToken is an access token of the client API, stored as a hash. A
// user token acts as exactly one persona (AvatarID); a client-credentials
// token has neither user nor persona and reads only public data.
type OAuthToken struct {
	Hash      string
	ClientID  string
	UserID    string
	AvatarID  string
	Scopes    Scopes
	GrantHash string // the authorization code it was issued for, if any
	CreatedAt time.Time
}

// Check validates a token before it is stored.
func (t OAuthToken) Check() error {
	switch {
	case t.Hash == "" || t.ClientID == "":
		return fmt.Errorf("%w: a token needs a hash and a client", ErrInvalidInput)
	case (t.UserID == "") != (t.AvatarID == ""):
		return fmt.Errorf("%w: a user token needs both its user and its persona", ErrInvalidInput)
	case len(t.Scopes) == 0:
		return fmt.Errorf("%w: a token needs a scope", ErrInvalidInput)
	}
	return nil
}
