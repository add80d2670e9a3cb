// Package migrationtest holds the checks every store's migration files
// share, so that the PostgreSQL and SQLite suites state one rule once.
package migrationtest

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

var fileName = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.(up|down)\.sql$`)

// CheckFiles checks the files golang-migrate reads from fsys: named
// NNN_name.up.sql or NNN_name.down.sql, numbered from 001 (gaps allowed:
// numbers are handed out to branches ahead, and golang-migrate steps over
// them), every up with its down of the same name. body is called with each
// file's SQL, comments stripped, and returns what is wrong with it, if
// anything (each store has its own rule on transactions).
func CheckFiles(t *testing.T, fsys fs.FS, body func(sql string) string) {
	t.Helper()
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations embedded: %v", err)
	}
	ups, downs := map[string]string{}, map[string]string{}
	for _, n := range names {
		m := fileName.FindStringSubmatch(n)
		if m == nil {
			t.Errorf("%s: not NNN_name.up.sql or NNN_name.down.sql", n)
			continue
		}
		if m[3] == "up" {
			ups[m[1]] = m[2]
		} else {
			downs[m[1]] = m[2]
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if msg := body(StripComments(string(b))); msg != "" {
			t.Errorf("%s %s", n, msg)
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

// StripComments drops the lines that are SQL comments (--).
func StripComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// DownTo steps a schema down to version v, one migration at a time, so a
// test of one step keeps working as later steps are added. version reads
// the schema's version; down takes it one step down.
func DownTo(t *testing.T, v uint, version func() (uint, error), down func() error) {
	t.Helper()
	for range 100 {
		got, err := version()
		if err != nil {
			t.Fatal(err)
		}
		if got <= v {
			return
		}
		if err := down(); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("schema not down to %d after 100 steps", v)
}
