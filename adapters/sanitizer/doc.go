// Package sanitizer implements ports.HTMLSanitizer with bluemonday
// (github.com/microcosm-cc/bluemonday, an allowlist sanitizer over
// golang.org/x/net/html, as GoToSocial uses it): remote HTML is cut down to
// Mastodon's allowlist (SPEC §10) before Herald stores or shows it.
package sanitizer
