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
	// A persona's conversations are kept beside what it is told of.
	ConversationStore
}

// ConversationStore keeps each local persona's direct threads as the
// client API lists them (domain.Conversation), one per (persona, thread).
type ConversationStore interface {
	// AddToConversation records c (from domain.ConversationOf, for a
	// direct post just stored) in its persona's conversation: it becomes
	// its last status, with c's unread, and a hidden conversation shows
	// again. A post older than the conversation's last status changes
	// nothing.
	AddToConversation(ctx context.Context, c domain.Conversation) error
	// Conversations lists persona's conversations in p, newest last
	// status first (with p.MinID, the p.Limit just above it, still newest
	// first).
	Conversations(ctx context.Context, persona string, p domain.ConversationPage) ([]domain.Conversation, error)
	// Conversation returns persona's conversation id; domain.ErrNotFound
	// when it has none (or hid it).
	Conversation(ctx context.Context, persona, id string) (domain.Conversation, error)
	// MarkConversationRead clears its unread; domain.ErrNotFound as
	// Conversation.
	MarkConversationRead(ctx context.Context, persona, id string) error
	// HideConversation removes it from persona's list until a newer post
	// is added to it; domain.ErrNotFound as Conversation.
	HideConversation(ctx context.Context, persona, id string) error
}
