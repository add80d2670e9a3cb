package ports

import (
	"context"

	"github.com/heraldfed/herald/domain"
)

// NotificationStore keeps what local personas are told of (the client
// API's notifications): unique by ID, and by (Recipient, Key) so an
// activity delivered twice records one notification.
type NotificationStore interface {
	// AddNotification stores n (after n.Check); created is false when the
	// recipient has a notification with its key already (that one is
	// kept). An ID held by another notification is
	// domain.ErrAlreadyExists.
	AddNotification(ctx context.Context, n domain.Notification) (created bool, err error)
	// Notifications lists recipient's notifications matching f, newest
	// (greatest id) first, at most f.Limit. With f.MinID it lists the
	// f.Limit ids just above MinID (still newest first); with SinceID the
	// newest above it.
	Notifications(ctx context.Context, recipient string, f domain.NotificationFilter) ([]domain.Notification, error)
	// Notification returns recipient's notification id; domain.ErrNotFound
	// when there is none, or it is another persona's.
	Notification(ctx context.Context, recipient, id string) (domain.Notification, error)
	// DismissNotification deletes recipient's notification id;
	// domain.ErrNotFound when there is none.
	DismissNotification(ctx context.Context, recipient, id string) error
	// ClearNotifications deletes all of recipient's notifications (a
	// persona's clear, or its deletion) and says how many went.
	ClearNotifications(ctx context.Context, recipient string) (int, error)
	// DeleteActorNotifications deletes every notification whose actor is
	// actorURI (a remote actor's Delete of itself) and says how many went.
	DeleteActorNotifications(ctx context.Context, actorURI string) (int, error)
}
