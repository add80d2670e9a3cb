package postgres

import (
	"context"
	"fmt"

	pgx "github.com/jackc/pgx/v5"

	"github.com/heraldfed/herald/domain"
)

// A persona's conversations are in conversations (migration 031): one
// row per (persona, id), read along conversations_persona_last_idx.

const conversationColumns = `id, persona, participants, last_status_id, unread`

func scanConversation(row pgx.Row) (domain.Conversation, error) {
	var c domain.Conversation
	if err := row.Scan(&c.ID, &c.Persona, &c.Participants, &c.LastStatusID, &c.Unread); err != nil {
		return domain.Conversation{}, err
	}
	return c, nil
}

// AddToConversation implements ports.ConversationStore in one upsert:
// the row's last status only moves forward.
func (s *NotificationStore) AddToConversation(ctx context.Context, c domain.Conversation) error {
	parts := c.Participants
	if parts == nil {
		parts = []string{}
	}
	_, err := s.pool.Exec(ctx, `
INSERT INTO conversations (`+conversationColumns+`) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (persona, id) DO UPDATE SET participants = excluded.participants, last_status_id = excluded.last_status_id, unread = excluded.unread
WHERE excluded.last_status_id > conversations.last_status_id`,
		c.ID, c.Persona, parts, c.LastStatusID, c.Unread)
	if err != nil {
		return fmt.Errorf("conversation %s: %w", c.ID, interpretError(err))
	}
	return nil
}

// Conversations implements ports.ConversationStore in one indexed query.
func (s *NotificationStore) Conversations(ctx context.Context, persona string, p domain.ConversationPage) ([]domain.Conversation, error) {
	q, args := pageSQL(`SELECT `+conversationColumns+` FROM conversations WHERE persona = $1`, []any{persona},
		"last_status_id", p.MaxID, p.Above(), p.MinID, p.Limit)
	out, err := query(ctx, s.pool, scanConversation, q, args...)
	if err != nil {
		return nil, fmt.Errorf("conversations of %s: %w", persona, interpretError(err))
	}
	return pageRows(out, p.MinID), nil
}

// Conversation implements ports.ConversationStore.
func (s *NotificationStore) Conversation(ctx context.Context, persona, id string) (domain.Conversation, error) {
	c, err := scanConversation(s.pool.QueryRow(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE persona = $1 AND id = $2`, persona, id))
	if err != nil {
		return domain.Conversation{}, fmt.Errorf("conversation %s: %w", id, interpretError(err))
	}
	return c, nil
}

// MarkConversationRead implements ports.ConversationStore.
func (s *NotificationStore) MarkConversationRead(ctx context.Context, persona, id string) error {
	return s.changeConversation(ctx, `UPDATE conversations SET unread = false WHERE persona = $1 AND id = $2`, persona, id)
}

// HideConversation implements ports.ConversationStore: the row goes
// (AddToConversation makes it again).
func (s *NotificationStore) HideConversation(ctx context.Context, persona, id string) error {
	return s.changeConversation(ctx, `DELETE FROM conversations WHERE persona = $1 AND id = $2`, persona, id)
}

func (s *NotificationStore) changeConversation(ctx context.Context, stmt, persona, id string) error {
	tag, err := s.pool.Exec(ctx, stmt, persona, id)
	if err != nil {
		return fmt.Errorf("conversation %s: %w", id, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("conversation %s: %w", id, domain.ErrNotFound)
	}
	return nil
}
