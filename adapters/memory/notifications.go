package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.NotificationStore = (*NotificationStore)(nil)

// NotificationStore keeps notifications by id, with each recipient's ids
// in order and its keys.
type NotificationStore struct {
	mu    sync.Mutex
	byID  map[string]domain.Notification
	ids   map[string][]string // recipient -> ids, ascending
	byKey map[[2]string]string
	convs map[string]map[string]domain.Conversation // persona -> id -> conversation
}

// NewNotificationStore returns an empty store.
func NewNotificationStore() *NotificationStore {
	return &NotificationStore{byID: map[string]domain.Notification{}, ids: map[string][]string{}, byKey: map[[2]string]string{}}
}

// AddNotification implements ports.NotificationStore.
func (s *NotificationStore) AddNotification(ctx context.Context, n domain.Notification) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	n.CreatedAt = n.CreatedAt.UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byKey[[2]string{n.Recipient, n.Key}]; ok {
		return false, nil
	}
	if _, ok := s.byID[n.ID]; ok {
		return false, fmt.Errorf("notification %s: %w", n.ID, domain.ErrAlreadyExists)
	}
	s.byID[n.ID] = n
	s.byKey[[2]string{n.Recipient, n.Key}] = n.ID
	ids := s.ids[n.Recipient]
	i, _ := slices.BinarySearch(ids, n.ID)
	s.ids[n.Recipient] = slices.Insert(ids, i, n.ID)
	return true, nil
}

// Notifications implements ports.NotificationStore.
func (s *NotificationStore) Notifications(ctx context.Context, recipient string, f domain.NotificationFilter) ([]domain.Notification, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.ids[recipient]
	var out []domain.Notification
	if f.MinID != "" {
		// The page just above MinID: ascending from it, then reversed.
		for _, id := range ids {
			if n := s.byID[id]; f.Matches(n) {
				out = append(out, n)
				if len(out) == f.Limit {
					break
				}
			}
		}
		slices.Reverse(out)
		return out, nil
	}
	for i := len(ids) - 1; i >= 0 && len(out) < f.Limit; i-- {
		if n := s.byID[ids[i]]; f.Matches(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Notification implements ports.NotificationStore.
func (s *NotificationStore) Notification(ctx context.Context, recipient, id string) (domain.Notification, error) {
	if err := ctx.Err(); err != nil {
		return domain.Notification{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.byID[id]
	if !ok || n.Recipient != recipient {
		return domain.Notification{}, fmt.Errorf("notification %s: %w", id, domain.ErrNotFound)
	}
	return n, nil
}

// DismissNotification implements ports.NotificationStore.
func (s *NotificationStore) DismissNotification(ctx context.Context, recipient, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.byID[id]
	if !ok || n.Recipient != recipient {
		return fmt.Errorf("notification %s: %w", id, domain.ErrNotFound)
	}
	s.remove(n)
	return nil
}

// ClearNotifications implements ports.NotificationStore.
func (s *NotificationStore) ClearNotifications(ctx context.Context, recipient string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Clone(s.ids[recipient])
	for _, id := range ids {
		s.remove(s.byID[id])
	}
	return len(ids), nil
}

// DeleteActorNotifications implements ports.NotificationStore.
func (s *NotificationStore) DeleteActorNotifications(ctx context.Context, actorURI string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []domain.Notification
	for _, n := range s.byID {
		if n.ActorURI == actorURI {
			gone = append(gone, n)
		}
	}
	for _, n := range gone {
		s.remove(n)
	}
	return len(gone), nil
}

// remove deletes n from the three maps; the caller holds mu.
func (s *NotificationStore) remove(n domain.Notification) {
	delete(s.byID, n.ID)
	delete(s.byKey, [2]string{n.Recipient, n.Key})
	ids := s.ids[n.Recipient]
	if i, ok := slices.BinarySearchFunc(ids, n.ID, strings.Compare); ok {
		ids = slices.Delete(ids, i, i+1)
	}
	if len(ids) == 0 {
		delete(s.ids, n.Recipient)
	} else {
		s.ids[n.Recipient] = ids
	}
}
