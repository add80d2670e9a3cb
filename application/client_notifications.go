package application

import (
	"context"
	"fmt"
	"slices"

	"github.com/heraldfed/herald/domain"
)

// NotificationsHandler reads, dismisses and clears the notifications of
// the token's persona (Mastodon's /api/v1/notifications). The inbox
// records them (notify.go); what they name is read here, as the persona
// may see it now.
type NotificationsHandler struct{ deps Deps }

// NotificationItem is one notification with the post it concerns.
type NotificationItem struct {
	domain.Notification
	// Post is the post it concerns (a direct post as one of visibility
	// direct); zero for a follow.
	Post domain.Post
}

// NotificationsQuery selects a page: the filter's id bounds, kinds and
// limit, and AccountID (a client API account id) for one actor's.
type NotificationsQuery struct {
	Filter    domain.NotificationFilter
	AccountID string
}

// NotificationsPage is a page of notifications, newest first: a
// notification whose post is gone, or hidden from the persona since, is
// left out.
type NotificationsPage = ListPage[NotificationItem]

// ListPage is a page of one of the persona's lists the NotificationStore
// keeps, newest first. Newest and Oldest are the greatest and least ids
// the store read, which the Link header pages from: Items may hold fewer.
type ListPage[T any] struct {
	Items          []T
	Newest, Oldest string
}

// pageOf is the page of what the store read (newest first, id giving the
// ids it pages by), each turned into its item; item's false leaves one
// out.
func pageOf[S, T any](read []S, id func(S) string, item func(S) (T, bool, error)) (ListPage[T], error) {
	page := ListPage[T]{Items: make([]T, 0, len(read))}
	if len(read) > 0 {
		page.Newest, page.Oldest = id(read[0]), id(read[len(read)-1])
	}
	for _, s := range read {
		it, ok, err := item(s)
		if err != nil {
			return ListPage[T]{}, err
		}
		if ok {
			page.Items = append(page.Items, it)
		}
	}
	return page, nil
}

// me is the actor URI of the token's persona; domain.ErrForbidden for a
// token without one.
func (h NotificationsHandler) me(p Principal) (string, error) {
	return notedPersona(h.deps, p, "notifications")
}

// notedPersona is the actor URI of the token's persona, for what the
// NotificationStore keeps of it (what: notifications, conversations):
// domain.ErrForbidden for a token without one, domain.ErrUnavailable when
// the deps keep none.
func notedPersona(d Deps, p Principal, what string) (string, error) {
	if !p.HasUser() {
		return "", fmt.Errorf("%w: %s are a persona's", domain.ErrForbidden, what)
	}
	if d.Notifications == nil {
		return "", fmt.Errorf("%w: %s are not kept", domain.ErrUnavailable, what)
	}
	return d.URLs.Persona(p.Avatar.Name), nil
}

// List returns a page of the persona's notifications.
func (h NotificationsHandler) List(ctx context.Context, p Principal, q NotificationsQuery) (NotificationsPage, error) {
	me, err := h.me(p)
	if err != nil {
		return NotificationsPage{}, err
	}
	f := q.Filter
	if q.AccountID != "" {
		uri, err := h.actorOf(ctx, q.AccountID)
		if notFound(err) {
			return NotificationsPage{}, nil // no such account: none of its
		}
		if err != nil {
			return NotificationsPage{}, err
		}
		f.ActorURI = uri
	}
	ns, err := h.deps.Notifications.Notifications(ctx, me, f)
	if err != nil {
		return NotificationsPage{}, err
	}
	return pageOf(ns, func(n domain.Notification) string { return n.ID }, func(n domain.Notification) (NotificationItem, bool, error) {
		it, err := h.item(ctx, p, me, n)
		if notFound(err) {
			return it, false, nil
		}
		return it, true, err
	})
}

// Get returns one of the persona's notifications; domain.ErrNotFound for
// another persona's, or one whose post is gone or hidden.
func (h NotificationsHandler) Get(ctx context.Context, p Principal, id string) (NotificationItem, error) {
	me, err := h.me(p)
	if err != nil {
		return NotificationItem{}, err
	}
	n, err := h.deps.Notifications.Notification(ctx, me, id)
	if err != nil {
		return NotificationItem{}, err
	}
	return h.item(ctx, p, me, n)
}

// Dismiss deletes one of the persona's notifications; domain.ErrNotFound
// for another persona's.
func (h NotificationsHandler) Dismiss(ctx context.Context, p Principal, id string) error {
	me, err := h.me(p)
	if err != nil {
		return err
	}
	return h.deps.Notifications.DismissNotification(ctx, me, id)
}

// Clear deletes all of the persona's notifications.
func (h NotificationsHandler) Clear(ctx context.Context, p Principal) error {
	me, err := h.me(p)
	if err != nil {
		return err
	}
	n, err := h.deps.Notifications.ClearNotifications(ctx, me)
	if err == nil {
		h.deps.Log.DebugContext(ctx, "notifications cleared", "persona", me, "count", n)
	}
	return err
}

// actorOf is the actor URI of a client API account id: a live persona's,
// or a remote actor's Herald gave an id.
func (h NotificationsHandler) actorOf(ctx context.Context, id string) (string, error) {
	a, err := h.deps.Actors.AvatarByID(ctx, id)
	if err == nil && livePersona(a) {
		return h.deps.URLs.Persona(a.Name), nil
	}
	if err != nil && !notFound(err) {
		return "", err
	}
	return h.deps.AccountIDs.AccountURI(ctx, id)
}

// item reads what n names: its post (domain.ErrNotFound when it is gone,
// or hidden from the persona now: a block made since, a domain refused).
func (h NotificationsHandler) item(ctx context.Context, p Principal, me string, n domain.Notification) (NotificationItem, error) {
	it := NotificationItem{Notification: n}
	if blocked, err := blockedBetween(ctx, h.deps.Blocks, me, n.ActorURI); err != nil {
		return NotificationItem{}, err
	} else if blocked {
		return NotificationItem{}, fmt.Errorf("%w: notification %s", domain.ErrNotFound, n.ID)
	}
	if n.PostURI == "" {
		return it, nil
	}
	post, err := h.deps.Posts.PostByObjectURI(ctx, n.PostURI)
	if notFound(err) {
		return h.directItem(ctx, me, it)
	}
	if err != nil {
		return NotificationItem{}, err
	}
	// The persona sees what mentions it, and its own posts; else what
	// any read lets it see.
	if post.AuthorURI != me && !slices.Contains(post.Mentions, me) {
		ok, err := (StatusesHandler{deps: h.deps}).CanSee(ctx, p, post)
		if err != nil {
			return NotificationItem{}, err
		}
		if !ok {
			return NotificationItem{}, fmt.Errorf("%w: notification %s", domain.ErrNotFound, n.ID)
		}
	}
	it.Post = post
	return it, nil
}

// directItem is the item of a notification of a direct post, shown as a
// post of visibility direct to its participants.
func (h NotificationsHandler) directItem(ctx context.Context, me string, it NotificationItem) (NotificationItem, error) {
	dm, err := h.deps.Posts.DmByObjectURI(ctx, it.PostURI)
	if err != nil {
		return NotificationItem{}, err
	}
	if !slices.Contains(dm.Participants, me) {
		return NotificationItem{}, fmt.Errorf("%w: notification %s", domain.ErrNotFound, it.ID)
	}
	var mentions []string
	for _, u := range dm.Participants {
		if u != dm.AuthorURI {
			mentions = append(mentions, u)
		}
	}
	it.Post = domain.Post{ID: dm.ID, ObjectURI: dm.ObjectURI, AuthorURI: dm.AuthorURI, Content: dm.Content, Visibility: domain.VisibilityDirect,
		Mentions: mentions, Published: dm.Published, Updated: dm.Updated, Local: dm.Local, Extras: dm.Extras}
	return it, nil
}
