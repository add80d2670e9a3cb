package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	// The pure-Go SQLite (a C-to-Go translation, no cgo), registered as
	// "sqlite"; golang-migrate's database/sqlite driver is built on it too,
	// so the binary carries one SQLite.
	_ "modernc.org/sqlite"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// File names inside a data directory.
const (
	// DatabaseFile is the database; SQLite keeps its -wal and -shm files
	// beside it.
	DatabaseFile = "herald.db"
	// LockFile is held (flock) by the one process that owns the directory.
	LockFile = "herald.lock"
)

// ErrLocked: the data directory is held by another process (Open).
var ErrLocked = errors.New("in use by another Herald process")

// busyTimeout is how long a statement waits for a lock another connection
// holds (a reader checkpointing, `herald backup`, an operator's CLI
// command) before it fails with SQLITE_BUSY, which interpretError reports
// as domain.ErrUnavailable.
const busyTimeout = 10 * time.Second

// readers bounds the read pool. Readers never block the writer in WAL mode;
// a few are enough for the HTTP handlers, the operator API and the metrics.
const readers = 4

// DB is one Herald database file opened the way SQLite wants it: one
// writer connection, so writes queue in this process instead of failing
// with SQLITE_BUSY, and a pool of read-only connections that read the last
// committed state beside it (WAL mode). Every store of this package takes
// a *DB.
type DB struct {
	path string
	w    *sql.DB // one connection; every write and every write transaction
	r    *sql.DB // query_only connections
	lock *dirLock

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt // the writer's hot statements, prepared once (prepared)
	rstmts map[string]*sql.Stmt // the readers' (preparedRead)
}

// Open opens, creating them when missing, the data directory dir and its
// database, for the one process that serves it: it takes an exclusive lock
// on dir/herald.lock first, so a second `herald serve` (or `herald migrate`)
// on the same directory is refused with an error naming the holder, rather
// than running a second engine beside the first. It does not migrate: call
// MigrateUp and EnsureIndexes next.
func Open(ctx context.Context, dir string) (*DB, error) {
	abs, err := dataDir(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create data directory %s: %w", abs, notWritable(err))
	}
	lock, err := lockDir(abs)
	if err != nil {
		return nil, err
	}
	db, err := open(ctx, filepath.Join(abs, DatabaseFile), true)
	if err != nil {
		lock.release()
		return nil, err
	}
	db.lock = lock
	return db, nil
}

// OpenShared opens the existing database of dir without its lock, for an
// operator's command beside a running server (`herald jobs stats`,
// `herald instances lift`, `herald names reserve`): each of their writes is
// one statement or one transaction, which SQLite's own file locking
// serializes with the server's, as it does any two connections. It never
// creates a database: a directory without one is an error.
func OpenShared(ctx context.Context, dir string) (*DB, error) {
	abs, err := dataDir(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(abs, DatabaseFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: no Herald database in %s (start `herald serve` with this HERALD_DATA_DIR once to create it): %w", abs, err)
	}
	return open(ctx, path, false)
}

func dataDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: empty data directory", domain.ErrInvalidInput)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("sqlite: data directory %q: %w", dir, err)
	}
	return abs, nil
}

// notWritable names the usual cause of a failure to create a file.
func notWritable(err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("not writable by this process (uid %d): %w", os.Getuid(), err)
	}
	return err
}

// dsn is the URI of the database file with connection parameters. The
// path is escaped, so a directory named with spaces, '?' or '#' is still
// that directory.
func dsn(path string, params url.Values) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params.Encode()
}

// writerParams are the writer connection's settings. WAL: readers and the
// writer do not block each other, and a commit is one append. synchronous
// FULL: a commit is on disk (fsync of the WAL) when it returns, so a power
// cut loses no delivery that was reported enqueued or done, as with
// PostgreSQL's defaults. BEGIN IMMEDIATE: a write transaction takes the
// write lock at its start, so it waits (busy_timeout) rather than failing
// half way when another process writes. Without create, a missing file is
// an error instead of a new, empty database.
func writerParams(create bool) url.Values {
	v := url.Values{}
	v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	v.Add("_pragma", "journal_mode(WAL)")
	v.Add("_pragma", "synchronous(FULL)")
	v.Set("_txlock", "immediate")
	if !create {
		v.Set("mode", "rw")
	}
	return v
}

// readerParams are the read pool's: query_only, so a write sent to a
// reader by mistake fails loudly (SQLITE_READONLY) instead of racing the
// writer.
func readerParams() url.Values {
	v := url.Values{}
	v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	v.Add("_pragma", "query_only(1)")
	v.Set("mode", "rw")
	return v
}

func open(ctx context.Context, path string, create bool) (*DB, error) {
	if err := registerFunctions(); err != nil {
		return nil, fmt.Errorf("sqlite: register Herald's SQL functions: %w", err)
	}
	wp := writerParams(create)
	w, err := sql.Open("sqlite", dsn(path, wp))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	// The first connection creates the file and switches it to WAL; a
	// failure (a directory that is not writable, a file that is not a
	// database) shows here rather than at the first request.
	if err := w.PingContext(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, notWritable(interpretError(err)))
	}
	var mode string
	if err := w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: %s is not in WAL mode (journal_mode %q): %w", path, mode, interpretError(err))
	}
	r, err := sql.Open("sqlite", dsn(path, readerParams()))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	return &DB{path: path, w: w, r: r, stmts: map[string]*sql.Stmt{}, rstmts: map[string]*sql.Stmt{}}, nil
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Close closes the connections (the last one checkpoints the WAL into the
// database file) and then releases the directory's lock.
func (db *DB) Close() error {
	db.mu.Lock()
	var errs []error
	for _, m := range []map[string]*sql.Stmt{db.stmts, db.rstmts} {
		for q, st := range m {
			errs = append(errs, st.Close())
			delete(m, q)
		}
	}
	db.mu.Unlock()
	err := errors.Join(append(errs, db.r.Close(), db.w.Close())...)
	if db.lock != nil {
		db.lock.release()
	}
	return err
}

// prepared returns q prepared on the writer, preparing it at its first
// use. SQLite parses and plans a statement when it is prepared, and for
// the lease (four nested selects) that cost nearly as much as running it
// (a CPU profile of the engine on SQLite: 1.8 s of the lease's 4.1 s), so
// the engine's hot statements are prepared once per DB, not once per call. In a transaction, tx.StmtContext reuses the preparation,
// as the transaction runs on the same (the only) writer connection.
func (db *DB) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	return db.prepare(ctx, db.w, db.stmts, q)
}

// preparedRead is prepared for the read-only pool: a query every inbox
// POST runs (the signer's key, a note's tombstone), whose preparation
// (parse and plan, in pure Go) cost about as much as running it. The
// sql.Stmt prepares it again on each pooled connection it meets, once.
func (db *DB) preparedRead(ctx context.Context, q string) (*sql.Stmt, error) {
	return db.prepare(ctx, db.r, db.rstmts, q)
}

// prepare returns q prepared on pool, from stmts (the pool's own cache,
// made by Open) when it was prepared before.
func (db *DB) prepare(ctx context.Context, pool *sql.DB, stmts map[string]*sql.Stmt, q string) (*sql.Stmt, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if st, ok := stmts[q]; ok {
		return st, nil
	}
	st, err := pool.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	stmts[q] = st
	return st, nil
}

// queryRow is QueryRowContext on the read pool through preparedRead.
func (db *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := db.preparedRead(ctx, q)
	if err != nil {
		// The same error comes back from an unprepared query's Scan.
		return db.r.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// inTx runs fn in one write transaction (BEGIN IMMEDIATE) on the writer,
// committed when fn returns nil and rolled back otherwise.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

var _ ports.Pinger = (*Pinger)(nil)

// Pinger tells /readyz whether the database answers.
type Pinger struct{ db *DB }

// NewPinger returns a Pinger on db.
func NewPinger(db *DB) *Pinger { return &Pinger{db: db} }

// Ping implements ports.Pinger: one read on a reader connection.
func (p *Pinger) Ping(ctx context.Context) error {
	var one int
	if err := p.db.r.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("sqlite ping: %w", interpretError(err))
	}
	return nil
}

// Times are INTEGER Unix nanoseconds: exact (a time read back equals the
// one written), ordered as the times are, and cheap to index. An int64
// spans the years 1678 to 2262; a time outside (a remote server's "year
// 9999") is stored as the nearest end, which keeps its order. In a
// nullable column the zero time is NULL (nanos); in a NOT NULL one it is
// math.MinInt64 (stamp), which no clamped time uses.

// Representable range: one above MinInt64 (the zero time's stamp) to one
// below MaxInt64 (the "no bound" of before).
var (
	firstNano = time.Unix(0, math.MinInt64+1)
	lastNano  = time.Unix(0, math.MaxInt64-1)
)

func stamp(t time.Time) int64 {
	switch {
	case t.IsZero():
		return math.MinInt64
	case t.Before(firstNano):
		return math.MinInt64 + 1
	case t.After(lastNano):
		return math.MaxInt64 - 1
	}
	return t.UnixNano()
}

func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return stamp(t)
}

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid || n.Int64 == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// before is the upper bound of a "published before" listing: the zero time
// means no bound.
func before(t time.Time) int64 {
	if t.IsZero() {
		return math.MaxInt64
	}
	return stamp(t)
}

// limitArg turns the ports' "limit <= 0 means no limit" into SQLite's
// LIMIT -1.
func limitArg(limit int) int {
	if limit <= 0 {
		return -1
	}
	return limit
}

// affected reads how many rows a statement changed.
func affected(res sql.Result) int {
	n, err := res.RowsAffected()
	if err != nil {
		return 0 // the driver always knows; never reached
	}
	return int(n)
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanText reads a row of one text column.
func scanText(row scanner) (s string, err error) {
	err = row.Scan(&s)
	return s, err
}

// query runs a read on the read pool and scans every row; the result is
// never nil.
func query[T any](ctx context.Context, db *DB, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
