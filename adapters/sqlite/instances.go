package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.InstanceStore = (*InstanceStore)(nil)

// InstanceStore keeps the circuit breakers in remote_instances.
type InstanceStore struct{ db *DB }

// NewInstanceStore returns the store on db.
func NewInstanceStore(db *DB) *InstanceStore { return &InstanceStore{db: db} }

const instanceColumns = `host, consecutive_failures, quarantine_level, quarantined_until, last_success_at, last_failure_at, last_error`

func scanInstance(row scanner) (domain.RemoteInstance, error) {
	var r domain.RemoteInstance
	var until, success, failure sql.NullInt64
	if err := row.Scan(&r.Host, &r.ConsecutiveFailures, &r.QuarantineLevel, &until, &success, &failure, &r.LastError); err != nil {
		return domain.RemoteInstance{}, err
	}
	r.QuarantinedUntil, r.LastSuccessAt, r.LastFailureAt = fromNanos(until), fromNanos(success), fromNanos(failure)
	return r, nil
}

// Get implements ports.InstanceStore.
func (s *InstanceStore) Get(ctx context.Context, host string) (domain.RemoteInstance, error) {
	r, err := scanInstance(s.db.r.QueryRowContext(ctx, `SELECT `+instanceColumns+` FROM remote_instances WHERE host = ?`,
		strings.ToLower(host)))
	if err != nil {
		return domain.RemoteInstance{}, fmt.Errorf("instance %q: %w", host, interpretError(err))
	}
	return r, nil
}

// Update implements ports.InstanceStore as a read-modify-write in one
// write transaction. BEGIN IMMEDIATE takes SQLite's write lock first, so
// no other write (of this process, which has one writer connection, or of
// another) comes between the read and the write: concurrent Updates of one
// host run one after the other, each seeing the previous one's result, and
// every failure is counted. fn runs once per call.
func (s *InstanceStore) Update(ctx context.Context, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error) {
	if err := ctx.Err(); err != nil {
		return domain.RemoteInstance{}, err
	}
	host, err := ports.InstanceHost(host)
	if err != nil {
		return domain.RemoteInstance{}, err
	}
	var out domain.RemoteInstance
	err = s.db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = updateIn(ctx, tx, host, fn)
		return err
	})
	if err != nil {
		return domain.RemoteInstance{}, fmt.Errorf("update instance %q: %w", host, interpretError(err))
	}
	return out, nil
}

// UpdateMany implements ports.InstanceStore: Update for every distinct
// host, all in one write transaction (one fsync). The write lock is the
// whole database's, taken at BEGIN, so no host's read-modify-write can be
// interleaved with another writer's and two callers never deadlock: the
// second waits for the first's commit. fn runs once per host.
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
	err = s.db.inTx(ctx, func(tx *sql.Tx) error {
		for _, h := range keys {
			r, err := updateIn(ctx, tx, h, fn)
			if err != nil {
				return err
			}
			out[h] = r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update %d instances: %w", len(keys), interpretError(err))
	}
	return out, nil
}

// updateIn is one host's read-modify-write inside a write transaction:
// the row is created when missing, read, changed by fn and written back.
func updateIn(ctx context.Context, tx *sql.Tx, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO remote_instances (host) VALUES (?) ON CONFLICT (host) DO NOTHING`, host); err != nil {
		return domain.RemoteInstance{}, err
	}
	r, err := scanInstance(tx.QueryRowContext(ctx, `SELECT `+instanceColumns+` FROM remote_instances WHERE host = ?`, host))
	if err != nil {
		return domain.RemoteInstance{}, err
	}
	fn(&r)
	r.Host = host
	return scanInstance(tx.QueryRowContext(ctx, `
UPDATE remote_instances SET consecutive_failures = ?, quarantine_level = ?, quarantined_until = ?,
	last_success_at = ?, last_failure_at = ?, last_error = ?
WHERE host = ?
RETURNING `+instanceColumns,
		r.ConsecutiveFailures, r.QuarantineLevel, nanos(r.QuarantinedUntil),
		nanos(r.LastSuccessAt), nanos(r.LastFailureAt), r.LastError, host))
}

// List implements ports.InstanceStore.
func (s *InstanceStore) List(ctx context.Context, quarantinedAt time.Time) ([]domain.RemoteInstance, error) {
	out, err := query(ctx, s.db, scanInstance, `
SELECT `+instanceColumns+` FROM remote_instances
WHERE ?1 IS NULL OR quarantined_until > ?1
ORDER BY host`, nanos(quarantinedAt))
	if err != nil {
		return nil, fmt.Errorf("list instances: %w", interpretError(err))
	}
	return out, nil
}
