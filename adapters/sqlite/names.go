package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.NameRegistry = (*NameRegistry)(nil)

// NameRegistry is the username space in reserved_names, whose primary key
// arbitrates: the writes of this process queue on the one writer
// connection (and another process's behind SQLite's write lock), so of two
// reservations of one name the second INSERT meets the first's row and
// fails with a unique violation, which interpretError reports as
// domain.ErrNameTaken.
type NameRegistry struct{ db *DB }

// NewNameRegistry returns the registry on db.
func NewNameRegistry(db *DB) *NameRegistry { return &NameRegistry{db: db} }

// Reserve implements ports.NameRegistry.
func (r *NameRegistry) Reserve(ctx context.Context, n domain.ReservedName) error {
	_, err := r.db.w.ExecContext(ctx, `INSERT INTO reserved_names (name, kind, owner_id, created_at) VALUES (?, ?, ?, ?)`,
		n.Name, string(n.Kind), n.OwnerID, nanos(n.CreatedAt))
	if err != nil {
		return fmt.Errorf("reserve %q: %w", n.Name, interpretError(err))
	}
	return nil
}

// Release implements ports.NameRegistry.
func (r *NameRegistry) Release(ctx context.Context, name, ownerID string) error {
	res, err := r.db.w.ExecContext(ctx, `DELETE FROM reserved_names WHERE name = ? AND owner_id = ? AND deleted_at IS NULL`, name, ownerID)
	if err != nil {
		return fmt.Errorf("release %q: %w", name, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	return nil
}

const reservedColumns = `name, kind, owner_id, created_at, deleted_at`

func scanName(row scanner) (domain.ReservedName, error) {
	var n domain.ReservedName
	var kind string
	var created, deleted sql.NullInt64
	if err := row.Scan(&n.Name, &kind, &n.OwnerID, &created, &deleted); err != nil {
		return domain.ReservedName{}, err
	}
	n.Kind = domain.NameKind(kind)
	n.CreatedAt, n.DeletedAt = fromNanos(created), fromNanos(deleted)
	return n, nil
}

// Get implements ports.NameRegistry.
func (r *NameRegistry) Get(ctx context.Context, name string) (domain.ReservedName, error) {
	n, err := scanName(r.db.r.QueryRowContext(ctx, `SELECT `+reservedColumns+` FROM reserved_names WHERE name = ?`, name))
	if err != nil {
		return domain.ReservedName{}, fmt.Errorf("reservation %q: %w", name, interpretError(err))
	}
	return n, nil
}

// List implements ports.NameRegistry.
func (r *NameRegistry) List(ctx context.Context, kind domain.NameKind) ([]domain.ReservedName, error) {
	out, err := query(ctx, r.db, scanName,
		`SELECT `+reservedColumns+` FROM reserved_names WHERE ?1 = '' OR kind = ?1 ORDER BY name`, string(kind))
	if err != nil {
		return nil, fmt.Errorf("list reservations: %w", interpretError(err))
	}
	return out, nil
}

// MarkDeleted implements ports.NameRegistry.
func (r *NameRegistry) MarkDeleted(ctx context.Context, name, ownerID string, at time.Time) error {
	res, err := r.db.w.ExecContext(ctx, `UPDATE reserved_names SET deleted_at = coalesce(deleted_at, ?) WHERE name = ? AND owner_id = ?`,
		stamp(at), name, ownerID)
	if err != nil {
		return fmt.Errorf("mark %q deleted: %w", name, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	return nil
}
