package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.InstanceStore = (*InstanceStore)(nil)

// InstanceStore keeps the circuit breakers in remote_instances.
type InstanceStore struct{ pool *pgxpool.Pool }

// NewInstanceStore returns the store on pool.
func NewInstanceStore(pool *pgxpool.Pool) *InstanceStore { return &InstanceStore{pool: pool} }

const instanceColumns = `host, consecutive_failures, quarantine_level, quarantined_until, last_success_at, last_failure_at, last_error`

func scanInstance(row pgx.Row) (domain.RemoteInstance, error) {
	var r domain.RemoteInstance
	var until, success, failure pgtype.Timestamptz
	if err := row.Scan(&r.Host, &r.ConsecutiveFailures, &r.QuarantineLevel, &until, &success, &failure, &r.LastError); err != nil {
		return domain.RemoteInstance{}, err
	}
	r.QuarantinedUntil, r.LastSuccessAt, r.LastFailureAt = fromOpt(until), fromOpt(success), fromOpt(failure)
	return r, nil
}

// Get implements ports.InstanceStore.
func (s *InstanceStore) Get(ctx context.Context, host string) (domain.RemoteInstance, error) {
	r, err := scanInstance(s.pool.QueryRow(ctx, `SELECT `+instanceColumns+` FROM remote_instances WHERE host = $1`,
		strings.ToLower(host)))
	if err != nil {
		return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w", host, interpretError(err))
	}
	return r, nil
}

// Update implements ports.InstanceStore as a read-modify-write in one
// transaction: the row is created if missing (ON CONFLICT DO NOTHING, so two
// first failures do not collide), locked with FOR UPDATE, changed by fn and
// written back. Concurrent Updates of one host queue on the row lock, so
// each sees the previous one's result and every failure is counted. fn runs
// once per call.
func (s *InstanceStore) Update(ctx context.Context, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error) {
	if err := ctx.Err(); err != nil {
		return domain.RemoteInstance{}, err
	}
	host, err := ports.InstanceHost(host)
	if err != nil {
		return domain.RemoteInstance{}, err
	}
	var out domain.RemoteInstance
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO remote_instances (host) VALUES ($1) ON CONFLICT (host) DO NOTHING`, host); err != nil {
			return err
		}
		r, err := scanInstance(tx.QueryRow(ctx, `SELECT `+instanceColumns+` FROM remote_instances WHERE host = $1 FOR UPDATE`, host))
		if err != nil {
			return err
		}
		fn(&r)
		r.Host = host
		// RETURNING: hand back what is stored (microseconds), not what fn
		// made (nanoseconds), so Update and Get agree.
		out, err = scanInstance(tx.QueryRow(ctx, `
UPDATE remote_instances SET consecutive_failures = $2, quarantine_level = $3, quarantined_until = $4,
	last_success_at = $5, last_failure_at = $6, last_error = $7
WHERE host = $1
RETURNING `+instanceColumns,
			host, r.ConsecutiveFailures, r.QuarantineLevel, optTime(r.QuarantinedUntil),
			optTime(r.LastSuccessAt), optTime(r.LastFailureAt), r.LastError))
		return err
	})
	if err != nil {
		return domain.RemoteInstance{}, fmt.Errorf("update instance %q: %w", host, interpretError(err))
	}
	return out, nil
}

// UpdateMany implements ports.InstanceStore in one transaction of three
// statements whatever the number of hosts: the missing rows are created
// (in host order), every row is locked in host order (so two UpdateManys, or
// an UpdateMany and an Update, overlapping on hosts queue instead of
// deadlocking), fn is applied to each, and one UPDATE from arrays writes
// them all back. fn runs once per host.
func (s *InstanceStore) UpdateMany(ctx context.Context, hosts []string, fn func(*domain.RemoteInstance)) (map[string]domain.RemoteInstance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	keys, err := ports.InstanceHosts(hosts)
	if err != nil {
		return nil, err
	}
	out := make(map[string]domain.RemoteInstance, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO remote_instances (host) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT (host) DO NOTHING`, keys); err != nil {
			return err
		}
		states, err := query(ctx, tx, scanInstance, `SELECT `+instanceColumns+` FROM remote_instances WHERE host = ANY($1) ORDER BY host FOR UPDATE`, keys)
		if err != nil {
			return err
		}
		n := len(states)
		var (
			hs, lastErrors         = make([]string, n), make([]string, n)
			failures, levels       = make([]int32, n), make([]int32, n)
			untils, succ, failedAt = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
		)
		for i, r := range states {
			host := r.Host
			fn(&r)
			r.Host = host
			hs[i], failures[i], levels[i], lastErrors[i] = host, int32(r.ConsecutiveFailures), int32(r.QuarantineLevel), r.LastError
			untils[i], succ[i], failedAt[i] = optTime(r.QuarantinedUntil), optTime(r.LastSuccessAt), optTime(r.LastFailureAt)
		}
		stored, err := query(ctx, tx, scanInstance, `
UPDATE remote_instances r SET consecutive_failures = u.failures, quarantine_level = u.level, quarantined_until = u.until,
	last_success_at = u.success, last_failure_at = u.failure, last_error = u.last_error
FROM unnest($1::text[], $2::int[], $3::int[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[], $7::text[])
	AS u(host, failures, level, until, success, failure, last_error)
WHERE r.host = u.host
RETURNING `+qualified("r", instanceColumns), hs, failures, levels, untils, succ, failedAt, lastErrors)
		for _, r := range stored {
			out[r.Host] = r
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update %d instances: %w", len(keys), interpretError(err))
	}
	return out, nil
}

// List implements ports.InstanceStore.
func (s *InstanceStore) List(ctx context.Context, quarantinedAt time.Time) ([]domain.RemoteInstance, error) {
	out, err := query(ctx, s.pool, scanInstance, `
SELECT `+instanceColumns+` FROM remote_instances
WHERE $1::timestamptz IS NULL OR quarantined_until > $1
ORDER BY host`, optTime(quarantinedAt))
	if err != nil {
		return nil, fmt.Errorf("list instances: %w", interpretError(err))
	}
	return out, nil
}
