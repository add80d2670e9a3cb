package sqlite_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	sqlitemigrations "github.com/heraldfed/herald/migrations/sqlite"
)

// The files golang-migrate reads: numbered from 001 (gaps allowed: numbers are handed out to branches
// ahead, and golang-migrate steps over them), every up
// with its down, and none with its own BEGIN or COMMIT (golang-migrate's
// sqlite driver wraps each file in a transaction, and a nested BEGIN fails).
// A trigger's BEGIN … END is its body, not a transaction.
func TestMigrationFiles(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(sqlitemigrations.FS, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations embedded: %v", err)
	}
	re := regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.(up|down)\.sql$`)
	ups, downs := map[string]string{}, map[string]string{}
	tx := regexp.MustCompile(`(?im)^\s*(BEGIN|COMMIT|END)\b`)
	triggers := regexp.MustCompile(`(?is)\bCREATE\s+TRIGGER\b.*?\bEND\s*;`)
	for _, n := range names {
		m := re.FindStringSubmatch(n)
		if m == nil {
			t.Errorf("%s: not NNN_name.up.sql or NNN_name.down.sql", n)
			continue
		}
		if m[3] == "up" {
			ups[m[1]] = m[2]
		} else {
			downs[m[1]] = m[2]
		}
		b, _ := sqlitemigrations.FS.ReadFile(n)
		if tx.MatchString(triggers.ReplaceAllString(stripComments(string(b)), "")) {
			t.Errorf("%s has its own BEGIN/COMMIT; golang-migrate already runs it in a transaction", n)
		}
	}
	if ups["001"] == "" {
		t.Errorf("no migration 001")
	}
	for v, name := range ups {
		if v == "000" {
			t.Errorf("migration 000: versions start at 001")
		}
		if downs[v] != name {
			t.Errorf("migration %s_%s has no down step", v, name)
		}
	}
	if len(downs) != len(ups) {
		t.Errorf("%d up and %d down files", len(ups), len(downs))
	}
}

func stripComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
