package sanitizer_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/domain"
)

// What no sanitized output may hold, whatever came in.
var (
	eventHandler = regexp.MustCompile(`(?i)[\s/"']on[a-z]+\s*=`)
	forbidden    = []string{"<script", "javascript:", "vbscript:", "data:", "<iframe", "style=", "<style", "<svg", "<img",
		"<object", "<embed", "<form", "<input", "<meta", "<base", "<math", "<!--", "srcdoc", "formaction"}
)

func TestSanitizeHTMLRefusesXSS(t *testing.T) {
	t.Parallel()
	s := sanitizer.NewHTMLSanitizer()
	for _, tt := range []struct{ name, in, want string }{
		{"script", `<script>alert(1)</script>`, ``},
		{"script in text", `a<script>alert(1)</script>b`, `ab`},
		{"script with src, upper case", `<SCRIPT SRC=//evil.example/x.js></SCRIPT>hi`, `hi`},
		{"nested script trick", `<scr<script>ipt>alert(1)</script>`, `ipt&gt;alert(1)`},
		{"doubled brackets", `<<script>script>alert(1)<</script>/script>`, `&lt;/script&gt;`},
		{"img onerror", `<img src=x onerror=alert(1)>`, ``},
		{"img javascript src", `<img src="javascript:alert(1)">`, ``},
		{"svg onload", `<svg onload=alert(1)><circle r="1"/></svg>after`, `after`},
		{"svg script", `<svg><script>alert(1)</script><text>t</text></svg>`, ``},
		{"javascript href", `<a href="javascript:alert(1)">x</a>`, `x`},
		{"mixed case javascript href", `<a href="JaVaScRiPt:alert(1)">x</a>`, `x`},
		{"leading space javascript href", `<a href=" javascript:alert(1)">x</a>`, `x`},
		{"decimal entity javascript href", `<a href="&#106;avascript:alert(1)">x</a>`, `x`},
		{"hex entity javascript href", `<a href="&#x6A;&#x61;vascript&#58;alert(1)">x</a>`, `x`},
		{"tab inside javascript href", `<a href="java&#x09;script:alert(1)">x</a>`, `x`},
		{"newline inside javascript href", "<a href=\"java\nscript:alert(1)\">x</a>", `x`},
		{"data href", `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`, `x`},
		{"vbscript href", `<a href="VBScript:msgbox(1)">x</a>`, `x`},
		{"relative href", `<a href="/users/alice">x</a>`, `x`},
		{"protocol-relative href", `<a href="//evil.example/x">x</a>`, `x`},
		{"event handlers on a link", `<a href="https://ok.example/" onclick="alert(1)" onmouseover=alert(1)>x</a>`,
			`<a href="https://ok.example/" rel="nofollow noreferrer noopener" target="_blank">x</a>`},
		{"handler on an unknown element", `<div onclick="alert(1)">text</div>`, `text`},
		{"iframe", `<iframe src="https://evil.example/"></iframe>x`, `x`},
		{"iframe srcdoc", `<iframe srcdoc="<script>alert(1)</script>">fallback</iframe>`, ``},
		{"style attribute", `<p style="background:url(javascript:alert(1))">x</p>`, `<p>x</p>`},
		{"style attribute on a link", `<a href="https://ok.example/" style="position:fixed">x</a>`,
			`<a href="https://ok.example/" rel="nofollow noreferrer noopener" target="_blank">x</a>`},
		{"style element", `<style>p{color:red}</style>x`, `x`},
		{"object and embed", `<object data="x.swf"><param name="a" value="b"></object><embed src="x.swf">x`, `x`},
		{"form", `<form action="https://evil.example/"><input name="pw"><button formaction="javascript:alert(1)">go</button></form>`, `go`},
		{"meta refresh", `<meta http-equiv="refresh" content="0;url=javascript:alert(1)">x`, `x`},
		{"base", `<base href="javascript:/">x`, `x`},
		{"comment", `<!--<script>alert(1)</script>-->x`, `x`},
		{"noscript mXSS", `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`, `&#34;&gt;`},
		{"math mXSS", `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`, ``},
		{"unclosed tags", `<p><b>bold <a href="https://ok.example/">link`,
			`<p><b>bold <a href="https://ok.example/" rel="nofollow noreferrer noopener" target="_blank">link`},
		{"unclosed attribute", `<a href="https://ok.example/ onclick=alert(1)>x`, ``},
		{"class with an unknown class", `<span class="h-card evil">x</span>`, `<span>x</span>`},
		{"class on an element Mastodon keeps none on", `<em class="mention">x</em>`, `<em>x</em>`},
		{"rel and target from the sender", `<a href="https://ok.example/" rel="opener" target="_self">x</a>`,
			`<a href="https://ok.example/" rel="nofollow noreferrer noopener" target="_blank">x</a>`},
		{"id and data attributes", `<p id="x" data-x="1" title="t">x</p>`, `<p>x</p>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := s.SanitizeHTML(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeHTML(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
			check(t, s, got)
		})
	}
}

// Markup Mastodon and GoToSocial send survives as Mastodon keeps it.
func TestSanitizeHTMLKeepsMastodonMarkup(t *testing.T) {
	t.Parallel()
	s := sanitizer.NewHTMLSanitizer()
	const rel = ` rel="nofollow noreferrer noopener" target="_blank"`
	for _, tt := range []struct{ name, in, want string }{
		{"Mastodon mention",
			`<p><span class="h-card" translate="no"><a href="https://m.example/@bob" class="u-url mention">@<span>bob</span></a></span> hi</p>`,
			`<p><span class="h-card" translate="no"><a href="https://m.example/@bob" class="u-url mention"` + rel + `>@<span>bob</span></a></span> hi</p>`},
		{"GoToSocial mention",
			`<p><span class="h-card"><a href="https://gts.example/@ann" class="mention" rel="nofollow noreferrer noopener" target="_blank">@<span>ann</span></a></span></p>`,
			`<p><span class="h-card"><a href="https://gts.example/@ann" class="mention"` + rel + `>@<span>ann</span></a></span></p>`},
		{"hashtag",
			`<a href="https://m.example/tags/go" class="mention hashtag" rel="tag">#<span>go</span></a>`,
			`<a href="https://m.example/tags/go" class="mention hashtag"` + rel + `>#<span>go</span></a>`},
		{"shortened link",
			`<a href="https://e.example/a/long/path" rel="nofollow noopener" translate="no" target="_blank"><span class="invisible">https://</span><span class="ellipsis">e.example/a/lo</span><span class="invisible">ng/path</span></a>`,
			`<a href="https://e.example/a/long/path" translate="no"` + rel + `><span class="invisible">https://</span><span class="ellipsis">e.example/a/lo</span><span class="invisible">ng/path</span></a>`},
		{"paragraphs and breaks", `<p>one<br>two</p><p>three</p>`, `<p>one<br>two</p><p>three</p>`},
		{"code", `<pre><code>x := 1 &lt;&lt; 2 &amp;&amp; y</code></pre><p>use <code>go vet</code></p>`,
			`<pre><code>x := 1 &lt;&lt; 2 &amp;&amp; y</code></pre><p>use <code>go vet</code></p>`},
		{"inline formatting", `<p><em>a</em> <strong>b</strong> <b>c</b> <i>d</i> <u>e</u> <del>f</del></p>`,
			`<p><em>a</em> <strong>b</strong> <b>c</b> <i>d</i> <u>e</u> <del>f</del></p>`},
		{"lists and quotes", `<blockquote><ol start="3" reversed><li value="5">x</li></ol><ul><li>y</li></ul></blockquote>`,
			`<blockquote><ol start="3" reversed=""><li value="5">x</li></ol><ul><li>y</li></ul></blockquote>`},
		{"lang", `<p lang="fr-CA">bonjour</p>`, `<p lang="fr-CA">bonjour</p>`},
		{"quote-inline", `<p class="quote-inline">RE: <a href="https://m.example/n/1">x</a></p>`,
			`<p class="quote-inline">RE: <a href="https://m.example/n/1"` + rel + `>x</a></p>`},
		{"microformats", `<span class="h-entry p-name dt-published e-content u-photo">x</span>`,
			`<span class="h-entry p-name dt-published e-content u-photo">x</span>`},
		{"heading becomes text", `<h1>Title</h1><p>body</p>`, `Title<p>body</p>`},
		{"entities and text", `<p>Tom &amp; Jerry &lt;3 "quoted" 'single' &eacute;</p>`,
			`<p>Tom &amp; Jerry &lt;3 &#34;quoted&#34; &#39;single&#39; é</p>`},
		{"query string and non-ASCII path", `<a href="https://e.example/ü?a=1&amp;b=2">l</a>`,
			`<a href="https://e.example/%C3%BC?a=1&amp;b=2"` + rel + `>l</a>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := s.SanitizeHTML(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeHTML(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
			check(t, s, got)
		})
	}
}

// check asserts what holds of every output: nothing on the forbidden list,
// and sanitizing it again changes nothing.
func check(t *testing.T, s *sanitizer.HTMLSanitizer, out string) {
	t.Helper()
	lower := strings.ToLower(out)
	for _, f := range forbidden {
		if strings.Contains(lower, f) {
			t.Errorf("output %q holds %q", out, f)
		}
	}
	if eventHandler.MatchString(out) {
		t.Errorf("output %q holds an event handler attribute", out)
	}
	if again := s.SanitizeHTML(out); again != out {
		t.Errorf("not idempotent: %q became %q", out, again)
	}
}

// Many goroutines share one sanitizer (the store decorator does).
func TestSanitizeHTMLConcurrently(t *testing.T) {
	t.Parallel()
	s := sanitizer.NewHTMLSanitizer()
	done := make(chan string)
	for range 8 {
		go func() { done <- s.SanitizeHTML(`<p onclick="x">a <a href="https://e.example/">b</a></p>`) }()
	}
	for range 8 {
		if got := <-done; got != `<p>a <a href="https://e.example/" rel="nofollow noreferrer noopener" target="_blank">b</a></p>` {
			t.Errorf("got %q", got)
		}
	}
}

var renderMentions = []domain.MentionLink{
	{User: "bob", Host: "remote.example", Href: "https://remote.example/users/bob"},
	{User: "dev", Host: "127.0.0.1:8082", Href: "http://127.0.0.1:8082/users/dev"},
	{User: "carol", Host: "local.example", Href: "https://local.example/users/carol", Local: true},
	{User: "q", Host: "q.example", Href: "https://q.example/u/it's%20me?a=1&b=<2>"},
}

var renderSeeds = []string{
	"hello", "one\ntwo\n\nthree", "\r\n\r\n a \r\n",
	`<script>alert("x")</script> & 'q' &amp; &#0; \x00`,
	"see https://e.example/a?b=1&c=2#f and (https://en.example/wiki/Go_(language)).",
	"<https://e.example/a> \"https://e.example/b\" https://e.example/ü https://user:pw@e.example:8443/x/'y'",
	"HTTPS://E.EXAMPLE/%41 http://[::1]:8080/a http://127.0.0.1:8081/users/a?x=%zz",
	"hi @bob@remote.example! @Bob@Remote.Example. @dev@127.0.0.1:8082: @carol, @carol@local.example @q@q.example",
	"@eve@remote.example mail carol@local.example https://remote.example/@bob",
	"a\xffb \u00a0 \u2028 \t tab",
}

// Herald's own rendering of a local post is made of markup the sanitizer
// keeps, written as it writes it: reading a local post back through the
// sanitizing store changes nothing.
func TestRenderTextPassesTheSanitizerUnchanged(t *testing.T) {
	t.Parallel()
	s := sanitizer.NewHTMLSanitizer()
	for _, text := range append(renderSeeds, "#Go #café #日本 (#x) #a_b#c https://h.example/p#frag #123 &#233;") {
		for _, out := range []string{domain.RenderText(text, renderMentions), domain.RenderPost(text, renderMentions, tagURL)} {
			if got := s.SanitizeHTML(out); got != out {
				t.Errorf("RenderText(%q)\n = %q\nsanitized to %q", text, out, got)
			}
		}
	}
}

func tagURL(tag string) string { return "https://local.example/tags/" + url.PathEscape(tag) }

// Plain-text fields (a content warning, alt text, a poll option) keep
// their text and lose every tag, the contents of scripts with them.
func TestSanitizeText(t *testing.T) {
	t.Parallel()
	s := sanitizer.NewHTMLSanitizer()
	for in, want := range map[string]string{
		"a cat <script>alert(1)</script>asleep":            "a cat asleep",
		"<b>bold</b> & <i>it</i>":                          "bold & it",
		"I <3 cats, 1 < 2":                                 "I <3 cats, 1 < 2",
		`<img src=x onerror=alert(1)>x`:                    "x",
		"AT&amp;T":                                         "AT&T",
		"<style>p{}</style><svg><script>1</script></svg>y": "y",
	} {
		if got := s.SanitizeText(in); got != want {
			t.Errorf("SanitizeText(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRenderTextPassesTheSanitizerUnchanged(f *testing.F) {
	for _, seed := range renderSeeds {
		f.Add(seed)
	}
	s := sanitizer.NewHTMLSanitizer()
	f.Fuzz(func(t *testing.T, text string) {
		out := domain.RenderPost(text, renderMentions, tagURL)
		if got := s.SanitizeHTML(out); got != out {
			t.Errorf("RenderPost(%q)\n = %q\nsanitized to %q", text, out, got)
		}
	})
}
