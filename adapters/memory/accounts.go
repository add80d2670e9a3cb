package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.UserStore  = (*AccountStore)(nil)
	_ ports.TokenStore = (*AccountStore)(nil)
	_ ports.ActorStore = (*AccountStore)(nil)
)

// AccountStore keeps users, their tokens and local actors. One type serves
// three ports because they share nothing but a mutex; each port is still
// satisfied and tested on its own.
type AccountStore struct {
	mu      sync.Mutex
	users   map[string]domain.RootUser // by id
	byName  map[string]string          // user name → id
	tokens  map[string]domain.Token    // by hash
	avatars map[string]domain.Avatar   // by id
	active  map[string]time.Time       // last activity, by avatar id
	groups  map[string]domain.Group    // by id
}

// NewAccountStore returns an empty store.
func NewAccountStore() *AccountStore {
	return &AccountStore{
		users:   make(map[string]domain.RootUser),
		byName:  make(map[string]string),
		tokens:  make(map[string]domain.Token),
		avatars: make(map[string]domain.Avatar),
		active:  make(map[string]time.Time),
		groups:  make(map[string]domain.Group),
	}
}

// CreateUser implements ports.UserStore.
func (s *AccountStore) CreateUser(ctx context.Context, u domain.RootUser) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := ports.StoredStatus(u.Status)
	if err != nil {
		return err
	}
	u.Status = st
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byName[u.UserName]; ok {
		return fmt.Errorf("user %q: %w", u.UserName, domain.ErrNameTaken)
	}
	if _, ok := s.users[u.ID]; ok {
		return fmt.Errorf("user id %q: %w", u.ID, domain.ErrAlreadyExists)
	}
	s.users[u.ID] = u
	s.byName[u.UserName] = u.ID
	return nil
}

// UserByName implements ports.UserStore.
func (s *AccountStore) UserByName(ctx context.Context, name string) (domain.RootUser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.byName[name]; ok {
		return s.users[id], nil
	}
	return domain.RootUser{}, fmt.Errorf("user %q: %w", name, domain.ErrNotFound)
}

// UserByID implements ports.UserStore.
func (s *AccountStore) UserByID(ctx context.Context, id string) (domain.RootUser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return lookup(s.users, "user", id)
}

// DeleteUser implements ports.UserStore.
func (s *AccountStore) DeleteUser(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := lookup(s.users, "user", id)
	if err != nil {
		return err
	}
	delete(s.users, id)
	delete(s.byName, u.UserName)
	return nil
}

// SetUserStatus implements ports.UserStore.
func (s *AccountStore) SetUserStatus(ctx context.Context, id string, st domain.UserStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return change(s.users, "user", id, func(u *domain.RootUser) { u.Status = st })
}

// UsersByStatus implements ports.UserStore: a walk of every user, sorted
// (the memory store holds few).
func (s *AccountStore) UsersByStatus(ctx context.Context, st domain.UserStatus, limit int) ([]domain.RootUser, error) {
	s.mu.Lock()
	out := []domain.RootUser{}
	for _, u := range s.users {
		if u.Status == st {
			out = append(out, u)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b domain.RootUser) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return limitSlice(out, limit), nil
}

// CreateToken implements ports.TokenStore.
func (s *AccountStore) CreateToken(ctx context.Context, t domain.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[t.Hash]; ok {
		return fmt.Errorf("token: %w", domain.ErrAlreadyExists)
	}
	s.tokens[t.Hash] = t
	return nil
}

// TokenByHash implements ports.TokenStore.
func (s *AccountStore) TokenByHash(ctx context.Context, hash string) (domain.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[hash]; ok {
		return t, nil
	}
	return domain.Token{}, fmt.Errorf("token: %w", domain.ErrNotFound)
}

// RevokeToken implements ports.TokenStore.
func (s *AccountStore) RevokeToken(ctx context.Context, hash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[hash]; !ok {
		return fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	delete(s.tokens, hash)
	return nil
}

// CreateAvatar implements ports.ActorStore.
func (s *AccountStore) CreateAvatar(ctx context.Context, a domain.Avatar) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return addNamed(s.avatars, "avatar", a.ID, a.Name, a, func(a domain.Avatar) string { return a.Name })
}

// AvatarByName implements ports.ActorStore.
func (s *AccountStore) AvatarByName(ctx context.Context, name string) (domain.Avatar, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.avatars {
		if a.Name == name && a.DeletedAt.IsZero() {
			return a, nil
		}
	}
	return domain.Avatar{}, fmt.Errorf("avatar %q: %w", name, domain.ErrNotFound)
}

// AvatarByID implements ports.ActorStore.
func (s *AccountStore) AvatarByID(ctx context.Context, id string) (domain.Avatar, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return lookup(s.avatars, "avatar", id)
}

// AvatarsOf implements ports.ActorStore.
func (s *AccountStore) AvatarsOf(ctx context.Context, rootUserID string) ([]domain.Avatar, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Avatar
	for _, a := range s.avatars {
		if a.RootUserID == rootUserID && rootUserID != "" && a.DeletedAt.IsZero() {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b domain.Avatar) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteAvatar implements ports.ActorStore.
func (s *AccountStore) DeleteAvatar(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := drop(s.avatars, "avatar", id); err != nil {
		return err
	}
	delete(s.active, id)
	return nil
}

// TouchAvatars implements ports.ActorStore.
func (s *AccountStore) TouchAvatars(ctx context.Context, ids []string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if a, ok := s.avatars[id]; ok && a.DeletedAt.IsZero() && at.After(s.active[id]) {
			s.active[id] = at.UTC()
		}
	}
	return nil
}

// CountPersonas implements ports.ActorStore.
func (s *AccountStore) CountPersonas(ctx context.Context, activeSince time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, a := range s.avatars {
		if last, ok := s.active[id]; a.RootUserID != "" && a.DeletedAt.IsZero() && (activeSince.IsZero() || ok && !last.Before(activeSince)) {
			n++
		}
	}
	return n, nil
}

// RetireAvatar implements ports.ActorStore.
func (s *AccountStore) RetireAvatar(ctx context.Context, id string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return change(s.avatars, "avatar", id, func(a *domain.Avatar) {
		if a.DeletedAt.IsZero() {
			a.DeletedAt = at.UTC()
		}
	})
}

// RetiredAvatars implements ports.ActorStore.
func (s *AccountStore) RetiredAvatars(ctx context.Context, afterID string, limit int) ([]domain.Avatar, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Avatar
	for _, a := range s.avatars {
		if !a.DeletedAt.IsZero() && a.ID > afterID {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b domain.Avatar) int { return cmp.Compare(a.ID, b.ID) })
	return limitSlice(out, limit), nil
}

// CreateGroup implements ports.ActorStore.
func (s *AccountStore) CreateGroup(ctx context.Context, g domain.Group) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return addNamed(s.groups, "group", g.ID, g.Name, g, func(g domain.Group) string { return g.Name })
}

// GroupByName implements ports.ActorStore.
func (s *AccountStore) GroupByName(ctx context.Context, name string) (domain.Group, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		if g.Name == name {
			return g, nil
		}
	}
	return domain.Group{}, fmt.Errorf("group %q: %w", name, domain.ErrNotFound)
}

// GroupByID implements ports.ActorStore.
func (s *AccountStore) GroupByID(ctx context.Context, id string) (domain.Group, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return lookup(s.groups, "group", id)
}

// DeleteGroup implements ports.ActorStore.
func (s *AccountStore) DeleteGroup(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return drop(s.groups, "group", id)
}
