package postgres

import (
	"context"
	"log/slog"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/ports"
)

var _ ports.WakeSource = (*Waker)(nil)

// Reconnect backoff of the listener: from the first value, doubling, up to
// the last; reset once a connection has listened.
const (
	wakerMinBackoff = 100 * time.Millisecond
	wakerMaxBackoff = 30 * time.Second
)

// Waker turns NOTIFY herald_jobs, sent by Enqueue in any process, into
// wake-ups for this process's idle workers.
//
// It listens on a connection of its own, opened from the pool's
// configuration but outside the pool, so it never holds one of the pool's
// connections. When that connection drops it reconnects with backoff,
// logging each loss; after every (re)connection it wakes the workers once,
// since jobs may have been enqueued while nobody listened. Notifications are
// coalesced: the channel has room for one, and a wake-up that finds it full
// is dropped, because the worker it would wake is already awake. A
// notification whose payload names another schema (another deployment on
// the same database) is ignored; an empty payload wakes.
type Waker struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

// NewWaker returns a Waker that connects like pool does.
func NewWaker(pool *pgxpool.Pool, log *slog.Logger) *Waker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Waker{pool: pool, log: log.With("component", "postgres_waker", "channel", NotifyChannel)}
}

// Wakeups implements ports.WakeSource. Each call listens on its own
// connection until ctx ends (call it once per engine). The channel is never
// closed: a closed channel would fire forever.
func (w *Waker) Wakeups(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go w.run(ctx, ch)
	return ch
}

func (w *Waker) run(ctx context.Context, ch chan<- struct{}) {
	backoff, failures := wakerMinBackoff, 0
	for {
		listened, err := w.listen(ctx, ch)
		if ctx.Err() != nil {
			return
		}
		if listened { // it worked for a while: start over
			backoff, failures = wakerMinBackoff, 0
		}
		failures++
		w.log.Warn("postgres listener is down; workers poll until it is back",
			"err", interpretError(err), "failures", failures, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, wakerMaxBackoff)
	}
}

// listen connects, LISTENs and forwards notifications until the connection
// fails or ctx ends. listened reports whether LISTEN took effect.
func (w *Waker) listen(ctx context.Context, ch chan<- struct{}) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, w.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	var schema string
	if err := conn.QueryRow(ctx, `SELECT COALESCE(current_schema(), '')`).Scan(&schema); err != nil {
		return false, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{NotifyChannel}.Sanitize()); err != nil {
		return false, err
	}
	w.log.Info("postgres listener ready", "schema", schema)
	wake(ch) // jobs may have come while nobody listened
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if n.Payload == "" || n.Payload == schema {
			wake(ch)
		}
	}
}

// wake sends without blocking: a full channel already holds a wake-up.
func wake(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
