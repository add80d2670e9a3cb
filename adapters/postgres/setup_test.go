package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"testing"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/internal/storetest"
	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
)

const defaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

func databaseURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return defaultURL
}

// testCtx and testLog are the test's context and log, as every SQL store's
// tests have them (storetest).
func testCtx(t testing.TB) context.Context { return storetest.Context(t) }
func testLog(t testing.TB) *slog.Logger    { return storetest.Logger(t) }

// schema is one test's private corner of the database: a schema of its own,
// named at random, that every connection opened from cfg uses (search_path
// and application_name are set to it), dropped when the test ends. Tests and
// packages can so run in parallel, and twice, without seeing each other.
type schema struct {
	name string
	cfg  *pgxpool.Config
}

// newSchema creates a fresh, empty schema, or skips the test naming what
// stays unverified when no PostgreSQL answers.
func newSchema(t testing.TB) schema {
	t.Helper()
	ctx := testCtx(t)
	cfg, err := pgxpool.ParseConfig(databaseURL())
	if err != nil {
		t.Fatalf("DATABASE_URL: %v", err)
	}
	connectCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	admin, err := pgx.ConnectConfig(connectCtx, cfg.ConnConfig.Copy())
	if err != nil {
		t.Skipf("UNVERIFIED: no PostgreSQL at %s:%d (%v); the PostgreSQL adapter, its migrations and every contract suite against it were not run",
			cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "herald_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
		if err != nil {
			t.Errorf("drop schema %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	cfg.ConnConfig.RuntimeParams["search_path"] = name
	cfg.ConnConfig.RuntimeParams["application_name"] = name
	return schema{name: name, cfg: cfg}
}

// pool opens a pool on the schema, closed when the test ends. Several pools
// on one schema stand for several processes sharing one database.
func (s schema) pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.NewWithConfig(testCtx(t), s.cfg.Copy())
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// migrated is what bootstrap does before anything runs: migrations, then
// indexes, on a fresh schema.
func migrated(t testing.TB) *pgxpool.Pool {
	t.Helper()
	_, p := migratedSchema(t)
	return p
}

// migratedSchema is migrated with its schema, for a test that opens more
// pools on it (more processes) or names it.
func migratedSchema(t testing.TB) (schema, *pgxpool.Pool) {
	t.Helper()
	s := newSchema(t)
	p := s.pool(t)
	mustMigrate(t, p)
	return s, p
}

func mustMigrate(t testing.TB, p *pgxpool.Pool) {
	t.Helper()
	ctx := testCtx(t)
	if err := postgres.MigrateUp(ctx, p, testLog(t)); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	if err := postgres.EnsureIndexes(ctx, p); err != nil {
		t.Fatalf("ensure indexes: %v", err)
	}
}

func mustExec(t testing.TB, p *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := p.Exec(testCtx(t), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// newJob is storetest's job, as the SQLite tests enqueue it too.
func newJob(t *testing.T, id, host string, runAt time.Time) domain.Job {
	t.Helper()
	return storetest.NewJob(t, id, host, runAt)
}

// execer runs a statement: a pool, or the open transaction of a test
// playing another process.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// jobRow is a row of jobs as a test writes it by hand, past the store, in
// the schema of migration 019 on (NULL for no lease token).
type jobRow struct {
	id, host, state string
	key             any    // dedupe_key: a uuid's text or its 16 bytes
	activity        int64  // the job_activities row's id
	inboxRef        string // the inbox, or its path on the job's host (migration 017)
	// at is the job's run_at and created_at; a leased job holds the token
	// "tok" until a minute after it, a dead or succeeded one finished at it.
	at time.Time
}

func insertJobRow(t *testing.T, db execer, r jobRow) {
	t.Helper()
	if _, err := db.Exec(testCtx(t), `INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at, lease_token, lease_until, finished_at)
		VALUES ($1, $2, $3, $4, $5, $6::text, $7::timestamptz, $7, CASE WHEN $6 = 'leased' THEN 'tok' END,
			CASE WHEN $6 = 'leased' THEN $7 + interval '1 minute' END, CASE WHEN $6 IN ('dead', 'succeeded') THEN $7 END)`,
		r.id, r.key, r.activity, r.inboxRef, r.host, r.state, r.at); err != nil {
		t.Fatalf("insert job %s: %v", r.id, err)
	}
}

// sqlJobID is SQL for the job id contract.JobID makes of the name the SQL
// expression name gives: its bytes, padded with zeros to 16, as a uuid.
func sqlJobID(name string) string {
	return `rpad(encode(convert_to(` + name + `, 'UTF8'), 'hex'), 32, '0')::uuid`
}

// sqlJobName is SQL for the name sqlJobID (and contract.JobID) spelt in the
// uuid column col.
func sqlJobName(col string) string {
	return `convert_from(rtrim(uuid_send(` + col + `), '\x00'::bytea), 'UTF8')`
}
