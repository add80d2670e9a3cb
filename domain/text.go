package domain

import (
	"html"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MentionLink is an actor a local post mentions, as its text names it:
// @User@Host, or @User alone for an actor of this instance.
type MentionLink struct {
	User string // the actor's preferredUsername
	Host string // the host of its handle, with the port when it has one
	Href string // where the mention links: the actor URI
	// Local marks an actor of this instance, which @User alone names too.
	Local bool
}

// linkAttrs are the attributes of every link Herald writes, in the order
// the HTML sanitizer writes them, so that rendered text passes it
// unchanged: no referrer, no opener, no SEO credit, a new tab.
const linkAttrs = ` rel="nofollow noreferrer noopener" target="_blank"`

// RenderText turns the plain text of a local post into the HTML Herald
// stores and federates (SPEC §10: local posts are written as plain text):
// every character escaped; a blank line starts a paragraph (<p>), a single
// newline is a <br>; http(s) URLs are linked, without the punctuation that
// ends a sentence or an unbalanced closing bracket; @user@host (or @user
// for a local actor) is linked as Mastodon links a mention when mentions
// holds that actor, and stays text otherwise. The output is made of the
// markup the HTML sanitizer keeps, written as it writes it, so sanitizing
// it changes nothing.
func RenderText(text string, mentions []MentionLink) string {
	return RenderPost(text, mentions, nil)
}

// RenderPost is RenderText that links hashtags too: #tag (as Hashtags
// finds them) becomes a link to tagURL of its normalized name, written as
// Mastodon writes one (class "mention hashtag", the name in a span). With
// a nil tagURL hashtags stay text.
func RenderPost(text string, mentions []MentionLink, tagURL func(tag string) string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var b strings.Builder
	open := false // inside a paragraph
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			if open {
				b.WriteString("</p>")
				open = false
			}
			continue
		}
		if open {
			b.WriteString("<br>")
		} else {
			b.WriteString("<p>")
			open = true
		}
		renderLine(&b, line, mentions, tagURL)
	}
	if open {
		b.WriteString("</p>")
	}
	return b.String()
}

// renderLine writes one line: text escaped, URLs and known mentions linked.
func renderLine(b *strings.Builder, line string, mentions []MentionLink, tagURL func(string) string) {
	plain := 0 // start of the text not yet written
	for i := 0; i < len(line); {
		prev, _ := utf8.DecodeLastRuneInString(line[:i])
		if i == 0 || !isWordRune(prev) {
			if n, href := urlAt(line[i:]); n > 0 {
				b.WriteString(html.EscapeString(line[plain:i]))
				b.WriteString(`<a href="` + html.EscapeString(href) + `"` + linkAttrs + `>` + html.EscapeString(line[i:i+n]) + `</a>`)
				i += n
				plain = i
				continue
			}
		}
		if line[i] == '@' && (i == 0 || !isWordRune(prev) && prev != '/' && prev != '=' && prev != '@') {
			if n, m, href := mentionAt(line[i:], mentions); n > 0 {
				b.WriteString(html.EscapeString(line[plain:i]))
				b.WriteString(`<span class="h-card"><a href="` + html.EscapeString(href) + `" class="u-url mention"` + linkAttrs +
					`>@<span>` + html.EscapeString(m.User) + `</span></a></span>`)
				i += n
				plain = i
				continue
			}
		}
		if line[i] == '#' && tagURL != nil && (i == 0 || hashtagMayFollow(prev)) {
			if n, tag := hashtagAt(line[i:]); n > 0 {
				if href, err := url.Parse(tagURL(tag)); err == nil && (href.Scheme == "http" || href.Scheme == "https") {
					b.WriteString(html.EscapeString(line[plain:i]))
					b.WriteString(`<a href="` + html.EscapeString(href.String()) + `" class="mention hashtag"` + linkAttrs +
						`>#<span>` + html.EscapeString(line[i+1:i+n]) + `</span></a>`)
					i += n
					plain = i
					continue
				}
			}
		}
		_, size := utf8.DecodeRuneInString(line[i:])
		i += size
	}
	b.WriteString(html.EscapeString(line[plain:]))
}

// hashtagMayFollow: a hashtag starts after a space or punctuation, not
// inside a word, a URL's path or fragment, or an entity ("&#233;").
func hashtagMayFollow(prev rune) bool {
	return !isWordRune(prev) && !unicode.IsMark(prev) && !strings.ContainsRune("/=)#&", prev)
}

// hashtagAt returns the length of the hashtag s starts with ("#tag") and
// its normalized name (NormalizeHashtag); 0 when s starts with none.
func hashtagAt(s string) (int, string) {
	body := runOf(s[1:], hashtagRune)
	if body == "" {
		return 0, ""
	}
	tag := NormalizeHashtag(body)
	if tag == "" {
		return 0, ""
	}
	return 1 + len(body), tag
}

// Hashtags returns the hashtags of a post's plain text as RenderPost links
// them: normalized, distinct, in order of appearance, at most MaxHashtags.
func Hashtags(text string) []string {
	var out []string
	for _, line := range strings.Split(strings.ToValidUTF8(text, "\uFFFD"), "\n") {
		for i := 0; i < len(line); {
			prev, _ := utf8.DecodeLastRuneInString(line[:i])
			if line[i] == '#' && (i == 0 || hashtagMayFollow(prev)) {
				if n, tag := hashtagAt(line[i:]); n > 0 {
					out = append(out, tag)
					i += n
					continue
				}
			}
			if i == 0 || !isWordRune(prev) {
				if n, _ := urlAt(line[i:]); n > 0 {
					i += n // a fragment (#section) of a URL is no hashtag
					continue
				}
			}
			_, size := utf8.DecodeRuneInString(line[i:])
			i += size
		}
	}
	return normalizeHashtags(out)
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// urlAt returns the length of the http(s) URL that s starts with, and the
// URL as a link's href (as net/url writes it, which is how the sanitizer
// writes an href back); 0 if s starts with none.
func urlAt(s string) (int, string) {
	scheme := ""
	for _, p := range []string{"https://", "http://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			scheme = p
			break
		}
	}
	if scheme == "" {
		return 0, ""
	}
	end := strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '<' || r == '>' || r == '"' || r == utf8.RuneError
	})
	if end < 0 {
		end = len(s)
	}
	raw := trimURL(s[:end])
	if len(raw) <= len(scheme) {
		return 0, ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, ""
	}
	return len(raw), u.String()
}

// trimURL drops what ends a sentence rather than the URL: trailing
// punctuation and quotes, and a closing bracket with no opening one in
// the URL ("(see https://e.example/a)").
func trimURL(s string) string {
	for len(s) > 0 {
		last := s[len(s)-1]
		switch {
		case strings.IndexByte(".,:;!?'*", last) >= 0:
		case last == ')' && strings.Count(s, "(") < strings.Count(s, ")"):
		case last == ']' && strings.Count(s, "[") < strings.Count(s, "]"):
		case last == '}' && strings.Count(s, "{") < strings.Count(s, "}"):
		default:
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}

// mentionAt returns the length of the mention s starts with ("@user",
// "@user@host", "@user@host:port"), the actor it names and the href of its
// link; 0 when s names no actor of mentions (or its actor URI is not an
// http(s) URL).
func mentionAt(s string, mentions []MentionLink) (int, MentionLink, string) {
	user := strings.TrimRight(runOf(s[1:], func(r rune) bool { return isWordRune(r) || r == '.' || r == '-' }), ".-")
	if user == "" {
		return 0, MentionLink{}, ""
	}
	n, host := 1+len(user), ""
	if rest := s[n:]; strings.HasPrefix(rest, "@") {
		host = runOf(rest[1:], func(r rune) bool { return isWordRune(r) || r == '.' || r == '-' })
		if after, ok := strings.CutPrefix(rest[1+len(host):], ":"); ok {
			if port := runOf(after, func(r rune) bool { return r >= '0' && r <= '9' }); port != "" {
				host += ":" + port
			}
		}
		host = strings.TrimRight(host, ".-")
	}
	for _, m := range mentions {
		if !strings.EqualFold(m.User, user) {
			continue
		}
		if host == "" && !m.Local || host != "" && !strings.EqualFold(m.Host, host) {
			continue
		}
		u, err := url.Parse(m.Href)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return 0, MentionLink{}, ""
		}
		if host != "" {
			n += 1 + len(host)
		}
		return n, m, u.String()
	}
	return 0, MentionLink{}, ""
}

// runOf is the longest prefix of s whose runes all satisfy ok.
func runOf(s string, ok func(rune) bool) string {
	if i := strings.IndexFunc(s, func(r rune) bool { return !ok(r) }); i >= 0 {
		return s[:i]
	}
	return s
}
