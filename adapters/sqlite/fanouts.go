package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.FanOutStore = (*FanOutStore)(nil)

// FanOutStore keeps fan-out records in fan_outs (migration 008). Every
// write goes through the one writer connection, so a claim's select and
// update cannot interleave with another's.
type FanOutStore struct{ db *DB }

// NewFanOutStore returns the store on db.
func NewFanOutStore(db *DB) *FanOutStore { return &FanOutStore{db: db} }

const fanOutColumns = `id, actor_uri, sender_id, key_id, body_id, cursor, total, queued, done, owner, lease_until, created_at, updated_at`

func scanFanOut(row scanner, extra ...any) (domain.FanOut, error) {
	var f domain.FanOut
	var until, created, updated sql.NullInt64
	dest := append([]any{&f.ID, &f.ActorURI, &f.SenderID, &f.KeyID, &f.BodyID, &f.Cursor, &f.Total, &f.Queued,
		&f.Done, &f.Owner, &until, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return domain.FanOut{}, err
	}
	f.LeaseUntil, f.CreatedAt, f.UpdatedAt = fromNanos(until), fromNanos(created), fromNanos(updated)
	return f, nil
}

// Create implements ports.FanOutStore.
func (s *FanOutStore) Create(ctx context.Context, f domain.FanOut) error {
	_, err := s.db.w.ExecContext(ctx, `
INSERT INTO fan_outs (id, actor_uri, sender_id, key_id, payload, body_id, cursor, total, queued, done, owner, lease_until, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, f.ActorURI, f.SenderID, f.KeyID, f.Payload, f.BodyID, f.Cursor, f.Total, f.Queued, f.Done, f.Owner,
		nanos(f.LeaseUntil), nanos(f.CreatedAt), nanos(f.UpdatedAt))
	if err != nil {
		return fmt.Errorf("create fan-out %s: %w", f.ID, interpretError(err))
	}
	return nil
}

// Advance implements ports.FanOutStore.
func (s *FanOutStore) Advance(ctx context.Context, p ports.FanOutProgress) (domain.FanOut, error) {
	until := nanos(p.Until)
	if p.Done {
		until = nil
	}
	f, err := scanFanOut(s.db.w.QueryRowContext(ctx, `
UPDATE fan_outs SET
    cursor = max(cursor, ?3), queued = queued + ?4, done = ?5, updated_at = ?6,
    owner = CASE WHEN ?5 THEN '' ELSE owner END, lease_until = ?7
WHERE id = ?1 AND owner = ?2 AND done = 0
RETURNING `+fanOutColumns, p.ID, p.Owner, p.Cursor, p.Queued, p.Done, nanos(p.Now), until))
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return domain.FanOut{}, fmt.Errorf("advance fan-out %s: %w", p.ID, interpretError(err))
	}
	var n int
	if err := s.db.w.QueryRowContext(ctx, `SELECT count(*) FROM fan_outs WHERE id = ?`, p.ID).Scan(&n); err != nil {
		return domain.FanOut{}, fmt.Errorf("advance fan-out %s: %w", p.ID, interpretError(err))
	}
	if n == 0 {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrNotFound)
	}
	return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", p.ID, domain.ErrLeaseLost)
}

// Claim implements ports.FanOutStore: one UPDATE on the single writer, so
// two claims never take the same record.
func (s *FanOutStore) Claim(ctx context.Context, owner string, now, until time.Time) (domain.FanOut, error) {
	var payload []byte
	f, err := scanFanOut(s.db.w.QueryRowContext(ctx, `
UPDATE fan_outs SET owner = ?1, lease_until = ?3, updated_at = ?2
WHERE id = (
    SELECT id FROM fan_outs
    WHERE done = 0 AND (lease_until IS NULL OR lease_until <= ?2)
    ORDER BY created_at, id LIMIT 1)
RETURNING `+fanOutColumns+`, payload`, owner, nanos(now), nanos(until)), &payload)
	if err != nil {
		return domain.FanOut{}, fmt.Errorf("claim fan-out: %w", interpretError(err))
	}
	f.Payload = payload
	return f, nil
}

// Get implements ports.FanOutStore.
func (s *FanOutStore) Get(ctx context.Context, id string) (domain.FanOut, error) {
	var payload []byte
	f, err := scanFanOut(s.db.r.QueryRowContext(ctx, `SELECT `+fanOutColumns+`, payload FROM fan_outs WHERE id = ?`, id), &payload)
	if err != nil {
		return domain.FanOut{}, fmt.Errorf("fan-out %s: %w", id, interpretError(err))
	}
	f.Payload = payload
	return f, nil
}

// List implements ports.FanOutStore.
func (s *FanOutStore) List(ctx context.Context, limit int) ([]domain.FanOut, error) {
	out, err := query(ctx, s.db, func(r scanner) (domain.FanOut, error) { return scanFanOut(r) },
		`SELECT `+fanOutColumns+` FROM fan_outs ORDER BY created_at DESC, id DESC LIMIT ?`, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("list fan-outs: %w", interpretError(err))
	}
	return out, nil
}

// Purge implements ports.FanOutStore.
func (s *FanOutStore) Purge(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM fan_outs WHERE done = 1 AND updated_at < ?`, nanos(before))
	if err != nil {
		return 0, fmt.Errorf("purge fan-outs: %w", interpretError(err))
	}
	return affected(res), nil
}
