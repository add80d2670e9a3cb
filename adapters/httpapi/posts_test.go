package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

// A post with everything of SPEC §12 is published and read back: its
// plain-text fields HTML-escaped, its hashtag listed; what breaks a rule
// is 422.
func TestPostsCarryExtras(t *testing.T) {
	t.Parallel()
	s := setupFollows(t)
	status, body := s.call(t, http.MethodPost, "/api/v1/posts", s.token, `{"as":"alice","content":"lunch #Food","spoiler_text":"<b>food</b> & drink",
		"sensitive":true,"language":"fr","media":[{"url":"https://app.example/m/1.jpg","description":"a <script>plate</script>","media_type":"image/jpeg",
		"width":10,"height":20,"focus":{"x":0.5,"y":-0.5}}],"poll":{"options":["soup","<i>salad</i>"],"expires_in":3600}}`)
	if status != 201 {
		t.Fatalf("publish: %d %v", status, body)
	}
	uri := body["uri"].(string)
	for _, path := range []string{"/api/v1/posts?author=" + url.QueryEscape("https://local.example/users/alice"), "/api/v1/tags/FOOD/posts", "/api/v1/tags/%23food/posts"} {
		status, body := s.call(t, http.MethodGet, path, s.token, "")
		posts, _ := body["posts"].([]any)
		if status != 200 || len(posts) != 1 {
			t.Fatalf("%s: %d %v", path, status, body)
		}
		p := posts[0].(map[string]any)
		media := p["media"].([]any)[0].(map[string]any)
		poll := p["poll"].(map[string]any)
		opt := poll["options"].([]any)[1].(map[string]any)
		if p["summary"] != "food &amp; drink" || p["sensitive"] != true || p["language"] != "fr" || media["type"] != "image" ||
			media["description"] != "a" && media["description"] != "a plate" || media["url"] != "https://app.example/m/1.jpg" ||
			opt["title"] != "salad" || poll["multiple"] != false || poll["expired"] != false || p["hashtags"].([]any)[0] != "food" {
			t.Fatalf("%s: %v", path, p)
		}
	}
	if status, body := s.call(t, http.MethodGet, "/api/v1/tags/1234/posts", s.token, ""); status != 422 {
		t.Fatalf("a tag of digits: %d %v", status, body)
	}
	for name, post := range map[string]string{
		"javascript media": `{"content":"x","media":[{"url":"javascript:alert(1)"}]}`,
		"unknown kind":     `{"content":"x","media":[{"url":"https://a.example/x","type":"hologram"}]}`,
		"short poll":       `{"content":"x","poll":{"options":["a","b"],"expires_in":5}}`,
		"empty":            `{"content":""}`,
	} {
		if status, body := s.call(t, http.MethodPost, "/api/v1/posts", s.token, post); status != 422 {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	// alice votes in her own poll: counted here, nothing sent.
	status, body = s.call(t, http.MethodPost, "/api/v1/polls/votes", s.token, `{"as":"alice","poll":"`+uri+`","choices":[0]}`)
	if status != 200 || body["created"] != true || body["poll"].(map[string]any)["votes_count"] != float64(1) {
		t.Fatalf("vote: %d %v", status, body)
	}
	for name, tt := range map[string]struct {
		body string
		want int
	}{
		"again":        {`{"as":"alice","poll":"` + uri + `","choices":[0]}`, 200},
		"no such poll": {`{"as":"alice","poll":"https://local.example/users/alice/statuses/none","choices":[0]}`, 404},
		"no option":    {`{"as":"alice","poll":"` + uri + `","options":["pie"]}`, 422},
		"not a URI":    {`{"as":"alice","poll":"javascript:x","choices":[0]}`, 422},
	} {
		if status, body := s.call(t, http.MethodPost, "/api/v1/polls/votes", s.token, tt.body); status != tt.want {
			t.Errorf("%s: %d %v, want %d", name, status, body, tt.want)
		}
	}
	p, err := s.content.PostByObjectURI(context.Background(), uri)
	if err != nil || p.Poll == nil || p.Poll.Voters != 1 || !p.Poll.EndTime.Equal(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("stored poll %+v %v", p.Poll, err)
	}
	if strings.Contains(p.Attachments[0].Name, "<") || p.Language != "fr" || p.Attachments[0].Kind != domain.MediaImage {
		t.Fatalf("stored %+v", p.Extras)
	}
}
