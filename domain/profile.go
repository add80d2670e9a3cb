package domain

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The limits of a persona's profile, Mastodon's (its Account model
// validates display_name at 30 characters and note at 500), so that a
// client's counter and Herald agree. Characters are Unicode code points,
// as Ruby counts them.
const (
	MaxDisplayNameChars = 30
	MaxBioChars         = 500
)

// CleanDisplayName is a display name as stored: valid UTF-8, one line
// (control characters become spaces: a name is shown on one line, and
// PostgreSQL refuses a NUL), trimmed.
func CleanDisplayName(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// CleanBio is a bio (Mastodon's note) as stored: plain text, valid UTF-8,
// newlines as \n, no control character but newline and tab, trimmed. It
// is rendered to HTML (RenderText) wherever it is shown.
func CleanBio(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// CheckProfile refuses a display name or bio over its limit, naming the
// limit (ErrInvalidInput). Both are checked as stored (after cleaning).
func CheckProfile(displayName, bio string) error {
	if n := utf8.RuneCountInString(displayName); n > MaxDisplayNameChars {
		return fmt.Errorf("%w: the display name is %d characters; the limit is %d", ErrInvalidInput, n, MaxDisplayNameChars)
	}
	if n := utf8.RuneCountInString(bio); n > MaxBioChars {
		return fmt.Errorf("%w: the bio (note) is %d characters; the limit is %d", ErrInvalidInput, n, MaxBioChars)
	}
	return nil
}
