package domain_test

import (
	"testing"

	"github.com/heraldfed/herald/domain"
)

func TestRenderText(t *testing.T) {
	t.Parallel()
	const rel = ` rel="nofollow noreferrer noopener" target="_blank"`
	bob := domain.MentionLink{User: "bob", Host: "remote.example", Href: "https://remote.example/users/bob"}
	dev := domain.MentionLink{User: "dev", Host: "127.0.0.1:8082", Href: "http://127.0.0.1:8082/users/dev"}
	carol := domain.MentionLink{User: "carol", Host: "local.example", Href: "https://local.example/users/carol", Local: true}
	mentions := []domain.MentionLink{bob, dev, carol}
	card := func(href, user string) string {
		return `<span class="h-card"><a href="` + href + `" class="u-url mention"` + rel + `>@<span>` + user + `</span></a></span>`
	}
	for _, tt := range []struct{ name, in, want string }{
		{"plain", "hello", "<p>hello</p>"},
		{"empty", "", ""},
		{"blank", " \n\t\n ", ""},
		{"escaped", `<script>alert("x")</script> & 'q'`, "<p>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;q&#39;</p>"},
		{"entity text stays text", "&lt; &amp;", "<p>&amp;lt; &amp;amp;</p>"},
		{"line break", "one\ntwo", "<p>one<br>two</p>"},
		{"paragraphs", "one\n\ntwo\nthree", "<p>one</p><p>two<br>three</p>"},
		{"several blank lines, CRLF, spaces", "\r\none\r\n  \r\n\r\n\ntwo\n\n", "<p>one</p><p>two</p>"},
		{"lone CR is a newline", "a\rb", "<p>a<br>b</p>"},
		{"link", "see https://e.example/a?b=1&c=2", `<p>see <a href="https://e.example/a?b=1&amp;c=2"` + rel + `>https://e.example/a?b=1&amp;c=2</a></p>`},
		{"http link with port", "http://127.0.0.1:8081/users/a", `<p><a href="http://127.0.0.1:8081/users/a"` + rel + `>http://127.0.0.1:8081/users/a</a></p>`},
		{"trailing period", "go to https://e.example/x.", `<p>go to <a href="https://e.example/x"` + rel + `>https://e.example/x</a>.</p>`},
		{"trailing punctuation", "https://e.example/x?!, next", `<p><a href="https://e.example/x"` + rel + `>https://e.example/x</a>?!, next</p>`},
		{"in parentheses", "(see https://e.example/a)", `<p>(see <a href="https://e.example/a"` + rel + `>https://e.example/a</a>)</p>`},
		{"balanced parentheses kept", "https://en.example/wiki/Go_(language)", `<p><a href="https://en.example/wiki/Go_(language)"` + rel + `>https://en.example/wiki/Go_(language)</a></p>`},
		{"angle brackets", "<https://e.example/a>", `<p>&lt;<a href="https://e.example/a"` + rel + `>https://e.example/a</a>&gt;</p>`},
		{"quoted", `"https://e.example/a"`, `<p>&#34;<a href="https://e.example/a"` + rel + `>https://e.example/a</a>&#34;</p>`},
		{"upper-case scheme", "HTTPS://E.example/", `<p><a href="https://E.example/"` + rel + `>HTTPS://E.example/</a></p>`},
		{"non-ASCII path", "https://e.example/ü", `<p><a href="https://e.example/%C3%BC"` + rel + `>https://e.example/ü</a></p>`},
		{"two links", "https://a.example https://b.example", `<p><a href="https://a.example"` + rel + `>https://a.example</a> <a href="https://b.example"` + rel + `>https://b.example</a></p>`},
		{"not a scheme we link", "javascript:alert(1) ftp://e.example/ data:text/html,x", "<p>javascript:alert(1) ftp://e.example/ data:text/html,x</p>"},
		{"scheme alone", "http:// and https://", "<p>http:// and https://</p>"},
		{"inside a word", "xhttps://e.example/", "<p>xhttps://e.example/</p>"},
		{"a quote cannot break out of href", `https://e.example/"onmouseover="x`, `<p><a href="https://e.example/"` + rel + `>https://e.example/</a>&#34;onmouseover=&#34;x</p>`},
		{"remote mention", "hi @bob@remote.example!", "<p>hi " + card("https://remote.example/users/bob", "bob") + "!</p>"},
		{"mention case-insensitive", "@Bob@Remote.Example", "<p>" + card("https://remote.example/users/bob", "bob") + "</p>"},
		{"mention with a port", "@dev@127.0.0.1:8082: ping", "<p>" + card("http://127.0.0.1:8082/users/dev", "dev") + ": ping</p>"},
		{"mention at the end of a sentence", "thanks @bob@remote.example.", "<p>thanks " + card("https://remote.example/users/bob", "bob") + ".</p>"},
		{"local mention, short", "@carol, look", "<p>" + card("https://local.example/users/carol", "carol") + ", look</p>"},
		{"local mention, full", "@carol@local.example", "<p>" + card("https://local.example/users/carol", "carol") + "</p>"},
		{"remote actor needs its host", "@bob hi", "<p>@bob hi</p>"},
		{"unknown actor stays text", "@eve@remote.example @bob@other.example", "<p>@eve@remote.example @bob@other.example</p>"},
		{"a longer name is another actor", "@bobby@remote.example", "<p>@bobby@remote.example</p>"},
		{"an email address is no mention", "mail carol@local.example", "<p>mail carol@local.example</p>"},
		{"a mention in a URL is the URL's", "https://remote.example/@bob", `<p><a href="https://remote.example/@bob"` + rel + `>https://remote.example/@bob</a></p>`},
		{"mention and link on two lines", "@bob@remote.example\nhttps://e.example", "<p>" + card("https://remote.example/users/bob", "bob") + `<br><a href="https://e.example"` + rel + `>https://e.example</a></p>`},
		{"invalid UTF-8", "a\xffb", "<p>a\uFFFDb</p>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.RenderText(tt.in, mentions); got != tt.want {
				t.Errorf("RenderText(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// A mention whose actor URI is not an http(s) URL is not linked.
func TestRenderTextMentionNeedsAnHTTPHref(t *testing.T) {
	t.Parallel()
	m := []domain.MentionLink{{User: "bob", Host: "r.example", Href: "javascript:alert(1)"}}
	if got := domain.RenderText("@bob@r.example", m); got != "<p>@bob@r.example</p>" {
		t.Fatalf("got %q", got)
	}
}
