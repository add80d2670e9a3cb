// Package pgcount counts, the same way for every system the benchmarks
// compare (Herald's engine in test/bench/heraldbench, River in
// test/bench/river), what a pgx pool sends PostgreSQL and what the server
// commits:
//
//   - statements: a pgx tracer on the system's pool counts every query,
//     every query of a batch, and every COPY. pg_stat_statements would do
//     it server-side but needs shared_preload_libraries and a server
//     restart, which a shared server (or CI) does not get.
//   - commits: pg_stat_database.xact_commit of a database of the run's own
//     (TempDatabase), read before and after, once every backend of the
//     system has exited and so flushed its statistics (WaitGone).
//   - CPU: the machine's busy time over a drain (MachineCPU), both the
//     system's process and PostgreSQL's.
package pgcount

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	pgx "github.com/jackc/pgx/v5"
)

// Statements is a pgx tracer (QueryTracer, BatchTracer, CopyFromTracer)
// that counts statements.
type Statements struct{ n atomic.Int64 }

// Count is the number of statements sent so far.
func (s *Statements) Count() int64 { return s.n.Load() }

func (s *Statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	s.n.Add(1)
	return ctx
}
func (s *Statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s *Statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (s *Statements) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) { s.n.Add(1) }
func (s *Statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (s *Statements) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	s.n.Add(1)
	return ctx
}
func (s *Statements) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// Commits reads the committed transactions of conn's database so far.
func Commits(ctx context.Context, conn *pgx.Conn) (int64, error) {
	var n int64
	err := conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err
}

// WaitGone waits until no backend of the database has application_name
// app (a closed pool's backends have exited, and flushed their statistics).
func WaitGone(ctx context.Context, conn *pgx.Conn, app string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			time.Sleep(200 * time.Millisecond) // the last statistics flush at exit
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d backends of %s still there after 10 s", n, app)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TempDatabase creates a database of its own next to the one of dbURL
// (which must be a postgres:// URL), so that xact_commit counts only the
// run's transactions, and returns its URL and a drop function.
func TempDatabase(ctx context.Context, dbURL string) (string, func(), error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("pgcount needs a postgres:// URL")
	}
	admin, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", nil, err
	}
	name := "heraldbench_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close(ctx)
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		c := context.Background()
		_, _ = admin.Exec(c, "DROP DATABASE "+name+" WITH (FORCE)")
		_ = admin.Close(c)
	}, nil
}

// WithParams sets query parameters (search_path, application_name) on a
// postgres:// URL.
func WithParams(dbURL string, params map[string]string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return dbURL
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
