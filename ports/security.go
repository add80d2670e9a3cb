package ports

import "github.com/heraldfed/herald/domain"

// PasswordHasher hashes and checks login passwords.
type PasswordHasher interface {
	Hash(password string) (string, error)
	// Verify returns domain.ErrUnauthorized when password does not match.
	Verify(hash, password string) error
}

// KeyGenerator makes an actor's RSA-2048 key pair. Injected because a real
// key takes tens of milliseconds and tests make hundreds.
type KeyGenerator interface {
	GenerateKeyPair() (domain.KeyPair, error)
}

// HTMLSanitizer cleans HTML that came from another server down to the
// markup Herald shows (SPEC §10: Mastodon's allowlist, href only http(s),
// class only the microformats Mastodon keeps). It is idempotent:
// sanitizing its own output changes nothing. A well-kept library does the
// work; Herald writes no HTML parsing of its own.
type HTMLSanitizer interface {
	SanitizeHTML(html string) string
	// SanitizeText is the text a reader sees of s, for the fields that
	// are plain text (a content warning, alt text, a poll option): every
	// tag removed (the contents of script and style with it), entities
	// decoded. Whoever shows it escapes it.
	SanitizeText(s string) string
}
