package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// SetAvatarLocked implements ports.ActorStore.
func (s *AccountStore) SetAvatarLocked(ctx context.Context, id string, locked bool) error {
	return s.setActor(ctx, "avatar", `UPDATE avatars SET locked = $2 WHERE id = $1`, id, locked)
}

// SetGroupLocked implements ports.ActorStore.
func (s *AccountStore) SetGroupLocked(ctx context.Context, id string, locked bool) error {
	return s.setActor(ctx, "group", `UPDATE groups SET locked = $2 WHERE id = $1`, id, locked)
}

// SetAvatarProfile implements ports.ActorStore.
func (s *AccountStore) SetAvatarProfile(ctx context.Context, id, displayName, note string) error {
	return s.setActor(ctx, "avatar", `UPDATE avatars SET display_name = $2, note = $3 WHERE id = $1`, id, displayName, note)
}

// SetAvatarKeys implements ports.ActorStore.
// The right-hand sides read the row as it was, so the pair it had
// becomes the previous one in the same write.
func (s *AccountStore) SetAvatarKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return s.setActor(ctx, "avatar", `UPDATE avatars SET `+rotateKeys+` WHERE id = $1`, id, keys.PublicPEM, keys.PrivatePEM, at.UTC())
}

// SetGroupKeys implements ports.ActorStore.
func (s *AccountStore) SetGroupKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return s.setActor(ctx, "group", `UPDATE groups SET `+rotateKeys+` WHERE id = $1`, id, keys.PublicPEM, keys.PrivatePEM, at.UTC())
}

const rotateKeys = `previous_public_key_pem = public_key_pem, previous_private_key_pem = private_key_pem,
	public_key_pem = $2, private_key_pem = $3, keys_rotated_at = $4`

// setActor runs one UPDATE of an actor row by id ($1); domain.ErrNotFound
// when no row has that id.
func (s *AccountStore) setActor(ctx context.Context, what, q, id string, args ...any) error {
	tag, err := s.pool.Exec(ctx, q, append([]any{id}, args...)...)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, id, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s %q: %w", what, id, domain.ErrNotFound)
	}
	return nil
}
