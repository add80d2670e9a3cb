package mongo

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
)

// A persona's conversations are in conversations (migration 017): _id
// is the persona and the conversation id, read along
// conversations_persona_last.
const (
	collConversations           = "conversations"
	idxConversationsPersonaLast = "conversations_persona_last"
)

type conversationDoc struct {
	Key          string   `bson:"_id"`
	ID           string   `bson:"convId"`
	Persona      string   `bson:"persona"`
	Participants []string `bson:"participants"`
	LastStatusID string   `bson:"lastStatusId"`
	Unread       bool     `bson:"unread"`
}

func (d conversationDoc) conversation() domain.Conversation {
	return domain.Conversation{ID: d.ID, Persona: d.Persona, Participants: d.Participants, LastStatusID: d.LastStatusID, Unread: d.Unread}
}

// conversationKey is a conversation's _id: a persona's URI holds no
// space, so the pair is unambiguous.
func conversationKey(persona, id string) string { return persona + " " + id }

// AddToConversation implements ports.ConversationStore in one upsert
// that matches only an older last status: when the held one is newer
// (or the same), the upsert's insert meets the _id already there, and
// that duplicate means nothing is to change.
func (s *NotificationStore) AddToConversation(ctx context.Context, c domain.Conversation) error {
	parts := c.Participants
	if parts == nil {
		parts = []string{}
	}
	key := conversationKey(c.Persona, c.ID)
	filter := bson.D{{Key: "_id", Value: key}, {Key: "lastStatusId", Value: bson.D{{Key: "$lt", Value: c.LastStatusID}}}}
	set := bson.D{{Key: "convId", Value: c.ID}, {Key: "persona", Value: c.Persona}, {Key: "participants", Value: parts},
		{Key: "lastStatusId", Value: c.LastStatusID}, {Key: "unread", Value: c.Unread}}
	_, err := s.convs.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}}, options.Update().SetUpsert(true))
	if err != nil && !mongodrv.IsDuplicateKeyError(err) && !ferretUniqueViolation(err) {
		return fmt.Errorf("conversation %s: %w", c.ID, interpretError(err, nil))
	}
	return nil
}

// Conversations implements ports.ConversationStore: one find along
// conversations_persona_last.
func (s *NotificationStore) Conversations(ctx context.Context, persona string, p domain.ConversationPage) ([]domain.Conversation, error) {
	filter := idRange(bson.D{{Key: "persona", Value: persona}}, "lastStatusId", p.MaxID, p.Above())
	order := -1
	if p.MinID != "" {
		order = 1 // the page just above MinID, reversed below
	}
	opts := options.Find().SetSort(bson.D{{Key: "persona", Value: 1}, {Key: "lastStatusId", Value: order}}).SetLimit(int64(p.Limit))
	out, err := findAll(ctx, s.convs, filter, "conversations of "+persona, conversationDoc.conversation, opts)
	if err != nil {
		return nil, err
	}
	if p.MinID != "" {
		slices.Reverse(out)
	}
	return out, nil
}

// Conversation implements ports.ConversationStore.
func (s *NotificationStore) Conversation(ctx context.Context, persona, id string) (domain.Conversation, error) {
	var d conversationDoc
	if err := s.convs.FindOne(ctx, bson.D{{Key: "_id", Value: conversationKey(persona, id)}}).Decode(&d); err != nil {
		return domain.Conversation{}, fmt.Errorf("conversation %s: %w", id, interpretError(err, nil))
	}
	return d.conversation(), nil
}

// MarkConversationRead implements ports.ConversationStore.
func (s *NotificationStore) MarkConversationRead(ctx context.Context, persona, id string) error {
	res, err := s.convs.UpdateOne(ctx, bson.D{{Key: "_id", Value: conversationKey(persona, id)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "unread", Value: false}}}})
	if err != nil {
		return fmt.Errorf("conversation %s: %w", id, interpretError(err, nil))
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("conversation %s: %w", id, domain.ErrNotFound)
	}
	return nil
}

// HideConversation implements ports.ConversationStore: the document goes
// (AddToConversation makes it again).
func (s *NotificationStore) HideConversation(ctx context.Context, persona, id string) error {
	res, err := s.convs.DeleteOne(ctx, bson.D{{Key: "_id", Value: conversationKey(persona, id)}})
	if err != nil {
		return fmt.Errorf("conversation %s: %w", id, interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("conversation %s: %w", id, domain.ErrNotFound)
	}
	return nil
}
