package sqlite_test

import (
	"regexp"
	"testing"

	"github.com/heraldfed/herald/migrations/migrationtest"
	sqlitemigrations "github.com/heraldfed/herald/migrations/sqlite"
)

// No SQLite migration has its own BEGIN or COMMIT: golang-migrate's sqlite
// driver wraps each file in a transaction, and a nested BEGIN fails. A
// trigger's BEGIN … END is its body, not a transaction.
func TestMigrationFiles(t *testing.T) {
	t.Parallel()
	tx := regexp.MustCompile(`(?im)^\s*(BEGIN|COMMIT|END)\b`)
	triggers := regexp.MustCompile(`(?is)\bCREATE\s+TRIGGER\b.*?\bEND\s*;`)
	migrationtest.CheckFiles(t, sqlitemigrations.FS, func(sql string) string {
		if tx.MatchString(triggers.ReplaceAllString(sql, "")) {
			return "has its own BEGIN/COMMIT; golang-migrate already runs it in a transaction"
		}
		return ""
	})
}
