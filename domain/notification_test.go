package domain

import (
	"errors"
	"testing"
	"time"
)

func TestNotificationCheck(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		kind    NotificationKind
		post    string
		ok      bool
		mutated func(*Notification)
	}{
		{name: "mention with its post", kind: NotifyMention, post: "https://r.example/n/1", ok: true},
		{name: "follow without a post", kind: NotifyFollow, ok: true},
		{name: "follow request without a post", kind: NotifyFollowRequest, ok: true},
		{name: "favourite without a post", kind: NotifyFavourite},
		{name: "unknown kind", kind: "status", post: "https://r.example/n/1"},
		{name: "no key", kind: NotifyFollow, mutated: func(n *Notification) { n.Key = "" }},
		{name: "no time", kind: NotifyFollow, mutated: func(n *Notification) { n.CreatedAt = time.Time{} }},
		{name: "a key too long", kind: NotifyFollow, mutated: func(n *Notification) { n.Key = string(make([]byte, 3000)) }},
	} {
		n := Notification{ID: "01", Recipient: "https://h.example/users/vera", Kind: tt.kind, ActorURI: "https://r.example/users/bob",
			PostURI: tt.post, Key: "k", CreatedAt: at}
		if tt.mutated != nil {
			tt.mutated(&n)
		}
		err := n.Check()
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidInput)) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestNotificationFilter(t *testing.T) {
	t.Parallel()
	n := Notification{ID: "05", Kind: NotifyReblog, ActorURI: "bob"}
	for _, tt := range []struct {
		name string
		f    NotificationFilter
		want bool
	}{
		{"no filter", NotificationFilter{}, true},
		{"below max", NotificationFilter{MaxID: "06"}, true},
		{"at max", NotificationFilter{MaxID: "05"}, false},
		{"above since", NotificationFilter{SinceID: "04"}, true},
		{"at min", NotificationFilter{MinID: "05"}, false},
		{"since below, min above", NotificationFilter{SinceID: "01", MinID: "05"}, false},
		{"its kind", NotificationFilter{Kinds: []NotificationKind{NotifyMention, NotifyReblog}}, true},
		{"another kind", NotificationFilter{Kinds: []NotificationKind{NotifyMention}}, false},
		{"excluded", NotificationFilter{Exclude: []NotificationKind{NotifyReblog}}, false},
		{"its actor", NotificationFilter{ActorURI: "bob"}, true},
		{"another actor", NotificationFilter{ActorURI: "carl"}, false},
	} {
		if got := tt.f.Matches(n); got != tt.want {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
	for _, f := range []NotificationFilter{{Limit: 0}, {Limit: MaxNotificationPage + 1}, {Limit: 1, Exclude: []NotificationKind{"status"}}} {
		if err := f.Check(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%+v: %v", f, err)
		}
	}
}
