package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// conversationsOf is a persona's conversations by id (under s.mu).
func (s *NotificationStore) conversationsOf(persona string) map[string]domain.Conversation {
	if s.convs == nil {
		s.convs = map[string]map[string]domain.Conversation{}
	}
	m := s.convs[persona]
	if m == nil {
		m = map[string]domain.Conversation{}
		s.convs[persona] = m
	}
	return m
}

// AddToConversation implements ports.ConversationStore.
func (s *NotificationStore) AddToConversation(ctx context.Context, c domain.Conversation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.conversationsOf(c.Persona)
	if old, ok := m[c.ID]; ok && old.LastStatusID >= c.LastStatusID {
		return nil
	}
	c.Participants = slices.Clone(c.Participants)
	m[c.ID] = c
	return nil
}

// Conversations implements ports.ConversationStore.
func (s *NotificationStore) Conversations(ctx context.Context, persona string, p domain.ConversationPage) ([]domain.Conversation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []domain.Conversation
	for _, c := range s.convs[persona] {
		if p.Matches(c) {
			c.Participants = slices.Clone(c.Participants)
			all = append(all, c)
		}
	}
	byLast := func(a, b domain.Conversation) int { return strings.Compare(a.LastStatusID, b.LastStatusID) }
	if p.MinID != "" {
		slices.SortFunc(all, byLast) // the page just above MinID, reversed below
		all = all[:min(len(all), p.Limit)]
		slices.Reverse(all)
		return all, nil
	}
	slices.SortFunc(all, func(a, b domain.Conversation) int { return byLast(b, a) })
	return all[:min(len(all), p.Limit)], nil
}

// Conversation implements ports.ConversationStore.
func (s *NotificationStore) Conversation(ctx context.Context, persona, id string) (domain.Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[persona][id]
	if !ok {
		return domain.Conversation{}, fmt.Errorf("conversation %s: %w", id, domain.ErrNotFound)
	}
	c.Participants = slices.Clone(c.Participants)
	return c, nil
}

// MarkConversationRead implements ports.ConversationStore.
func (s *NotificationStore) MarkConversationRead(ctx context.Context, persona, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[persona][id]
	if !ok {
		return fmt.Errorf("conversation %s: %w", id, domain.ErrNotFound)
	}
	c.Unread = false
	s.convs[persona][id] = c
	return nil
}

// HideConversation implements ports.ConversationStore: the conversation
// goes (AddToConversation makes it again).
func (s *NotificationStore) HideConversation(ctx context.Context, persona, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.convs[persona][id]; !ok {
		return fmt.Errorf("conversation %s: %w", id, domain.ErrNotFound)
	}
	delete(s.convs[persona], id)
	return nil
}
