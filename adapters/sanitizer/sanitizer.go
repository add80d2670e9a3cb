package sanitizer

import (
	"html"
	"regexp"

	"github.com/microcosm-cc/bluemonday"

	"github.com/heraldfed/herald/ports"
)

var _ ports.HTMLSanitizer = (*HTMLSanitizer)(nil)

// HTMLSanitizer keeps Mastodon's allowlist (its sanitize_config.rb,
// MASTODON_STRICT, narrowed to the elements of SPEC §10) and drops
// everything else:
//
//   - elements p br span a del pre code em strong b i u ul ol li
//     blockquote; any other tag goes and its text stays, but for the
//     contents of script, style, svg, math and the elements bluemonday
//     drops whole (iframe, object, noscript, title, ...);
//   - a href only as an absolute http(s) URL (a link with any other, or a
//     relative one, becomes its text), and every link gets
//     rel="nofollow noreferrer noopener" and target="_blank" whatever it
//     said (bluemonday's order of the three words);
//   - class on a, span and p only when every class in it is one Mastodon
//     keeps: microformats (h-*, p-*, u-*, dt-*, e-*), mention, hashtag,
//     ellipsis, invisible, quote-inline. Mastodon filters class by class;
//     bluemonday judges the attribute whole, so one unknown class drops
//     them all (never more than Mastodon keeps);
//   - lang anywhere, translate="no" on a and span, start and reversed on
//     ol, value on li, as Mastodon keeps them; no style, no event handler,
//     no other attribute.
//
// Its output is idempotent: sanitizing it again changes nothing. A policy
// is safe for concurrent use once built.
type HTMLSanitizer struct{ policy, strict *bluemonday.Policy }

// microformats matches a class attribute made only of the classes
// Mastodon's ALLOWED_CLASS_TRANSFORMER keeps, separated by whitespace.
var microformats = regexp.MustCompile(`^\s*(?:(?:h|p|u|dt|e)-\S*|mention|hashtag|ellipsis|invisible|quote-inline)(?:\s+(?:(?:h|p|u|dt|e)-\S*|mention|hashtag|ellipsis|invisible|quote-inline))*\s*$`)

var (
	langTag = regexp.MustCompile(`^[a-zA-Z]{2,8}(?:-[a-zA-Z0-9]{1,8})*$`)
	no      = regexp.MustCompile(`^no$`)
	integer = regexp.MustCompile(`^-?[0-9]{1,9}$`)
	empty   = regexp.MustCompile(`^(?:reversed)?$`)
)

// NewHTMLSanitizer builds the policy.
func NewHTMLSanitizer() *HTMLSanitizer {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "span", "a", "del", "pre", "code", "em", "strong", "b", "i", "u", "ul", "ol", "li", "blockquote")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https")
	p.AllowRelativeURLs(false)
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(microformats).OnElements("a", "span", "p")
	p.AllowAttrs("lang").Matching(langTag).Globally()
	p.AllowAttrs("translate").Matching(no).OnElements("a", "span")
	p.AllowAttrs("start").Matching(integer).OnElements("ol")
	p.AllowAttrs("reversed").Matching(empty).OnElements("ol")
	p.AllowAttrs("value").Matching(integer).OnElements("li")
	// Sanitize (the gem Mastodon uses) removes these with their contents;
	// bluemonday already does for script, style, iframe, object and the
	// like.
	p.SkipElementsContent("svg", "math", "xmp", "plaintext")
	// The text of plain-text fields: bluemonday's strict policy keeps no
	// element (and drops the contents of script and style), and escapes
	// what it keeps, which SanitizeText then decodes.
	strict := bluemonday.StrictPolicy()
	strict.SkipElementsContent("svg", "math", "xmp", "plaintext")
	return &HTMLSanitizer{policy: p, strict: strict}
}

// SanitizeHTML implements ports.HTMLSanitizer.
func (s *HTMLSanitizer) SanitizeHTML(html string) string { return s.policy.Sanitize(html) }

// SanitizeText implements ports.HTMLSanitizer.
func (s *HTMLSanitizer) SanitizeText(text string) string {
	return html.UnescapeString(s.strict.Sanitize(text))
}
