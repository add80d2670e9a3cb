package sqlite

import (
	"context"
	"database/sql"
	"strings"
)

// Hooks for the black-box tests in package sqlite_test.
var InterpretError = interpretError

const (
	LeaseSQL         = leaseSQL
	EndDomainJobsSQL = endDomainJobsSQL
	CountsSQL        = countsSQL
	CountsByHostSQL  = countsByHostSQL
)

// Exec runs one statement on the writer, for a test's set-up.
func Exec(ctx context.Context, db *DB, q string, args ...any) error {
	_, err := db.w.ExecContext(ctx, q, args...)
	return err
}

// QueryStrings runs a read whose rows are one text column each.
func QueryStrings(ctx context.Context, db *DB, q string, args ...any) ([]string, error) {
	return query(ctx, db, scanText, q, args...)
}

// Plan is EXPLAIN QUERY PLAN's detail column for q, on the writer, where
// the lease runs, each line indented two spaces per level of the plan's
// tree. (A reader connection opened before the migrations would
// explain with the schema it loaded then: EXPLAIN does not check the schema
// cookie, where a real statement re-prepares on a changed schema.)
func Plan(ctx context.Context, db *DB, q string, args ...any) ([]string, error) {
	rows, err := db.w.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	depth := map[int]int{0: -1}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		depth[id] = depth[parent] + 1
		out = append(out, strings.Repeat("  ", depth[id])+detail)
	}
	return out, rows.Err()
}

// QueryRow runs a read on a reader connection.
func QueryRow(ctx context.Context, db *DB, q string, args ...any) *sql.Row {
	return db.r.QueryRowContext(ctx, q, args...)
}
