package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// SetAvatarLocked implements ports.ActorStore.
func (s *AccountStore) SetAvatarLocked(ctx context.Context, id string, locked bool) error {
	return s.setActor(ctx, "avatar", `UPDATE avatars SET locked = ? WHERE id = ?`, id, locked)
}

// SetGroupLocked implements ports.ActorStore.
func (s *AccountStore) SetGroupLocked(ctx context.Context, id string, locked bool) error {
	return s.setActor(ctx, "group", `UPDATE groups SET locked = ? WHERE id = ?`, id, locked)
}

// SetAvatarProfile implements ports.ActorStore.
func (s *AccountStore) SetAvatarProfile(ctx context.Context, id, displayName, note string) error {
	return s.setActor(ctx, "avatar", `UPDATE avatars SET display_name = ?, note = ? WHERE id = ?`, id, displayName, note)
}

// SetAvatarKeys implements ports.ActorStore.
// The right-hand sides read the row as it was, so the pair it had
// becomes the previous one in the same write.
func (s *AccountStore) SetAvatarKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return s.setActor(ctx, "avatar", `UPDATE avatars SET `+rotateKeys+` WHERE id = ?`, id, keys.PublicPEM, keys.PrivatePEM, nanos(at))
}

// SetGroupKeys implements ports.ActorStore.
func (s *AccountStore) SetGroupKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error {
	return s.setActor(ctx, "group", `UPDATE groups SET `+rotateKeys+` WHERE id = ?`, id, keys.PublicPEM, keys.PrivatePEM, nanos(at))
}

const rotateKeys = `previous_public_key_pem = public_key_pem, previous_private_key_pem = private_key_pem,
	public_key_pem = ?, private_key_pem = ?, keys_rotated_at = ?`

// setActor runs one UPDATE of an actor row by id (the last argument);
// domain.ErrNotFound when no row has that id.
func (s *AccountStore) setActor(ctx context.Context, what, q, id string, args ...any) error {
	res, err := s.db.w.ExecContext(ctx, q, append(args, id)...)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("%s %q: %w", what, id, domain.ErrNotFound)
	}
	return nil
}
