package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.FanOutStore = (*FanOutStore)(nil)

// FanOutStore keeps fan-out records in fan_outs (migration 010).
type FanOutStore struct{ pool *pgxpool.Pool }

// NewFanOutStore returns the store on pool.
func NewFanOutStore(pool *pgxpool.Pool) *FanOutStore { return &FanOutStore{pool: pool} }

const fanOutColumns = `id, actor_uri, sender_id, key_id, body_id, cursor, total, queued, done, owner, lease_until, created_at, updated_at`

func scanFanOut(row pgx.Row, extra ...any) (domain.FanOut, error) {
	var f domain.FanOut
	var until *time.Time
	dest := append([]any{&f.ID, &f.ActorURI, &f.SenderID, &f.KeyID, &f.BodyID, &f.Cursor, &f.Total, &f.Queued,
		&f.Done, &f.Owner, &until, &f.CreatedAt, &f.UpdatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return domain.FanOut{}, err
	}
	if until != nil {
		f.LeaseUntil = until.UTC()
	}
	f.CreatedAt, f.UpdatedAt = f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	return f, nil
}

// Create implements ports.FanOutStore.
func (s *FanOutStore) Create(ctx context.Context, f domain.FanOut) error {
	_, err := s.pool.Exec(ctx, `
INSERT INTO fan_outs (id, actor_uri, sender_id, key_id, payload, body_id, cursor, total, queued, done, owner, lease_until, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		f.ID, f.ActorURI, f.SenderID, f.KeyID, f.Payload, f.BodyID, f.Cursor, f.Total, f.Queued, f.Done, f.Owner,
		nullTime(f.LeaseUntil), f.CreatedAt, f.UpdatedAt)
	if err != nil {
		return fmt.Errorf("create fan-out %s: %w", f.ID, interpretError(err))
	}
	return nil
}

// Advance implements ports.FanOutStore: one conditional UPDATE; when it
// matches nothing, a second look tells a lost lease from an unknown id.
func (s *FanOutStore) Advance(ctx context.Context, p ports.FanOutProgress) (domain.FanOut, error) {
	until := nullTime(p.Until)
	if p.Done {
		until = nil
	}
	f, err := scanFanOut(s.pool.QueryRow(ctx, `
UPDATE fan_outs SET
    cursor = GREATEST(cursor, $3), queued = queued + $4, done = $5, updated_at = $6,
    owner = CASE WHEN $5 THEN '' ELSE owner END, lease_until = $7
WHERE id = $1 AND owner = $2 AND NOT done
RETURNING `+fanOutColumns, p.ID, p.Owner, p.Cursor, p.Queued, p.Done, p.Now, until))
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return domain.FanOut{}, fmt.Errorf("advance fan-out %s: %w", p.ID, interpretError(err))
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM fan_outs WHERE id = $1)`, p.ID).Scan(&exists); err != nil {
		return domain.FanOut{}, fmt.Errorf("advance fan-out %s: %w", p.ID, interpretError(err))
	}
	if !exists {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrNotFound)
	}
	return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrLeaseLost)
}

// Claim implements ports.FanOutStore: the oldest claimable row, locked with
// SKIP LOCKED so concurrent claims take different rows.
func (s *FanOutStore) Claim(ctx context.Context, owner string, now, until time.Time) (domain.FanOut, error) {
	var payload []byte
	f, err := scanFanOut(s.pool.QueryRow(ctx, `
UPDATE fan_outs SET owner = $1, lease_until = $3, updated_at = $2
WHERE id = (
    SELECT id FROM fan_outs
    WHERE NOT done AND (lease_until IS NULL OR lease_until <= $2)
    ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING `+fanOutColumns+`, payload`, owner, now, until), &payload)
	if err != nil {
		return domain.FanOut{}, fmt.Errorf("claim fan-out: %w", interpretError(err))
	}
	f.Payload = payload
	return f, nil
}

// Get implements ports.FanOutStore.
func (s *FanOutStore) Get(ctx context.Context, id string) (domain.FanOut, error) {
	var payload []byte
	f, err := scanFanOut(s.pool.QueryRow(ctx, `SELECT `+fanOutColumns+`, payload FROM fan_outs WHERE id = $1`, id), &payload)
	if err != nil {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", id, interpretError(err))
	}
	f.Payload = payload
	return f, nil
}

// List implements ports.FanOutStore.
func (s *FanOutStore) List(ctx context.Context, limit int) ([]domain.FanOut, error) {
	out, err := query(ctx, s.pool, func(row pgx.Row) (domain.FanOut, error) { return scanFanOut(row) }, `SELECT `+fanOutColumns+` FROM fan_outs ORDER BY created_at DESC, id DESC LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("list fan-outs: %w", interpretError(err))
	}
	return out, nil
}

// Purge implements ports.FanOutStore.
func (s *FanOutStore) Purge(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM fan_outs WHERE done AND updated_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("purge fan-outs: %w", interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}
