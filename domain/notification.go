package domain

import (
	"fmt"
	"time"
)

// NotificationKind is what a notification tells a persona, named as the
// client API's Notification.type has it (Mastodon 4.x).
type NotificationKind string

const (
	// NotifyMention: a remote post mentions the persona.
	NotifyMention NotificationKind = "mention"
	// NotifyFollow: a remote actor follows the persona.
	NotifyFollow NotificationKind = "follow"
	// NotifyFollowRequest: a remote actor asks to follow the locked
	// persona (or comes from a silenced domain): the follow waits.
	NotifyFollowRequest NotificationKind = "follow_request"
	// NotifyFavourite: a remote actor liked the persona's post.
	NotifyFavourite NotificationKind = "favourite"
	// NotifyReblog: a remote actor announced the persona's post.
	NotifyReblog NotificationKind = "reblog"
	// NotifyPoll: a poll the persona wrote or voted in ended.
	NotifyPoll NotificationKind = "poll"
	// NotifyUpdate: a post the persona boosted was edited.
	NotifyUpdate NotificationKind = "update"
)

// NotificationKinds are the kinds Herald records, in the order the docs
// list them.
func NotificationKinds() []NotificationKind {
	return []NotificationKind{NotifyMention, NotifyFollow, NotifyFollowRequest, NotifyFavourite, NotifyReblog, NotifyPoll, NotifyUpdate}
}

// Valid reports whether k is a kind Herald records.
func (k NotificationKind) Valid() bool {
	for _, known := range NotificationKinds() {
		if k == known {
			return true
		}
	}
	return false
}

// Limits on what a notification holds: URIs and keys as long as any
// activity id Herald accepts.
const maxNotificationField = 2048

// Notification is one event a local persona is told of. It names the
// actor and the post by URI only: what the client API shows of them is
// read when the notification is, so an edit shows, and a post deleted
// since shows as none.
type Notification struct {
	// ID sorts as a string by when the notification was recorded (a
	// UUIDv7): the client API's paging compares ids.
	ID string
	// Recipient is the persona's actor URI.
	Recipient string
	Kind      NotificationKind
	// ActorURI is who did it (the remote actor; the poll's author for a
	// poll).
	ActorURI string
	// PostURI is the post concerned (the object URI); empty for follows.
	PostURI string
	// Key is unique per recipient: what makes a redelivered activity
	// record nothing new (the activity's id, or what it is about).
	Key       string
	CreatedAt time.Time
}

// NewNotification validates a notification.
func NewNotification(id, recipient string, kind NotificationKind, actor, post, key string, at time.Time) (Notification, error) {
	n := Notification{ID: id, Recipient: recipient, Kind: kind, ActorURI: actor, PostURI: post, Key: key, CreatedAt: at.UTC()}
	return n, n.Check()
}

// Check is the validation every NotificationStore does before it stores n.
func (n Notification) Check() error {
	switch {
	case n.ID == "" || n.Recipient == "" || n.ActorURI == "" || n.Key == "":
		return fmt.Errorf("%w: a notification needs an id, a recipient, an actor and a key", ErrInvalidInput)
	case n.CreatedAt.IsZero():
		return fmt.Errorf("%w: a notification needs its time", ErrInvalidInput)
	case !n.Kind.Valid():
		return fmt.Errorf("%w: notification kind %q", ErrInvalidInput, n.Kind)
	case n.Kind != NotifyFollow && n.Kind != NotifyFollowRequest && n.PostURI == "":
		return fmt.Errorf("%w: a %s notification needs a post", ErrInvalidInput, n.Kind)
	case len(n.ID) > maxNotificationField || len(n.Recipient) > maxNotificationField || len(n.ActorURI) > maxNotificationField ||
		len(n.PostURI) > maxNotificationField || len(n.Key) > maxNotificationField:
		return fmt.Errorf("%w: a notification field is too long", ErrInvalidInput)
	}
	return nil
}

// NotificationFilter selects a persona's notifications as the client API
// pages them: ids below MaxID, above SinceID, or just above MinID (the
// page nearest MinID, where SinceID gives the newest), of the kinds in
// Kinds (none: all) and not in Exclude, by ActorURI when set.
type NotificationFilter struct {
	MaxID, SinceID, MinID string
	Kinds, Exclude        []NotificationKind
	ActorURI              string
	Limit                 int
}

// MaxNotificationPage bounds NotificationFilter.Limit.
const MaxNotificationPage = 1000

// Check is the validation every NotificationStore does of a filter: a
// limit in 1..MaxNotificationPage and known kinds.
func (f NotificationFilter) Check() error {
	if f.Limit < 1 || f.Limit > MaxNotificationPage {
		return fmt.Errorf("%w: a page of 1 to %d notifications, not %d", ErrInvalidInput, MaxNotificationPage, f.Limit)
	}
	for _, k := range append(append([]NotificationKind(nil), f.Kinds...), f.Exclude...) {
		if !k.Valid() {
			return fmt.Errorf("%w: notification kind %q", ErrInvalidInput, k)
		}
	}
	return nil
}

// Above is the lower id bound of f: the greater of SinceID and MinID.
func (f NotificationFilter) Above() string { return max(f.SinceID, f.MinID) }

// Matches reports whether n passes f's kind and actor filters and its id
// bounds (not its limit): the rule the stores that filter in Go apply.
func (f NotificationFilter) Matches(n Notification) bool {
	if (f.MaxID != "" && n.ID >= f.MaxID) || n.ID <= f.Above() {
		return false
	}
	if len(f.Kinds) > 0 && !containsKind(f.Kinds, n.Kind) {
		return false
	}
	if containsKind(f.Exclude, n.Kind) {
		return false
	}
	return f.ActorURI == "" || n.ActorURI == f.ActorURI
}

func containsKind(ks []NotificationKind, k NotificationKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}
