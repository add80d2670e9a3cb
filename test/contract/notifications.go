package contract

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// NotificationStore runs the contract of ports.NotificationStore.
func NotificationStore(t *testing.T, newStore func(t *testing.T) ports.NotificationStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewNotifications)
	const (
		vera = "https://herald.example/users/vera"
		walt = "https://herald.example/users/walt"
		bob  = "https://r.example/users/bob"
		carl = "https://s.example/users/carl"
		post = "https://herald.example/users/vera/statuses/01"
	)
	// note makes the notification id (ids "n01".."n99" sort as numbers).
	note := func(i int, recipient string, kind domain.NotificationKind, actor string) domain.Notification {
		p := post
		if kind == domain.NotifyFollow || kind == domain.NotifyFollowRequest {
			p = ""
		}
		return domain.Notification{ID: fmt.Sprintf("n%02d", i), Recipient: recipient, Kind: kind, ActorURI: actor, PostURI: p,
			Key: fmt.Sprintf("https://r.example/activities/%d", i), CreatedAt: base.Add(time.Duration(i) * time.Second)}
	}
	add := func(t *testing.T, s ports.NotificationStore, ns ...domain.Notification) {
		t.Helper()
		for _, n := range ns {
			created, err := s.AddNotification(ctx(t), n)
			mustNil(t, err, "add "+n.ID)
			if !created {
				t.Fatalf("add %s: not created", n.ID)
			}
		}
	}
	ids := func(ns []domain.Notification) []string {
		out := []string{}
		for _, n := range ns {
			out = append(out, n.ID)
		}
		return out
	}
	list := func(t *testing.T, s ports.NotificationStore, recipient string, f domain.NotificationFilter) []string {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 40
		}
		ns, err := s.Notifications(ctx(t), recipient, f)
		mustNil(t, err, "list")
		return ids(ns)
	}
	want := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("ids %v, want %v", got, want)
		}
	}
	// mixed stores ten notifications of vera's (n01..n10) of every kind,
	// from bob and carl, and two of walt's in between.
	mixed := func(t *testing.T, s ports.NotificationStore) {
		t.Helper()
		kinds := []domain.NotificationKind{domain.NotifyMention, domain.NotifyFollow, domain.NotifyFavourite, domain.NotifyReblog, domain.NotifyPoll}
		for i := 1; i <= 10; i++ {
			actor := bob
			if i%2 == 0 {
				actor = carl
			}
			add(t, s, note(i, vera, kinds[(i-1)%len(kinds)], actor))
		}
		add(t, s, note(20, walt, domain.NotifyMention, bob), note(21, walt, domain.NotifyFollow, carl))
	}

	runCases(t, newStore, opts, []testCase[ports.NotificationStore]{
		{"AddGetRoundTrip", func(t *testing.T, s ports.NotificationStore) {
			n := note(1, vera, domain.NotifyMention, bob)
			add(t, s, n)
			got, err := s.Notification(ctx(t), vera, "n01")
			mustNil(t, err, "get")
			sameTime(t, got.CreatedAt, n.CreatedAt, "created")
			got.CreatedAt = n.CreatedAt
			if got != n {
				t.Fatalf("got %+v, want %+v", got, n)
			}
			f := note(2, vera, domain.NotifyFollow, carl)
			add(t, s, f)
			if got, err := s.Notification(ctx(t), vera, "n02"); err != nil || got.PostURI != "" || got.Kind != domain.NotifyFollow {
				t.Fatalf("follow %+v %v", got, err)
			}
		}},
		{"SameKeyOncePerRecipient", func(t *testing.T, s ports.NotificationStore) {
			n := note(1, vera, domain.NotifyFavourite, bob)
			add(t, s, n)
			again := n
			again.ID = "n02"
			created, err := s.AddNotification(ctx(t), again)
			mustNil(t, err, "again")
			if created {
				t.Fatal("a second notification of one key was created")
			}
			want(t, list(t, s, vera, domain.NotificationFilter{}), "n01")
			// Another persona may be told of the same activity.
			other := again
			other.Recipient = walt
			add(t, s, other)
			want(t, list(t, s, walt, domain.NotificationFilter{}), "n02")
		}},
		{"TakenIDAlreadyExists", func(t *testing.T, s ports.NotificationStore) {
			add(t, s, note(1, vera, domain.NotifyMention, bob))
			n := note(1, walt, domain.NotifyMention, bob)
			n.Key = "another"
			_, err := s.AddNotification(ctx(t), n)
			mustIs(t, err, domain.ErrAlreadyExists, "reused id")
		}},
		{"InvalidRefused", func(t *testing.T, s ports.NotificationStore) {
			for name, mutate := range map[string]func(*domain.Notification){
				"no id":            func(n *domain.Notification) { n.ID = "" },
				"no recipient":     func(n *domain.Notification) { n.Recipient = "" },
				"no actor":         func(n *domain.Notification) { n.ActorURI = "" },
				"no key":           func(n *domain.Notification) { n.Key = "" },
				"unknown kind":     func(n *domain.Notification) { n.Kind = "admin.sign_up" },
				"mention, no post": func(n *domain.Notification) { n.PostURI = "" },
				"no time":          func(n *domain.Notification) { n.CreatedAt = time.Time{} },
			} {
				n := note(1, vera, domain.NotifyMention, bob)
				mutate(&n)
				if _, err := s.AddNotification(ctx(t), n); !errors.Is(err, domain.ErrInvalidInput) {
					t.Errorf("%s: %v, want ErrInvalidInput", name, err)
				}
			}
			want(t, list(t, s, vera, domain.NotificationFilter{}))
			if _, err := s.Notifications(ctx(t), vera, domain.NotificationFilter{Limit: 0}); !errors.Is(err, domain.ErrInvalidInput) {
				t.Errorf("limit 0: %v", err)
			}
			if _, err := s.Notifications(ctx(t), vera, domain.NotificationFilter{Limit: 5, Kinds: []domain.NotificationKind{"nope"}}); !errors.Is(err, domain.ErrInvalidInput) {
				t.Errorf("unknown kind filter: %v", err)
			}
		}},
		{"NewestFirstWithLimitAndMaxID", func(t *testing.T, s ports.NotificationStore) {
			mixed(t, s)
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3}), "n10", "n09", "n08")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3, MaxID: "n08"}), "n07", "n06", "n05")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3, MaxID: "n03"}), "n02", "n01")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3, MaxID: "n01"}))
			want(t, list(t, s, walt, domain.NotificationFilter{}), "n21", "n20")
			want(t, list(t, s, "https://herald.example/users/nobody", domain.NotificationFilter{}))
		}},
		{"SinceIDNewestAndMinIDNearest", func(t *testing.T, s ports.NotificationStore) {
			mixed(t, s)
			// since_id: the newest above it; min_id: the ones just above it.
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3, SinceID: "n04"}), "n10", "n09", "n08")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3, MinID: "n04"}), "n07", "n06", "n05")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3, MinID: "n09"}), "n10")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 10, MinID: "n03", MaxID: "n07"}), "n06", "n05", "n04")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 10, SinceID: "n08", MinID: "n02"}), "n10", "n09")
		}},
		{"KindAndActorFilters", func(t *testing.T, s ports.NotificationStore) {
			mixed(t, s)
			// kinds by index: 1 mention, 2 follow, 3 favourite, 4 reblog, 5 poll, 6 mention ...
			want(t, list(t, s, vera, domain.NotificationFilter{Kinds: []domain.NotificationKind{domain.NotifyMention}}), "n06", "n01")
			want(t, list(t, s, vera, domain.NotificationFilter{Kinds: []domain.NotificationKind{domain.NotifyFollow, domain.NotifyPoll}}), "n10", "n07", "n05", "n02")
			want(t, list(t, s, vera, domain.NotificationFilter{Exclude: []domain.NotificationKind{domain.NotifyMention, domain.NotifyFollow, domain.NotifyPoll}}),
				"n09", "n08", "n04", "n03")
			want(t, list(t, s, vera, domain.NotificationFilter{Kinds: []domain.NotificationKind{domain.NotifyMention, domain.NotifyFavourite}, Exclude: []domain.NotificationKind{domain.NotifyMention}}),
				"n08", "n03")
			want(t, list(t, s, vera, domain.NotificationFilter{ActorURI: carl}), "n10", "n08", "n06", "n04", "n02")
			want(t, list(t, s, vera, domain.NotificationFilter{ActorURI: carl, Kinds: []domain.NotificationKind{domain.NotifyFollow}, Limit: 1}), "n02")
			// The limit counts what passes the filters.
			want(t, list(t, s, vera, domain.NotificationFilter{ActorURI: bob, Limit: 2, MaxID: "n09"}), "n07", "n05")
			want(t, list(t, s, vera, domain.NotificationFilter{ActorURI: bob, Limit: 2, MinID: "n01"}), "n05", "n03")
		}},
		{"GetAndDismissOnlyOwn", func(t *testing.T, s ports.NotificationStore) {
			mixed(t, s)
			_, err := s.Notification(ctx(t), walt, "n01")
			mustIs(t, err, domain.ErrNotFound, "walt reads vera's")
			mustIs(t, s.DismissNotification(ctx(t), walt, "n01"), domain.ErrNotFound, "walt dismisses vera's")
			mustNil(t, s.DismissNotification(ctx(t), vera, "n01"), "dismiss")
			mustIs(t, s.DismissNotification(ctx(t), vera, "n01"), domain.ErrNotFound, "dismiss again")
			_, err = s.Notification(ctx(t), vera, "n01")
			mustIs(t, err, domain.ErrNotFound, "dismissed")
			_, err = s.Notification(ctx(t), vera, "n99")
			mustIs(t, err, domain.ErrNotFound, "unknown")
			want(t, list(t, s, vera, domain.NotificationFilter{Limit: 3, MaxID: "n03"}), "n02")
			// A dismissed notification's key is free again: the same
			// activity is not redelivered, a new one of that key may be.
			n := note(1, vera, domain.NotifyMention, bob)
			n.ID = "n11"
			add(t, s, n)
		}},
		{"ClearIsPerRecipient", func(t *testing.T, s ports.NotificationStore) {
			mixed(t, s)
			n, err := s.ClearNotifications(ctx(t), vera)
			mustNil(t, err, "clear")
			if n != 10 {
				t.Fatalf("cleared %d, want 10", n)
			}
			want(t, list(t, s, vera, domain.NotificationFilter{}))
			want(t, list(t, s, walt, domain.NotificationFilter{}), "n21", "n20")
			if n, err := s.ClearNotifications(ctx(t), vera); err != nil || n != 0 {
				t.Fatalf("clear again: %d %v", n, err)
			}
		}},
		{"DeleteActorNotifications", func(t *testing.T, s ports.NotificationStore) {
			mixed(t, s)
			n, err := s.DeleteActorNotifications(ctx(t), bob)
			mustNil(t, err, "delete bob's")
			if n != 6 {
				t.Fatalf("deleted %d, want 6 (five of vera's, one of walt's)", n)
			}
			want(t, list(t, s, vera, domain.NotificationFilter{}), "n10", "n08", "n06", "n04", "n02")
			want(t, list(t, s, walt, domain.NotificationFilter{}), "n21")
		}},
		{"ConcurrentAddsOfOneKeyCreateOne", func(t *testing.T, s ports.NotificationStore) {
			const n = 8
			var wg sync.WaitGroup
			created := make([]bool, n)
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					x := note(1, vera, domain.NotifyReblog, bob)
					x.ID = fmt.Sprintf("c%02d", i)
					created[i], errs[i] = s.AddNotification(ctx(t), x)
				}()
			}
			wg.Wait()
			count := 0
			for i := range n {
				mustNil(t, errs[i], "concurrent add")
				if created[i] {
					count++
				}
			}
			if count != 1 {
				t.Fatalf("%d created, want 1", count)
			}
			if got := list(t, s, vera, domain.NotificationFilter{}); len(got) != 1 {
				t.Fatalf("stored %v, want one", got)
			}
		}},
	})
	t.Run("Conversations", func(t *testing.T) {
		ConversationStore(t, func(t *testing.T) ports.ConversationStore { return newStore(t) }, opts...)
	})
}
