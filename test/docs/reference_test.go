package docs_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxCell is the most characters a table cell of docs/*.md may hold: a
// cell is a statement of what holds today, and what needs more is a
// paragraph, a page or a journal entry.
const maxCell = 600

// maxArchitectureWords bounds docs/architecture.md (words as `wc -w`
// counts them): the page is the map, and each part's detail has a page of
// its own (docs/delivery.md for the engine).
const maxArchitectureWords = 2500

// Every table cell of docs/*.md is at most maxCell characters.
func TestDocTableCellsAreShort(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md found (%v)", err)
	}
	for _, p := range pages {
		name := "docs/" + filepath.Base(p)
		for _, c := range longCells(read(t, name), maxCell) {
			t.Errorf("%s:%d: a table cell of %d characters (at most %d): %.80s…", name, c.line, c.chars, maxCell, c.text)
		}
	}
}

type cell struct {
	line  int
	chars int
	text  string
}

// longCells are the cells of the markdown tables of page (outside code
// fences) longer than limit characters. Cells are split on unescaped pipes,
// as GitHub's tables are, code spans included.
func longCells(page string, limit int) []cell {
	var out []cell
	fence := false
	for i, l := range strings.Split(page, "\n") {
		s := strings.TrimSpace(l)
		if strings.HasPrefix(s, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(s, "|") {
			continue
		}
		for _, c := range splitRow(s) {
			c = strings.TrimSpace(c)
			if n := utf8.RuneCountInString(c); n > limit {
				out = append(out, cell{line: i + 1, chars: n, text: c})
			}
		}
	}
	return out
}

// splitRow splits a table row into its cells on unescaped pipes, without
// the empty pieces outside the leading and trailing pipes.
func splitRow(row string) []string {
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	cells = append(cells, cur.String())
	if len(cells) > 0 && strings.TrimSpace(cells[0]) == "" {
		cells = cells[1:]
	}
	if len(cells) > 0 && strings.TrimSpace(cells[len(cells)-1]) == "" {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// The checker itself finds what it must: a check that cannot fail proves
// nothing.
func TestLongCellsFindsLongCells(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxCell+1) // characters, not bytes
	for _, tt := range []struct {
		name string
		page string
		want int
	}{
		{"short cells", "| a | b |\n|---|---|\n| c | d |\n", 0},
		{"a long cell", "| a | b |\n|---|---|\n| c | " + long + " |\n", 1},
		{"at the limit", "| " + strings.Repeat("é", maxCell) + " |\n", 0},
		{"an escaped pipe stays in its cell", "| " + strings.Repeat("x\\|", maxCell/2+1) + " |\n", 1},
		{"in a code fence", "```\n| " + long + " |\n```\n", 0},
		{"indented row", "  | " + long + " |\n", 1},
	} {
		if got := len(longCells(tt.page, maxCell)); got != tt.want {
			t.Errorf("%s: %d long cells, want %d", tt.name, got, tt.want)
		}
	}
}

// docs/architecture.md stays a map: under maxArchitectureWords words.
func TestArchitectureIsShort(t *testing.T) {
	t.Parallel()
	if n := len(strings.Fields(read(t, "docs/architecture.md"))); n >= maxArchitectureWords {
		t.Errorf("docs/architecture.md has %d words (wc -w), want under %d: move the detail to the page of its part", n, maxArchitectureWords)
	}
}

// README's first screen gives a newcomer exactly two commands: make run
// and make test (DEVELOPERS.md, "How work gets done").
func TestReadmeFirstScreenHasTheTwoCommands(t *testing.T) {
	t.Parallel()
	const screen = 25 // lines of a terminal or the top of a rendered page
	lines := strings.Split(read(t, "README.md"), "\n")
	var cmds []string
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			if start >= 0 {
				break
			}
			start = i
			continue
		}
		if start >= 0 {
			if c, _, _ := strings.Cut(l, "#"); strings.TrimSpace(c) != "" {
				cmds = append(cmds, strings.Join(strings.Fields(c), " "))
			}
		}
	}
	if start < 0 || start >= screen {
		t.Fatalf("README.md has no code block in its first %d lines", screen)
	}
	if strings.Join(cmds, "; ") != "make run; make test" {
		t.Errorf("README.md's first code block gives %q, want exactly make run and make test", cmds)
	}
}

// shared is the directory beside the checkout that the project's own
// machines have and a user's clone does not.
var shared = regexp.MustCompile(`\.\./shared\b`)

// sharedDefaults are the only places a tracked file may name it: the
// default value of a setting that names the directory of a tool a machine
// keeps beside the checkout (the CI's MongoDB-compatible server, the
// interop suite's peers). Each is overridden by its variable, and without
// the directory the tests that need it skip and say what stays unverified.
// A reader is never sent there: the rules are docs/rules.md.
var sharedDefaults = map[string]string{
	".ci/run":                      `"${HERALD_MONGO_COMPAT:-../shared/mongo-compat}"`,
	"test/interop/harness_test.go": `filepath.Join("../../../shared/peers", name)`,
}

// No tracked file links to or names ../shared but the settings' defaults
// above: the repository stands alone.
func TestNothingPointsAtShared(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	self := filepath.Join("test", "docs", "reference_test.go") // names what it looks for
	files := tracked(t, root)
	if len(files) == 0 {
		t.Fatal("no files found in the repository")
	}
	for _, rel := range files {
		if rel == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		for i, l := range strings.Split(string(b), "\n") {
			if !shared.MatchString(l) {
				continue
			}
			if d, ok := sharedDefaults[filepath.ToSlash(rel)]; ok && strings.Count(l, "../shared") == 1 && strings.Contains(l, d) {
				continue
			}
			t.Errorf("%s:%d names ../shared, which a clone of the repository does not have: %s", rel, i+1, strings.TrimSpace(l))
		}
	}
}

// tracked lists the repository's tracked files (git ls-files), or, where
// git cannot say (an exported tree), every file but .git's and bin's.
func tracked(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, filepath.FromSlash(f))
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
