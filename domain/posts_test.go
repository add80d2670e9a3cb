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
