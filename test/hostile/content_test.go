package hostile_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// SPEC §12: what a remote note carries beside its text is kept within
// limits and comes out clean. Each part of the attack fails on its own
// rule: the plain texts are stripped of markup when stored (SanitizeText),
// returned HTML-escaped by the client API, URLs kept only when http(s),
// shortcodes only [A-Za-z0-9_], and arrays cut to their limits; a note of
// media without text is kept, not refused.
func TestHostileExtrasAreKeptCleanAndBounded(t *testing.T) {
	t.Parallel()
	eachStore(t, "what a note carries is sanitized and bounded", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		x := s.peer().actor("x")
		localFollows(t, h, s.token, "alice", x)

		var attachments []map[string]any
		attachments = append(attachments,
			map[string]any{"type": "Image", "url": "https://x.example/cat.png", "name": `<script>alert(1)</script>a cat <img src=x onerror=alert(2)>`},
			map[string]any{"type": "Image", "url": "javascript:alert(3)", "name": "a javascript: medium"},
			map[string]any{"type": "Image", "url": "  JaVaScRiPt:alert(4)", "name": "another"},
		)
		for i := range 60 {
			attachments = append(attachments, map[string]any{"type": "Image", "url": fmt.Sprintf("https://x.example/m/%d.png", i)})
		}
		tags := []map[string]any{
			{"type": "Emoji", "name": ":<script>alert(5)</script>:", "icon": map[string]any{"url": "https://x.example/e.png"}},
			{"type": "Emoji", "name": ":ok:", "icon": map[string]any{"url": "javascript:alert(6)"}},
			{"type": "Emoji", "name": ":fine:", "icon": map[string]any{"url": "https://x.example/fine.png"}},
			{"type": "Hashtag", "name": "#<script>"},
		}
		for i := range 300 {
			tags = append(tags, map[string]any{"type": "Hashtag", "name": fmt.Sprintf("#tag%d", i)})
		}
		var options []map[string]any
		options = append(options, map[string]any{"type": "Note", "name": `<script>alert(7)</script>yes`})
		for i := range 60 {
			options = append(options, map[string]any{"type": "Note", "name": fmt.Sprintf("option %d", i)})
		}
		id := x.noteURI()
		q := create(x, id, "", s.toAlice(), map[string]any{
			"type": "Question", "summary": `1 < 2 & <script>alert(8)</script>`, "sensitive": true, "url": "javascript:alert(9)",
			"attachment": attachments, "tag": tags, "oneOf": options,
		})
		q["object"].(map[string]any)["type"] = "Question"
		mustAccept(t, "a Question without text, carrying every attack", x.send(inboxOf(s.alice), q))
		if !h.stored(id) {
			t.Fatal("the note was not stored: a note of media without text must be kept")
		}

		stored, err := h.srv.Stores().Posts.PostByObjectURI(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(stored.Attachments); n != 16 {
			t.Errorf("%d attachments stored, want the first 16 with an http(s) URL", n)
		}
		for _, a := range stored.Attachments {
			if !strings.HasPrefix(a.URL, "https://") {
				t.Errorf("an attachment URL stored: %q", a.URL)
			}
			if strings.ContainsAny(a.Name, "<>") {
				t.Errorf("alt text stored with markup: %q", a.Name)
			}
		}
		if stored.URL != "" {
			t.Errorf("url stored: %q", stored.URL)
		}
		if strings.Contains(stored.Summary, "<script") || strings.Contains(stored.Summary, "alert(8)") {
			t.Errorf("summary stored with markup: %q", stored.Summary)
		}
		if len(stored.Emojis) != 1 || stored.Emojis[0].Shortcode != "fine" {
			t.Errorf("emojis stored: %+v", stored.Emojis)
		}
		if n := len(stored.Hashtags); n != 100 {
			t.Errorf("%d hashtags stored, want 100", n)
		}
		if stored.Poll == nil || len(stored.Poll.Options) != 20 {
			t.Fatalf("poll stored: %+v", stored.Poll)
		}
		if strings.Contains(stored.Poll.Options[0].Name, "<") {
			t.Errorf("poll option stored with markup: %q", stored.Poll.Options[0].Name)
		}

		posts := h.postsBy(s.token, x.uri)
		if len(posts) != 1 {
			t.Fatalf("the client API lists %d posts of x", len(posts))
		}
		for _, str := range stringsOf(posts[0], nil) {
			if why := unsafeMarkup(str); len(why) != 0 {
				t.Errorf("the client API returns %q: %s", str, strings.Join(why, "; "))
			}
		}
		if got := posts[0]["summary"]; got != "1 &lt; 2 &amp;" {
			t.Errorf("summary %q, want its text HTML-escaped", got)
		}
		status, out := h.call(http.MethodGet, "/api/v1/tags/tag7/posts", s.token, nil)
		if status != http.StatusOK || len(asSlice(out["posts"])) != 1 {
			t.Errorf("#tag7: %d %v", status, out)
		}
	})
}
