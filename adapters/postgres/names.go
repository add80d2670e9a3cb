package postgres

import (
	"context"
	"fmt"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.NameRegistry = (*NameRegistry)(nil)

// NameRegistry is the username space in reserved_names, whose primary key
// arbitrates: of two simultaneous reservations the second INSERT waits for
// the first and then fails with a unique violation, which interpretError
// reports as domain.ErrNameTaken.
type NameRegistry struct{ pool *pgxpool.Pool }

// NewNameRegistry returns the registry on pool.
func NewNameRegistry(pool *pgxpool.Pool) *NameRegistry { return &NameRegistry{pool: pool} }

// Reserve implements ports.NameRegistry.
func (r *NameRegistry) Reserve(ctx context.Context, n domain.ReservedName) error {
	_, err := r.pool.Exec(ctx, `INSERT INTO reserved_names (name, kind, owner_id, created_at) VALUES ($1, $2, $3, $4)`,
		n.Name, string(n.Kind), n.OwnerID, n.CreatedAt)
	if err != nil {
		return fmt.Errorf("reserve %q: %w", n.Name, interpretError(err))
	}
	return nil
}

// Release implements ports.NameRegistry.
func (r *NameRegistry) Release(ctx context.Context, name, ownerID string) error {
	tag, err := r.pool.Exec(ctx, `DELETE FROM reserved_names WHERE name = $1 AND owner_id = $2 AND deleted_at IS NULL`, name, ownerID)
	if err != nil {
		return fmt.Errorf("release %q: %w", name, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	return nil
}

const nameColumns = `name, kind, owner_id, created_at, deleted_at`

func scanName(row pgx.Row) (domain.ReservedName, error) {
	var n domain.ReservedName
	var kind string
	var deleted pgtype.Timestamptz
	if err := row.Scan(&n.Name, &kind, &n.OwnerID, &n.CreatedAt, &deleted); err != nil {
		return domain.ReservedName{}, err
	}
	n.Kind = domain.NameKind(kind)
	n.CreatedAt = n.CreatedAt.UTC()
	if deleted.Valid {
		n.DeletedAt = deleted.Time.UTC()
	}
	return n, nil
}

// Get implements ports.NameRegistry.
func (r *NameRegistry) Get(ctx context.Context, name string) (domain.ReservedName, error) {
	n, err := scanName(r.pool.QueryRow(ctx, `SELECT `+nameColumns+` FROM reserved_names WHERE name = $1`, name))
	if err != nil {
		return domain.ReservedName{}, fmt.Errorf("reservation %q: %w", name, interpretError(err))
	}
	return n, nil
}

// List implements ports.NameRegistry.
func (r *NameRegistry) List(ctx context.Context, kind domain.NameKind) ([]domain.ReservedName, error) {
	out, err := query(ctx, r.pool, scanName, `SELECT `+nameColumns+` FROM reserved_names WHERE $1 = '' OR kind = $1 ORDER BY name`, string(kind))
	if err != nil {
		return nil, fmt.Errorf("list reservations: %w", interpretError(err))
	}
	if out == nil {
		out = []domain.ReservedName{}
	}
	return out, nil
}

// MarkDeleted implements ports.NameRegistry.
func (r *NameRegistry) MarkDeleted(ctx context.Context, name, ownerID string, at time.Time) error {
	tag, err := r.pool.Exec(ctx, `UPDATE reserved_names SET deleted_at = coalesce(deleted_at, $3) WHERE name = $1 AND owner_id = $2`,
		name, ownerID, at.UTC())
	if err != nil {
		return fmt.Errorf("mark %q deleted: %w", name, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("reservation %q of %q: %w", name, ownerID, domain.ErrNotFound)
	}
	return nil
}
