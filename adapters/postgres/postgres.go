package postgres

import (
	"context"
	"fmt"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/ports"
)

// Connect opens a pool on databaseURL (a postgres:// URL or a key=value
// DSN; pool_max_conns and friends are honoured) and pings it, so a server
// that cannot be reached fails here, wrapped in domain.ErrUnavailable,
// rather than at the first request.
func Connect(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		// pgconn redacts the password in its parse errors.
		return nil, fmt.Errorf("postgres: parse database URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", interpretError(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect to %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, interpretError(err))
	}
	return pool, nil
}

var _ ports.Pinger = (*Pinger)(nil)

// Pinger tells /readyz whether the server answers.
type Pinger struct{ pool *pgxpool.Pool }

// NewPinger returns a Pinger on pool.
func NewPinger(pool *pgxpool.Pool) *Pinger { return &Pinger{pool: pool} }

// Ping implements ports.Pinger.
func (p *Pinger) Ping(ctx context.Context) error {
	if err := p.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres ping: %w", interpretError(err))
	}
	return nil
}

// optTime stores an optional time: the zero time is NULL.
func optTime(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: t, Valid: true}
}

// fromOpt reads an optional time back: NULL is the zero time, and every
// time the stores return is in UTC.
func fromOpt(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// before is the upper bound of a "published before" listing: the zero time
// means no bound, which is +infinity, so the query keeps one plain range
// condition its index serves.
func before(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}
	}
	return pgtype.Timestamptz{Time: t, Valid: true}
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// query runs a read on q and scans every row with scan, the one error
// of the two steps for the caller to wrap; the result is never nil.
func query[T any](ctx context.Context, q querier, scan func(pgx.Row) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
}

// scanText reads a row of one text column.
func scanText(row pgx.Row) (s string, err error) {
	err = row.Scan(&s)
	return s, err
}

// limitArg turns the ports' "limit <= 0 means no limit" into SQL: LIMIT NULL
// is no limit.
func limitArg(limit int) any {
	if limit <= 0 {
		return nil
	}
	return limit
}
