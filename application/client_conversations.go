package application

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
)

// ConversationsHandler lists, marks read and hides the conversations of
// the token's persona (Mastodon's /api/v1/conversations): its direct
// threads, kept as their posts are stored (conversations.go).
type ConversationsHandler struct{ deps Deps }

// ConversationItem is one conversation with what its entity shows.
type ConversationItem struct {
	domain.Conversation
	// Others are the participants but the persona.
	Others []string
	// Last is the thread's newest direct post the persona may see, as a
	// status of visibility direct; zero when none is left.
	Last domain.Post
}

// ConversationsPage is a page of conversations, newest last status first:
// its ids are last status ids.
type ConversationsPage = ListPage[ConversationItem]

func (h ConversationsHandler) me(p Principal) (string, error) {
	return notedPersona(h.deps, p, "conversations")
}

// List returns a page of the persona's conversations.
func (h ConversationsHandler) List(ctx context.Context, p Principal, page domain.ConversationPage) (ConversationsPage, error) {
	me, err := h.me(p)
	if err != nil {
		return ConversationsPage{}, err
	}
	cs, err := h.deps.Notifications.Conversations(ctx, me, page)
	if err != nil {
		return ConversationsPage{}, err
	}
	return pageOf(cs, func(c domain.Conversation) string { return c.LastStatusID }, func(c domain.Conversation) (ConversationItem, bool, error) {
		it, err := h.item(ctx, me, c)
		return it, true, err
	})
}

// Read marks one of the persona's conversations read and returns it;
// domain.ErrNotFound for another persona's or a hidden one.
func (h ConversationsHandler) Read(ctx context.Context, p Principal, id string) (ConversationItem, error) {
	me, err := h.me(p)
	if err != nil {
		return ConversationItem{}, err
	}
	if err := h.deps.Notifications.MarkConversationRead(ctx, me, id); err != nil {
		return ConversationItem{}, err
	}
	c, err := h.deps.Notifications.Conversation(ctx, me, id)
	if err != nil {
		return ConversationItem{}, err
	}
	return h.item(ctx, me, c)
}

// Hide removes one of the persona's conversations from its list until a
// new direct post of the thread arrives; domain.ErrNotFound as Read.
func (h ConversationsHandler) Hide(ctx context.Context, p Principal, id string) error {
	me, err := h.me(p)
	if err != nil {
		return err
	}
	return h.deps.Notifications.HideConversation(ctx, me, id)
}

// item reads what c's entity shows: its last status (or, when that one
// was deleted, the newest left in the thread).
func (h ConversationsHandler) item(ctx context.Context, me string, c domain.Conversation) (ConversationItem, error) {
	it := ConversationItem{Conversation: c}
	for _, u := range c.Participants {
		if u != me {
			it.Others = append(it.Others, u)
		}
	}
	d, err := h.deps.Posts.DmByID(ctx, c.LastStatusID)
	if notFound(err) {
		var left []domain.DmPost
		if left, err = h.deps.Posts.DmThread(ctx, c.ID, time.Time{}, 1); err == nil {
			if len(left) == 0 {
				return it, nil
			}
			d = left[0]
		}
	}
	if err != nil {
		return ConversationItem{}, err
	}
	it.Last = directStatus(d)
	return it, nil
}
