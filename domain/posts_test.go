package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestParticipantsKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b []string
		same bool
	}{
		{"order does not matter", []string{"https://a/u/1", "https://b/u/2"}, []string{"https://b/u/2", "https://a/u/1"}, true},
		{"repetition does not matter", []string{"https://a/u/1", "https://a/u/1", "https://b/u/2"}, []string{"https://b/u/2", "https://a/u/1"}, true},
		{"blank entries ignored", []string{"https://a/u/1", " "}, []string{"https://a/u/1"}, true},
		{"different sets differ", []string{"https://a/u/1", "https://b/u/2"}, []string{"https://a/u/1", "https://b/u/3"}, false},
		{"subset differs", []string{"https://a/u/1"}, []string{"https://a/u/1", "https://b/u/2"}, false},
		{"join cannot collide", []string{"a\nb"}, []string{"a", "b"}, true}, // documented: a newline cannot appear in a URI
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.ParticipantsKey(tt.a) == domain.ParticipantsKey(tt.b); got != tt.same {
				t.Fatalf("same = %v, want %v", got, tt.same)
			}
		})
	}
}

func TestNewDmPostIncludesAuthor(t *testing.T) {
	t.Parallel()
	dm, err := domain.NewDmPost("p1", "https://h/p/1", "https://h/users/a", "hi", []string{"https://r/u/b"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(dm.Participants, ",") != "https://h/users/a,https://r/u/b" ||
		dm.ParticipantsKey != domain.ParticipantsKey([]string{"https://r/u/b", "https://h/users/a"}) {
		t.Fatalf("%+v", dm)
	}
	if _, err := domain.NewDmPost("p1", "https://h/p/1", "https://h/users/a", "hi", nil, time.Now()); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("no recipients: %v", err)
	}
}

func TestNewPost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		vis     domain.Visibility
		wantErr bool
	}{
		{"public", "hello", domain.VisibilityPublic, false},
		{"followers", "hello", domain.VisibilityFollowers, false},
		{"direct is a DmPost", "hello", domain.VisibilityDirect, true},
		{"unknown visibility", "hello", "secret", true},
		{"empty", "  ", domain.VisibilityPublic, true},
		{"too long", strings.Repeat("x", domain.MaxPostLength+1), domain.VisibilityPublic, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := domain.NewPost("p1", "https://h/p/1", "https://h/users/a", tt.content, tt.vis, time.Now())
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, domain.ErrInvalidInput)) {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

func TestNewFollower(t *testing.T) {
	t.Parallel()
	if _, err := domain.NewFollower("https://r/u/a", "https://r/u/a", "", domain.FollowPending, time.Now()); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("self follow: %v", err)
	}
	if _, err := domain.NewFollower("https://r/u/a", "https://h/users/b", "", "maybe", time.Now()); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("bad state: %v", err)
	}
	f, err := domain.NewFollower("https://r/u/a", "https://h/users/b", "https://r/f/1", domain.FollowPending, time.Now())
	if err != nil || f.State != domain.FollowPending {
		t.Fatalf("%+v %v", f, err)
	}
}

// Remote notes are measured as their users count them (characters of
// text), not by the bytes of their HTML: a GoToSocial post within its own
// 5000-character limit must be accepted whatever its markup or script.
func TestRemoteContentLimits(t *testing.T) {
	t.Parallel()
	para := func(s string) string { return "<p>" + s + "</p>" }
	tests := []struct {
		name    string
		content string
		wantErr bool
	}{
		{"4995 ASCII characters in a paragraph (over 5000 bytes)", para(strings.Repeat("a", 4995)), false},
		{"2600 × é (5200 bytes)", para(strings.Repeat("é", 2600)), false},
		{"5000 characters as entities", para(strings.Repeat("&amp;", 5000)), false},
		{"markup-heavy: links around 2000 characters", strings.Repeat(`<a href="https://example.org/tags/x" class="mention hashtag" rel="tag">#x</a> `, 1000), false},
		{"at the text limit", strings.Repeat("x", domain.MaxRemoteTextChars), false},
		{"over the text limit", strings.Repeat("x", domain.MaxRemoteTextChars+1), true},
		{"over the byte cap with little text", strings.Repeat("<b></b>", domain.MaxRemoteContentBytes/7+1), true},
		{"empty", "   ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := domain.NewRemotePost("p1", "https://h/p/1", "https://h/users/a", tt.content, domain.VisibilityPublic, time.Now())
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, domain.ErrInvalidInput)) {
				t.Fatalf("post: err = %v, wantErr %v", err, tt.wantErr)
			}
			_, err = domain.NewRemoteDmPost("d1", "https://h/d/1", "https://h/users/a", tt.content, []string{"https://l/users/b"}, time.Now())
			if (err != nil) != tt.wantErr {
				t.Fatalf("dm: err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
	// Our own posts keep their limit.
	if _, err := domain.NewPost("p1", "https://h/p/1", "https://h/users/a", para(strings.Repeat("a", 4995)), domain.VisibilityPublic, time.Now()); err == nil {
		t.Fatal("a local post over MaxPostLength bytes was accepted")
	}
}

func TestTextLength(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"plain", 5},
		{"<p>héllo</p>", 5},
		{`<p>a <a href="https://x/y">link</a></p>`, 6},
		{"&amp;&#233;&lt;", 3},
		{"<br/>x<br>", 1},
	} {
		if got := domain.TextLength(tt.in); got != tt.want {
			t.Errorf("TextLength(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
