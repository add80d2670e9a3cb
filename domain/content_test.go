package domain_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestHashtags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"#Go and #go, #café #日本語", []string{"go", "café", "日本語"}},
		{"no#tag, https://h.example/p#frag, &#233;, #123, (#paren)", []string{"paren"}},
		{"#a_b-c #" + strings.Repeat("x", domain.MaxHashtagChars+1), []string{"a_b"}},
		{"line one\n#two", []string{"two"}},
	} {
		if got := domain.Hashtags(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Hashtags(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestNormalizeRemoteExtrasDropsTheExcess(t *testing.T) {
	t.Parallel()
	var e domain.Extras
	for range domain.MaxAttachments + 4 {
		e.Attachments = append(e.Attachments, domain.Attachment{URL: "https://r.example/a.png", MediaType: "IMAGE/PNG; x=y", Focal: &[2]float64{3, 0}})
	}
	e.Attachments[0].URL = "javascript:alert(1)"
	e.Summary = strings.Repeat("s", domain.MaxSummaryChars+5)
	e.Language, e.URL = "not a tag", "data:text/html,x"
	e.Emojis = []domain.Emoji{{Shortcode: ":ok:", IconURL: "https://r.example/ok.png"}, {Shortcode: "no pe", IconURL: "https://r.example/x.png"}, {Shortcode: "js", IconURL: "javascript:x"}}
	e.Poll = &domain.Poll{Options: []domain.PollOption{{Name: "a", Votes: -3}, {Name: "a"}, {Name: strings.Repeat("o", domain.MaxPollOptionChars+1)}, {Name: "b", Votes: 2}}}
	got := domain.NormalizeRemoteExtras(e)
	if len(got.Attachments) != domain.MaxAttachments || got.Attachments[0].Kind != domain.MediaImage || got.Attachments[0].MediaType != "image/png" || got.Attachments[0].Focal != nil {
		t.Fatalf("attachments: %d, first %+v", len(got.Attachments), got.Attachments[0])
	}
	if len([]rune(got.Summary)) != domain.MaxSummaryChars || got.Language != "" || got.URL != "" {
		t.Fatalf("summary %d, language %q, url %q", len(got.Summary), got.Language, got.URL)
	}
	if len(got.Emojis) != 1 || got.Emojis[0].Shortcode != "ok" {
		t.Fatalf("emojis %+v", got.Emojis)
	}
	if got.Poll == nil || !slices.Equal(got.Poll.Options, []domain.PollOption{{Name: "a"}, {Name: "b", Votes: 2}}) {
		t.Fatalf("poll %+v", got.Poll)
	}
}

func TestCheckLocalExtras(t *testing.T) {
	t.Parallel()
	ok := domain.Extras{Summary: " cw ", Language: "pt-BR", Attachments: []domain.Attachment{{URL: "https://a.example/v.mp4", MediaType: "video/mp4"}},
		Poll: &domain.Poll{Options: []domain.PollOption{{Name: "x", Votes: 9}, {Name: "y"}}, EndTime: time.Now()}}
	got, err := domain.CheckLocalExtras(ok)
	if err != nil || got.Summary != "cw" || got.Attachments[0].Kind != domain.MediaVideo || got.Poll.Options[0].Votes != 0 {
		t.Fatalf("%+v %v", got, err)
	}
	for name, e := range map[string]domain.Extras{
		"long summary":  {Summary: strings.Repeat("s", domain.MaxSummaryChars+1)},
		"bad focal":     {Attachments: []domain.Attachment{{URL: "https://a.example/i.png", Focal: &[2]float64{0, 2}}}},
		"bad blurhash":  {Attachments: []domain.Attachment{{URL: "https://a.example/i.png", Blurhash: "<script>"}}},
		"twice":         {Poll: &domain.Poll{Options: []domain.PollOption{{Name: "x"}, {Name: "x"}}}},
		"empty option":  {Poll: &domain.Poll{Options: []domain.PollOption{{Name: "x"}, {Name: " "}}}},
		"21 options":    {Poll: &domain.Poll{Options: make([]domain.PollOption, domain.MaxPollOptions+1)}},
		"no http media": {Attachments: []domain.Attachment{{URL: "ftp://a.example/f"}}},
	} {
		if _, err := domain.CheckLocalExtras(e); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestPollReplaces(t *testing.T) {
	closedAt := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	open, closed := domain.Poll{}, domain.Poll{Closed: closedAt}
	cases := []struct {
		name      string
		next, old domain.Poll
		want      bool
	}{
		{"open over open", open, open, true},
		{"closed over open", closed, open, true},
		{"closed over closed", closed, closed, true},
		{"a late open Update over a closed poll", open, closed, false},
	}
	for _, c := range cases {
		if got := c.next.Replaces(c.old); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
