package postgres_test

import (
	"strings"
	"testing"

	"github.com/heraldfed/herald/migrations/migrationtest"
	pgmigrations "github.com/heraldfed/herald/migrations/postgres"
)

// Every PostgreSQL migration is a single transaction, so a failed step
// changes nothing and the version is never left half applied.
func TestMigrationFiles(t *testing.T) {
	t.Parallel()
	migrationtest.CheckFiles(t, pgmigrations.FS, func(sql string) string {
		body := strings.TrimSpace(sql)
		if !strings.HasPrefix(body, "BEGIN;") || !strings.HasSuffix(body, "COMMIT;") {
			return "is not one transaction (BEGIN; ... COMMIT;)"
		}
		return ""
	})
}
