package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/heraldfed/herald/domain"
)

// nameColumns are the unique keys that guard a name in the username space
// or a login name, as SQLite names them in "UNIQUE constraint failed:
// table.column": a violation of one is "that name is taken" (HTTP 409 with
// the sign-up's wording); any other unique violation is a plain duplicate.
var nameColumns = map[string]bool{
	"reserved_names.name":  true,
	"root_users.user_name": true,
	"avatars.name":         true,
	"groups.name":          true,
}

// interpretError is the one place where SQLite's errors become domain
// sentinels (as postgres.interpretError does for pgx). The driver error
// stays in the chain, after the sentinel, for logs. Context errors are
// returned as they are: the caller gave up, the store did not fail.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", domain.ErrNotFound, err)
	}
	if errors.Is(err, sql.ErrConnDone) || err.Error() == "sql: database is closed" {
		return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
	}
	var se *sqlitedrv.Error
	if !errors.As(err, &se) {
		return err
	}
	switch code := se.Code(); code {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		if nameColumns[uniqueColumns(se.Error())] {
			return fmt.Errorf("%w: %w", domain.ErrNameTaken, err)
		}
		return fmt.Errorf("%w: %w", domain.ErrAlreadyExists, err)
	case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL, sqlite3.SQLITE_CONSTRAINT_DATATYPE,
		sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE:
		// A value the schema refuses (an unknown state, a NULL where one
		// is needed, a string past SQLite's limit): bad input, not a broken
		// store.
		return fmt.Errorf("%w: %w", domain.ErrInvalidInput, err)
	default:
		switch code & 0xff { // the primary result code of an extended one
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, // another connection held a lock past busy_timeout
			sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN,
			sqlite3.SQLITE_READONLY, // the file or its directory is no longer writable
			sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_NOLFS:
			return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
		}
	}
	return err
}

// uniqueColumns reads "table.column" out of SQLite's "UNIQUE constraint
// failed: table.column (2067)"; a key of several columns reads as
// "t.a, t.b", which no name key is.
func uniqueColumns(msg string) string {
	const marker = "UNIQUE constraint failed: "
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return ""
	}
	cols := msg[i+len(marker):]
	if i := strings.LastIndex(cols, " ("); i >= 0 {
		cols = cols[:i]
	}
	return strings.TrimSpace(cols)
}
