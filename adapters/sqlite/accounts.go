package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.UserStore  = (*AccountStore)(nil)
	_ ports.TokenStore = (*AccountStore)(nil)
	_ ports.ActorStore = (*AccountStore)(nil)
)

// AccountStore keeps root users, their tokens and local actors (avatars,
// including the instance actor, and groups): the tables root_users, tokens,
// avatars and groups. It serves three ports, as the other adapters' does.
type AccountStore struct{ db *DB }

// NewAccountStore returns the store on db.
func NewAccountStore(db *DB) *AccountStore { return &AccountStore{db: db} }

// CreateUser implements ports.UserStore. A taken user name violates
// root_users_user_name_key (domain.ErrNameTaken); a taken id the primary
// key (domain.ErrAlreadyExists).
func (s *AccountStore) CreateUser(ctx context.Context, u domain.RootUser) error {
	st, err := ports.StoredStatus(u.Status)
	if err != nil {
		return err
	}
	_, err = s.db.w.ExecContext(ctx, `INSERT INTO root_users (id, user_name, password_hash, created_at, status, reason) VALUES (?, ?, ?, ?, ?, ?)`,
		u.ID, u.UserName, u.PasswordHash, nanos(u.CreatedAt), string(st), u.Reason)
	if err != nil {
		return fmt.Errorf("user %q: %w", u.UserName, interpretError(err))
	}
	return nil
}

const userColumns = `id, user_name, password_hash, created_at, status, reason`

func scanUser(row scanner) (domain.RootUser, error) {
	var u domain.RootUser
	var created sql.NullInt64
	var status string
	if err := row.Scan(&u.ID, &u.UserName, &u.PasswordHash, &created, &status, &u.Reason); err != nil {
		return domain.RootUser{}, err
	}
	u.CreatedAt, u.Status = fromNanos(created), domain.UserStatus(status)
	return u, nil
}

// user reads one user; column is one of two constants, never input.
func (s *AccountStore) user(ctx context.Context, what, column, arg string) (domain.RootUser, error) {
	u, err := scanUser(s.db.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM root_users WHERE `+column+` = ?`, arg))
	if err != nil {
		return domain.RootUser{}, fmt.Errorf("user %s %q: %w", what, arg, interpretError(err))
	}
	return u, nil
}

// SetUserStatus implements ports.UserStore.
func (s *AccountStore) SetUserStatus(ctx context.Context, id string, st domain.UserStatus) error {
	res, err := s.db.w.ExecContext(ctx, `UPDATE root_users SET status = ? WHERE id = ?`, string(st), id)
	if err != nil {
		return fmt.Errorf("status of user %q: %w", id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("user %q: %w", id, domain.ErrNotFound)
	}
	return nil
}

// UsersByStatus implements ports.UserStore along
// root_users_status_created_idx (a NULL created_at, the zero time, sorts
// first, as the oldest).
func (s *AccountStore) UsersByStatus(ctx context.Context, st domain.UserStatus, limit int) ([]domain.RootUser, error) {
	out, err := query(ctx, s.db, scanUser, `SELECT `+userColumns+` FROM root_users WHERE status = ? ORDER BY created_at, id LIMIT ?`,
		string(st), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("users %s: %w", st, interpretError(err))
	}
	return out, nil
}

// UserByName implements ports.UserStore.
func (s *AccountStore) UserByName(ctx context.Context, name string) (domain.RootUser, error) {
	return s.user(ctx, "name", "user_name", name)
}

// UserByID implements ports.UserStore.
func (s *AccountStore) UserByID(ctx context.Context, id string) (domain.RootUser, error) {
	return s.user(ctx, "id", "id", id)
}

// DeleteUser implements ports.UserStore.
func (s *AccountStore) DeleteUser(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "user", "root_users", id)
}

// deleteByID deletes one row by id, domain.ErrNotFound if there was none.
// table is one of this file's constants, never input.
func (s *AccountStore) deleteByID(ctx context.Context, what, table, id string) error {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete %s %q: %w", what, id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("%s %q: %w", what, id, domain.ErrNotFound)
	}
	return nil
}

// CreateToken implements ports.TokenStore.
func (s *AccountStore) CreateToken(ctx context.Context, t domain.Token) error {
	_, err := s.db.w.ExecContext(ctx, `INSERT INTO tokens (hash, user_id, created_at) VALUES (?, ?, ?)`, t.Hash, t.UserID, nanos(t.CreatedAt))
	if err != nil {
		// Never the hash in a message: it is as good as the token to a
		// reader of logs who also has the database.
		return fmt.Errorf("token of user %q: %w", t.UserID, interpretError(err))
	}
	return nil
}

// TokenByHash implements ports.TokenStore.
func (s *AccountStore) TokenByHash(ctx context.Context, hash string) (domain.Token, error) {
	var t domain.Token
	var created sql.NullInt64
	err := s.db.r.QueryRowContext(ctx, `SELECT hash, user_id, created_at FROM tokens WHERE hash = ?`, hash).
		Scan(&t.Hash, &t.UserID, &created)
	if err != nil {
		return domain.Token{}, fmt.Errorf("token: %w", interpretError(err))
	}
	t.CreatedAt = fromNanos(created)
	return t, nil
}

// RevokeToken implements ports.TokenStore.
func (s *AccountStore) RevokeToken(ctx context.Context, hash string) error {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM tokens WHERE hash = ?`, hash)
	if err != nil {
		return fmt.Errorf("revoke token: %w", interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	return nil
}

const avatarColumns = `id, root_user_id, name, display_name, public_key_pem, private_key_pem, created_at, locked,
	previous_public_key_pem, previous_private_key_pem, keys_rotated_at, note`

// avatarRead is what the reads select: avatarColumns and the retirement.
const avatarRead = avatarColumns + `, deleted_at`

func scanAvatar(row scanner) (domain.Avatar, error) {
	var a domain.Avatar
	var root sql.NullString
	var created, rotated, deleted sql.NullInt64
	if err := row.Scan(&a.ID, &root, &a.Name, &a.DisplayName, &a.Keys.PublicPEM, &a.Keys.PrivatePEM, &created, &a.Locked,
		&a.PreviousKeys.PublicPEM, &a.PreviousKeys.PrivatePEM, &rotated, &a.Note, &deleted); err != nil {
		return domain.Avatar{}, err
	}
	a.KeysRotatedAt = fromNanos(rotated)
	a.RootUserID = root.String // NULL (the instance actor) reads as ""
	a.CreatedAt, a.DeletedAt = fromNanos(created), fromNanos(deleted)
	return a, nil
}

// CreateAvatar implements ports.ActorStore. The instance actor (no owner) is
// stored with a NULL root_user_id. A taken name violates avatars_name_key
// (domain.ErrNameTaken), a taken id the primary key (domain.ErrAlreadyExists).
func (s *AccountStore) CreateAvatar(ctx context.Context, a domain.Avatar) error {
	root := sql.NullString{String: a.RootUserID, Valid: a.RootUserID != ""}
	_, err := s.db.w.ExecContext(ctx, `INSERT INTO avatars (`+avatarColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, root, a.Name, a.DisplayName, a.Keys.PublicPEM, a.Keys.PrivatePEM, nanos(a.CreatedAt), a.Locked,
		a.PreviousKeys.PublicPEM, a.PreviousKeys.PrivatePEM, nanos(a.KeysRotatedAt), a.Note)
	if err != nil {
		return fmt.Errorf("avatar %q: %w", a.Name, interpretError(err))
	}
	return nil
}

// avatar reads one avatar where column = arg (and, from AvatarByName, a
// condition more: where is one of this file's constants, never input).
func (s *AccountStore) avatar(ctx context.Context, what, where, arg string) (domain.Avatar, error) {
	a, err := scanAvatar(s.db.r.QueryRowContext(ctx, `SELECT `+avatarRead+` FROM avatars WHERE `+where, arg))
	if err != nil {
		return domain.Avatar{}, fmt.Errorf("avatar %s %q: %w", what, arg, interpretError(err))
	}
	return a, nil
}

// AvatarByName implements ports.ActorStore.
func (s *AccountStore) AvatarByName(ctx context.Context, name string) (domain.Avatar, error) {
	return s.avatar(ctx, "name", `name = ? AND deleted_at IS NULL`, name)
}

// AvatarByID implements ports.ActorStore.
func (s *AccountStore) AvatarByID(ctx context.Context, id string) (domain.Avatar, error) {
	return s.avatar(ctx, "id", `id = ?`, id)
}

// AvatarsOf implements ports.ActorStore. An empty rootUserID matches
// nothing: the instance actor is nobody's persona.
func (s *AccountStore) AvatarsOf(ctx context.Context, rootUserID string) ([]domain.Avatar, error) {
	out, err := query(ctx, s.db, scanAvatar, `SELECT `+avatarRead+` FROM avatars WHERE root_user_id = ? AND deleted_at IS NULL ORDER BY name`, rootUserID)
	if err != nil {
		return nil, fmt.Errorf("avatars of %q: %w", rootUserID, interpretError(err))
	}
	return out, nil
}

// DeleteAvatar implements ports.ActorStore.
func (s *AccountStore) DeleteAvatar(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "avatar", "avatars", id)
}

// TouchAvatars implements ports.ActorStore: one UPDATE for every id.
func (s *AccountStore) TouchAvatars(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	args := append([]any{stamp(at), stamp(at)}, anys(ids)...)
	// SQLite's two-argument max() is NULL if either is: hence coalesce.
	q := `UPDATE avatars SET last_active_at = max(coalesce(last_active_at, ?), ?) WHERE deleted_at IS NULL AND id IN (` + placeholders(len(ids)) + `)`
	if _, err := s.db.w.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("touch %d avatars: %w", len(ids), interpretError(err))
	}
	return nil
}

// CountPersonas implements ports.ActorStore.
func (s *AccountStore) CountPersonas(ctx context.Context, activeSince time.Time) (int, error) {
	q, args := `SELECT count(*) FROM avatars WHERE root_user_id IS NOT NULL AND deleted_at IS NULL`, []any{}
	if !activeSince.IsZero() {
		q, args = q+` AND last_active_at >= ?`, append(args, stamp(activeSince))
	}
	var n int
	if err := s.db.r.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count personas: %w", interpretError(err))
	}
	return n, nil
}

// RetireAvatar implements ports.ActorStore.
func (s *AccountStore) RetireAvatar(ctx context.Context, id string, at time.Time) error {
	res, err := s.db.w.ExecContext(ctx, `UPDATE avatars SET deleted_at = coalesce(deleted_at, ?) WHERE id = ?`, stamp(at), id)
	if err != nil {
		return fmt.Errorf("retire avatar %q: %w", id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("avatar %q: %w", id, domain.ErrNotFound)
	}
	return nil
}

// RetiredAvatars implements ports.ActorStore, from avatars_retired_idx.
func (s *AccountStore) RetiredAvatars(ctx context.Context, afterID string, limit int) ([]domain.Avatar, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	out, err := query(ctx, s.db, scanAvatar,
		`SELECT `+avatarRead+` FROM avatars WHERE deleted_at IS NOT NULL AND id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("retired avatars: %w", interpretError(err))
	}
	return out, nil
}

const groupColumns = `id, owner_id, name, display_name, public_key_pem, private_key_pem, created_at, locked,
	previous_public_key_pem, previous_private_key_pem, keys_rotated_at`

// CreateGroup implements ports.ActorStore; errors as CreateAvatar's, with
// groups_name_key.
func (s *AccountStore) CreateGroup(ctx context.Context, g domain.Group) error {
	_, err := s.db.w.ExecContext(ctx, `INSERT INTO groups (`+groupColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.OwnerID, g.Name, g.DisplayName, g.Keys.PublicPEM, g.Keys.PrivatePEM, nanos(g.CreatedAt), g.Locked,
		g.PreviousKeys.PublicPEM, g.PreviousKeys.PrivatePEM, nanos(g.KeysRotatedAt))
	if err != nil {
		return fmt.Errorf("group %q: %w", g.Name, interpretError(err))
	}
	return nil
}

func (s *AccountStore) group(ctx context.Context, what, column, arg string) (domain.Group, error) {
	var g domain.Group
	var created, rotated sql.NullInt64
	err := s.db.r.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM groups WHERE `+column+` = ?`, arg).
		Scan(&g.ID, &g.OwnerID, &g.Name, &g.DisplayName, &g.Keys.PublicPEM, &g.Keys.PrivatePEM, &created, &g.Locked,
			&g.PreviousKeys.PublicPEM, &g.PreviousKeys.PrivatePEM, &rotated)
	if err != nil {
		return domain.Group{}, fmt.Errorf("group %s %q: %w", what, arg, interpretError(err))
	}
	g.KeysRotatedAt = fromNanos(rotated)
	g.CreatedAt = fromNanos(created)
	return g, nil
}

// GroupByName implements ports.ActorStore.
func (s *AccountStore) GroupByName(ctx context.Context, name string) (domain.Group, error) {
	return s.group(ctx, "name", "name", name)
}

// GroupByID implements ports.ActorStore.
func (s *AccountStore) GroupByID(ctx context.Context, id string) (domain.Group, error) {
	return s.group(ctx, "id", "id", id)
}

// DeleteGroup implements ports.ActorStore.
func (s *AccountStore) DeleteGroup(ctx context.Context, id string) error {
	return s.deleteByID(ctx, "group", "groups", id)
}
