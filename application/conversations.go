package application

import (
	"context"
	"log/slog"
	"strings"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// conversations keeps the client API's conversations as direct posts are
// stored: the publisher's and the inbox's.
type conversations struct {
	store  ports.ConversationStore // nil: none are kept
	actors ports.ActorStore
	urls   URLs
	log    *slog.Logger
}

// add puts the direct post d, just stored, in the conversation of each
// live persona of ours among its participants: its last status, unread
// but for its author (as Mastodon has it). As a notification, a failure
// is logged, not the post's: the post is stored, and a redelivery would
// add nothing.
func (c conversations) add(ctx context.Context, d domain.DmPost) {
	if c.store == nil {
		return
	}
	prefix := c.urls.Persona("")
	for _, u := range d.Participants {
		name, ok := strings.CutPrefix(u, prefix)
		if !ok || name == "" || strings.Contains(name, "/") {
			continue
		}
		a, err := c.actors.AvatarByName(ctx, name)
		if err == nil && !livePersona(a) {
			continue // a retired name, or a deleted persona
		}
		var conv domain.Conversation
		if err == nil {
			conv, err = domain.ConversationOf(u, d)
		}
		if err == nil {
			err = c.store.AddToConversation(ctx, conv)
		}
		if notFound(err) {
			continue
		}
		if err != nil {
			c.log.WarnContext(ctx, "conversation not updated", "persona", u, "post", d.ObjectURI, "err", err)
		}
	}
}
