package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// A persona's conversations are in conversations (migration 022): one
// row per (persona, id), read along conversations_persona_last_idx.

const conversationColumns = `id, persona, participants, last_status_id, unread`

func scanConversation(row scanner) (domain.Conversation, error) {
	var c domain.Conversation
	var parts string
	if err := row.Scan(&c.ID, &c.Persona, &parts, &c.LastStatusID, &c.Unread); err != nil {
		return domain.Conversation{}, err
	}
	if err := json.Unmarshal([]byte(parts), &c.Participants); err != nil {
		return domain.Conversation{}, fmt.Errorf("participants of conversation %s: %w", c.ID, err)
	}
	return c, nil
}

// AddToConversation implements ports.ConversationStore in one upsert:
// the row's last status only moves forward.
func (s *NotificationStore) AddToConversation(ctx context.Context, c domain.Conversation) error {
	parts, err := json.Marshal(c.Participants)
	if err != nil {
		return fmt.Errorf("conversation %s: %w", c.ID, err)
	}
	_, err = s.db.w.ExecContext(ctx, `
INSERT INTO conversations (`+conversationColumns+`) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (persona, id) DO UPDATE SET participants = excluded.participants, last_status_id = excluded.last_status_id, unread = excluded.unread
WHERE excluded.last_status_id > conversations.last_status_id`,
		c.ID, c.Persona, string(parts), c.LastStatusID, c.Unread)
	if err != nil {
		return fmt.Errorf("conversation %s: %w", c.ID, interpretError(err))
	}
	return nil
}

// Conversations implements ports.ConversationStore in one indexed query.
func (s *NotificationStore) Conversations(ctx context.Context, persona string, p domain.ConversationPage) ([]domain.Conversation, error) {
	q, args := pageSQL(`SELECT `+conversationColumns+` FROM conversations WHERE persona = ?`, []any{persona},
		"last_status_id", p.MaxID, p.Above(), p.MinID, p.Limit)
	out, err := query(ctx, s.db, scanConversation, q, args...)
	if err != nil {
		return nil, fmt.Errorf("conversations of %s: %w", persona, interpretError(err))
	}
	return pageRows(out, p.MinID), nil
}

// Conversation implements ports.ConversationStore.
func (s *NotificationStore) Conversation(ctx context.Context, persona, id string) (domain.Conversation, error) {
	c, err := scanConversation(s.db.r.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE persona = ? AND id = ?`, persona, id))
	if err != nil {
		return domain.Conversation{}, fmt.Errorf("conversation %s: %w", id, interpretError(err))
	}
	return c, nil
}

// MarkConversationRead implements ports.ConversationStore.
func (s *NotificationStore) MarkConversationRead(ctx context.Context, persona, id string) error {
	return s.changeConversation(ctx, `UPDATE conversations SET unread = 0 WHERE persona = ? AND id = ?`, persona, id)
}

// HideConversation implements ports.ConversationStore: the row goes
// (AddToConversation makes it again).
func (s *NotificationStore) HideConversation(ctx context.Context, persona, id string) error {
	return s.changeConversation(ctx, `DELETE FROM conversations WHERE persona = ? AND id = ?`, persona, id)
}

func (s *NotificationStore) changeConversation(ctx context.Context, stmt, persona, id string) error {
	res, err := s.db.w.ExecContext(ctx, stmt, persona, id)
	if err != nil {
		return fmt.Errorf("conversation %s: %w", id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("conversation %s: %w", id, domain.ErrNotFound)
	}
	return nil
}
