package memory

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
)

// SetAvatarLocked implements ports.ActorStore.
func (s *AccountStore) SetAvatarLocked(ctx context.Context, id string, locked bool) error {
	return s.changeAvatar(ctx, id, func(a *domain.Avatar) { a.Locked = locked })
}

// SetGroupLocked implements ports.ActorStore.
func (s *AccountStore) SetGroupLocked(ctx context.Context, id string, locked bool) error {
	return s.changeGroup(ctx, id, func(g *domain.Group) { g.Locked = locked })
}

// SetAvatarProfile implements ports.ActorStore.
func (s *AccountStore) SetAvatarProfile(ctx context.Context, id, displayName, note string) error {
	return s.changeAvatar(ctx, id, func(a *domain.Avatar) { a.DisplayName, a.Note = displayName, note })
}

// SetAvatarKeys implements ports.ActorStore.
func (s *AccountStore) SetAvatarKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return s.changeAvatar(ctx, id, func(a *domain.Avatar) { a.PreviousKeys, a.Keys, a.KeysRotatedAt = a.Keys, keys, at.UTC() })
}

// SetGroupKeys implements ports.ActorStore.
func (s *AccountStore) SetGroupKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return s.changeGroup(ctx, id, func(g *domain.Group) { g.PreviousKeys, g.Keys, g.KeysRotatedAt = g.Keys, keys, at.UTC() })
}

func (s *AccountStore) changeAvatar(ctx context.Context, id string, fn func(*domain.Avatar)) error {
	return changeActor(ctx, s, s.avatars, "avatar", id, fn)
}

func (s *AccountStore) changeGroup(ctx context.Context, id string, fn func(*domain.Group)) error {
	return changeActor(ctx, s, s.groups, "group", id, fn)
}

// changeActor changes an avatar or a group (m is s.avatars or s.groups,
// maps made once by NewAccountStore) under s's mutex.
func changeActor[V any](ctx context.Context, s *AccountStore, m map[string]V, noun, id string, fn func(*V)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return change(m, noun, id, fn)
}
