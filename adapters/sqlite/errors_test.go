package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// The translator, table-tested on errors a real SQLite file gives: each
// case runs a statement that fails the way a store's would.
func TestInterpretError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := migratedIn(t, dir)
	ctx := testCtx(t)
	now := time.Now().UnixNano()
	mustExec(t, db, `INSERT INTO root_users (id, user_name, password_hash) VALUES ('u1', 'alice', 'x')`)
	mustExec(t, db, `INSERT INTO avatars (id, root_user_id, name) VALUES ('a1', 'u1', 'alice')`)
	mustExec(t, db, `INSERT INTO groups (id, owner_id, name) VALUES ('g1', 'u1', 'club')`)
	mustExec(t, db, `INSERT INTO tokens (hash, user_id) VALUES ('h1', 'u1')`)
	mustExec(t, db, `INSERT INTO reserved_names (name, kind) VALUES ('alice', 'persona')`)
	mustExec(t, db, `INSERT INTO foreign_avatars (actor_uri, public_key_id) VALUES ('https://r.example/u/bob', 'https://r.example/u/bob#k')`)
	mustExec(t, db, `INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, run_at)
		VALUES ('j1', 'k1', 'a', 'i', 'h', 's', 'k', '', 'queued', ?)`, now)

	// A second connection of its own, as another process would have one,
	// that holds the write lock while the store's connection has no
	// patience (busy_timeout 0).
	path := filepath.Join(dir, sqlite.DatabaseFile)
	raw := func(params string) *sql.DB {
		c, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+params)
		if err != nil {
			t.Fatal(err)
		}
		c.SetMaxOpenConns(1)
		t.Cleanup(func() { c.Close() })
		return c
	}
	holder := raw("_pragma=busy_timeout(0)")
	htx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := htx.ExecContext(ctx, `INSERT INTO tokens (hash, user_id) VALUES ('held', 'u1')`); err != nil {
		t.Fatal(err)
	}
	impatient := raw("_pragma=busy_timeout(0)")
	_, busy := impatient.ExecContext(ctx, `INSERT INTO tokens (hash, user_id) VALUES ('h2', 'u1')`)
	_ = htx.Rollback()
	readOnly := raw("_pragma=query_only(1)")
	_, readonly := readOnly.ExecContext(ctx, `DELETE FROM tokens`)
	closed := raw("")
	_ = closed.Close()
	_, closedErr := closed.ExecContext(ctx, `SELECT 1`)

	failing := func(q string, args ...any) error {
		t.Helper()
		err := sqlite.Exec(ctx, db, q, args...)
		if err == nil {
			t.Fatalf("%s did not fail", q)
		}
		return err
	}
	var noRow string
	noRows := impatient.QueryRowContext(ctx, `SELECT id FROM root_users WHERE id = 'nobody'`).Scan(&noRow)

	contract.InterpretError(t, sqlite.InterpretError, []contract.DriverError{
		{Name: "no rows is not found", In: noRows, Want: domain.ErrNotFound},
		{Name: "wrapped no rows", In: fmt.Errorf("scan: %w", sql.ErrNoRows), Want: domain.ErrNotFound},
		{Name: "reserved name taken", In: failing(`INSERT INTO reserved_names (name, kind) VALUES ('alice', 'group')`), Want: domain.ErrNameTaken},
		{Name: "user name taken", In: failing(`INSERT INTO root_users (id, user_name, password_hash) VALUES ('u2', 'alice', 'x')`), Want: domain.ErrNameTaken},
		{Name: "avatar name taken", In: failing(`INSERT INTO avatars (id, root_user_id, name) VALUES ('a2', 'u1', 'alice')`), Want: domain.ErrNameTaken},
		{Name: "group name taken", In: failing(`INSERT INTO groups (id, owner_id, name) VALUES ('g2', 'u1', 'club')`), Want: domain.ErrNameTaken},
		{Name: "user id exists", In: failing(`INSERT INTO root_users (id, user_name, password_hash) VALUES ('u1', 'bob', 'x')`), Want: domain.ErrAlreadyExists},
		{Name: "avatar id exists", In: failing(`INSERT INTO avatars (id, root_user_id, name) VALUES ('a1', 'u1', 'bob')`), Want: domain.ErrAlreadyExists},
		{Name: "job id exists", In: failing(`INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, body_id, state, run_at)
			VALUES ('j1', 'k2', 'a', 'i', 'h', 's', 'k', '', 'queued', 1)`), Want: domain.ErrAlreadyExists},
		{Name: "token exists", In: failing(`INSERT INTO tokens (hash, user_id) VALUES ('h1', 'u2')`), Want: domain.ErrAlreadyExists},
		{Name: "key id held by another actor", In: failing(`INSERT INTO foreign_avatars (actor_uri, public_key_id) VALUES ('https://r.example/u/eve', 'https://r.example/u/bob#k')`), Want: domain.ErrAlreadyExists},
		{Name: "unknown kind is bad input", In: failing(`INSERT INTO reserved_names (name, kind) VALUES ('x', 'wizard')`), Want: domain.ErrInvalidInput},
		{Name: "unknown job state is bad input", In: failing(`UPDATE jobs SET state = 'lost'`), Want: domain.ErrInvalidInput},
		{Name: "not null violation is bad input", In: failing(`INSERT INTO root_users (id, user_name, password_hash) VALUES ('u3', NULL, 'x')`), Want: domain.ErrInvalidInput},
		{Name: "wrong type is bad input", In: failing(`INSERT INTO root_users (id, user_name, password_hash, created_at) VALUES ('u4', 'carol', 'x', 'yesterday')`), Want: domain.ErrInvalidInput},
		{Name: "lock held past busy_timeout", In: busy, Want: domain.ErrUnavailable},
		{Name: "write on a read-only connection", In: readonly, Want: domain.ErrUnavailable},
		{Name: "closed database", In: closedErr, Want: domain.ErrUnavailable},
		{Name: "syntax error is a bug, no sentinel", In: failing(`INSERT INTO nowhere VALUES (1)`), Want: nil},
		{Name: "canceled stays canceled", In: context.Canceled, Want: nil},
		{Name: "deadline stays deadline", In: fmt.Errorf("query: %w", context.DeadlineExceeded), Want: nil},
		{Name: "other errors pass through", In: errors.New("boom"), Want: nil},
	})
}

// The stores report through the translator: a closed database is
// unavailable, to the stores and to /readyz.
func TestClosedDatabaseIsUnavailable(t *testing.T) {
	t.Parallel()
	_, db := stopped(t)
	ctx := testCtx(t)
	if _, err := sqlite.NewAccountStore(db).UserByName(ctx, "alice"); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("read on a closed database: %v", err)
	}
	if err := sqlite.NewNameRegistry(db).Reserve(ctx, domain.ReservedName{Name: "x", Kind: domain.NameKindSystem}); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("write on a closed database: %v", err)
	}
	if err := sqlite.NewPinger(db).Ping(ctx); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("ping on a closed database: %v", err)
	}
}
