package postgres_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	pgmigrations "github.com/heraldfed/herald/migrations/postgres"
)

// The files golang-migrate reads: numbered from 001 (gaps allowed: numbers are handed out to branches
// ahead, and golang-migrate steps over them), every up
// with its down, every one a single transaction (so a failed step changes
// nothing and the version is never left half applied).
func TestMigrationFiles(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(pgmigrations.FS, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations embedded: %v", err)
	}
	re := regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.(up|down)\.sql$`)
	ups, downs := map[string]string{}, map[string]string{}
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
		b, _ := pgmigrations.FS.ReadFile(n)
		body := strings.TrimSpace(stripComments(string(b)))
		if !strings.HasPrefix(body, "BEGIN;") || !strings.HasSuffix(body, "COMMIT;") {
			t.Errorf("%s is not one transaction (BEGIN; ... COMMIT;)", n)
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
