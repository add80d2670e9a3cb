package hostile_test

import (
	"html"
	"strings"
	"testing"
)

// payloads are the remote HTML attacks (SPEC §10, HTML): each must come out
// of every API without its active part. Each one's visible text is plain,
// so whatever of it a sanitizer keeps is harmless text.
var payloads = []struct{ name, html string }{
	{"script", `<p>hi</p><script>alert(1)</script>`},
	{"script in mixed case", `<ScRiPt src="https://evil.example/x.js"></sCrIpT>`},
	{"img onerror", `<img src=x onerror=alert(1)>`},
	{"a javascript href", `<a href="javascript:alert(1)">click</a>`},
	{"a javascript href in mixed case", `<a href="JaVaScRiPt:alert(1)">click</a>`},
	{"a javascript href as entities", `<a href="&#106;&#97;vascript&#x3A;alert(1)">click</a>`},
	{"a javascript href split by a tab entity", `<a href="java&#x09;script:alert(1)">click</a>`},
	{"a javascript href after spaces", `<a href="  javascript:alert(1)">click</a>`},
	{"iframe", `<iframe src="https://evil.example/"></iframe>`},
	{"style attribute", `<p style="position:fixed;top:0;left:0">overlay</p>`},
	{"svg onload", `<svg onload=alert(1)></svg>`},
	{"svg slash onload", `<svg/onload=alert(1)>`},
	{"a onclick", `<a href="https://ok.example/" onclick="alert(1)">link</a>`},
	{"handler in upper case", `<p ONMOUSEOVER="alert(1)">hover</p>`},
}

// unsafeMarkup says what in s a browser would run or style: the literal
// strings the rule names (<script, <iframe, javascript:, style=) and, read
// as a browser reads tags (names and attributes case-insensitive, entities
// in attribute values decoded, whitespace inside a URL dropped), script-
// capable elements, on... handlers, style attributes and javascript: URLs.
// Escaped text (&lt;script&gt;) is text, not markup, and passes.
func unsafeMarkup(s string) []string {
	var why []string
	low := strings.ToLower(s)
	for _, bad := range []string{"<script", "<iframe", "javascript:", "style="} {
		if strings.Contains(low, bad) {
			why = append(why, "contains "+bad)
		}
	}
	for _, t := range scanTags(s) {
		if t.closing {
			continue
		}
		switch t.name {
		case "script", "iframe", "frame", "object", "embed", "style":
			why = append(why, "<"+t.name+"> element")
		}
		for _, a := range t.attrs {
			switch {
			case strings.HasPrefix(a.name, "on"):
				why = append(why, "handler "+a.name+" on <"+t.name+">")
			case a.name == "style":
				why = append(why, "style attribute on <"+t.name+">")
			case urlAttributes[a.name] && strings.HasPrefix(strings.ToLower(squeeze(a.value)), "javascript:"):
				why = append(why, a.name+"="+a.value+" on <"+t.name+">")
			}
		}
	}
	return why
}

var urlAttributes = map[string]bool{"href": true, "src": true, "action": true, "formaction": true, "xlink:href": true, "data": true}

// squeeze drops what browsers ignore in a URL: ASCII whitespace and
// control characters.
func squeeze(v string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' {
			return -1
		}
		return r
	}, v)
}

type tag struct {
	name    string
	closing bool // </name>
	attrs   []attr
}

type attr struct{ name, value string }

// scanTags reads the tags of s as an HTML tokenizer does, leniently: a
// tag is "<" and a letter; attributes are separated by whitespace or "/";
// values are quoted or not; entities in values are decoded.
func scanTags(s string) []tag {
	var out []tag
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		j := i + 1
		closing := j < len(s) && s[j] == '/'
		if closing {
			j++
		}
		start := j
		for j < len(s) && (isLetter(s[j]) || (j > start && (isDigit(s[j]) || s[j] == '-' || s[j] == ':'))) {
			j++
		}
		if j == start {
			continue
		}
		t := tag{name: strings.ToLower(s[start:j]), closing: closing}
		for j < len(s) && s[j] != '>' {
			if isSpace(s[j]) || s[j] == '/' {
				j++
				continue
			}
			ns := j
			for j < len(s) && !isSpace(s[j]) && s[j] != '/' && s[j] != '>' && (s[j] != '=' || j == ns) {
				j++
			}
			name := strings.ToLower(s[ns:j])
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			var val string
			if j < len(s) && s[j] == '=' {
				j++
				for j < len(s) && isSpace(s[j]) {
					j++
				}
				if j < len(s) && (s[j] == '"' || s[j] == '\'') {
					q := s[j]
					j++
					vs := j
					for j < len(s) && s[j] != q {
						j++
					}
					val = s[vs:j]
					if j < len(s) {
						j++
					}
				} else {
					vs := j
					for j < len(s) && !isSpace(s[j]) && s[j] != '>' {
						j++
					}
					val = s[vs:j]
				}
			}
			t.attrs = append(t.attrs, attr{name: name, value: html.UnescapeString(val)})
		}
		out = append(out, t)
		i = j
	}
	return out
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// The checker itself: it flags every payload as it arrives (so an API
// that passes remote HTML through fails), and passes what a sanitizer to
// Mastodon's allowlist leaves of them, and escaped text.
func TestUnsafeMarkupFlagsEveryPayload(t *testing.T) {
	t.Parallel()
	for _, p := range payloads {
		if why := unsafeMarkup("<p>marker</p>" + p.html); len(why) == 0 {
			t.Errorf("payload %q is not flagged", p.name)
		}
	}
	for _, safe := range []string{
		`<p>hi</p>`, `<p>click</p>`, `<a href="https://ok.example/" rel="nofollow noopener" target="_blank">link</a>`,
		`<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>`, `<p>overlay</p><p><span class="h-card"><a href="https://x.example/@a" class="u-url mention">@a</a></span></p>`,
		`<p>one = two, on and on</p>`, `x &lt;img src=x&gt;`,
	} {
		if why := unsafeMarkup(safe); len(why) != 0 {
			t.Errorf("safe output %q flagged: %v", safe, why)
		}
	}
}
