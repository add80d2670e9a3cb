package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the text of rules.md's section §n.
func section(t *testing.T, rules string, n int) string {
	t.Helper()
	start := strings.Index(rules, fmt.Sprintf("\n## §%d ", n))
	if start < 0 {
		t.Fatalf("docs/rules.md has no section §%d", n)
	}
	rest := rules[start+1:]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// The numbers docs/rules.md gives are those of the code.
func TestRulesSayWhatTheCodeDoes(t *testing.T) {
	t.Parallel()
	rules := read(t, "docs/rules.md")
	eng := engine.DefaultConfig()
	for _, tt := range []struct {
		name    string
		section int
		phrase  string // in the section, with the code's value
		holds   bool   // the code's value is the one the phrase names
	}{
		{"lease", 2, "leased for **2 minutes**", eng.LeaseFor == 2*time.Minute},
		{"reaper", 2, "Every **30 s**", eng.ReapEvery == 30*time.Second},
		{"poll", 2, "every **5 s**", eng.PollEvery == 5*time.Second},
		{"workers", 2, "**8** deliveries at a time", eng.Workers == 8},
		{"per host", 2, "at most **2** per remote host", eng.PerHost == 2},
		{"park", 2, "within **1 s**", eng.ParkAfter == time.Second},
		{"attempts", 2, "**dead after 16 attempts**", domain.MaxAttempts == 16},
		{"retry curve at n=2", 2, "**n⁴ + 15 s + jitter**", domain.RetryDelay(2, 0) == 31*time.Second && domain.RetryDelay(2, 0.999) < 39*time.Second},
		{"Retry-After bound", 2, "at most **24 h**", domain.MaxRetryAfter == 24*time.Hour},
		{"breaker", 2, "**10** consecutive failures", domain.BreakerThreshold == 10},
		{"first quarantine", 2, "for **1 hour**", domain.FirstQuarantine == time.Hour},
		{"quarantine doubles", 2, "doubles, up to **1 week**", domain.QuarantineLength(2) == 2*time.Hour && domain.QuarantineLength(20) == 7*24*time.Hour},
		{"retention", 2, "**7 days** later", eng.Retention == 7*24*time.Hour},
		{"purge", 2, "a purge every\n  hour", eng.PurgeEvery == time.Hour},
		{"shutdown grace", 2, "`HERALD_SHUTDOWN_GRACE` (30 s)", eng.Grace == 30*time.Second},
		{"name length", 3, "1 to 30 characters", domain.MaxNameLength == 30},
		{"attachments", 12, "At most **16** attachments", domain.MaxAttachments == 16},
		{"alt text", 12, "**1,500** characters of alt\n  text", domain.MaxAltTextChars == 1500},
		{"content warning", 12, "**1,000** of a content warning", domain.MaxSummaryChars == 1000},
		{"hashtags", 12, "**100** hashtags (of at most\n  **100** characters each)", domain.MaxHashtags == 100 && domain.MaxHashtagChars == 100},
		{"emoji", 12, "**100** custom emoji", domain.MaxEmojis == 100},
		{"poll options", 12, "**20** poll options of\n  at most **200** characters", domain.MaxPollOptions == 20 && domain.MaxPollOptionChars == 200},
		{"poll duration", 12, "runs from **1 minute** to **31 days**", domain.MinPollDuration == time.Minute && domain.MaxPollDuration == 31*24*time.Hour},
		{"poll updates", 12, "at most every **5 s**", application.PollInterval == 5*time.Second},
	} {
		if !strings.Contains(section(t, rules, tt.section), tt.phrase) || !tt.holds {
			t.Errorf("%s: docs/rules.md §%d says %q: in the text %v, true of the code %v",
				tt.name, tt.section, tt.phrase, strings.Contains(section(t, rules, tt.section), tt.phrase), tt.holds)
		}
	}
	names := section(t, rules, 3)
	for _, n := range domain.FixedReservedNames() {
		if !regexp.MustCompile(`[\s,]` + regexp.QuoteMeta(n) + `[,\s]`).MatchString(names) {
			t.Errorf("docs/rules.md §3 does not list the never-available name %q", n)
		}
	}
}

// Every "SPEC §N" in the code names a section of docs/rules.md, and no
// page or comment points outside the repository for the rules.
func TestSpecReferencesResolve(t *testing.T) {
	t.Parallel()
	rules := read(t, "docs/rules.md")
	ref := regexp.MustCompile(`SPEC §(\d+)`)
	outside := regexp.MustCompile(`\.\./shared/(SPEC|STYLE)\.md|\bSPEC\.md\b`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if d.IsDir() || (ext != ".go" && ext != ".md" && ext != ".sql" && ext != ".json" && d.Name() != "Makefile") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("test", "docs", "rules_test.go") {
			return nil // this file names what it looks for
		}
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			if !strings.Contains(rules, "\n## §"+m[1]+" ") {
				t.Errorf("%s cites %s: docs/rules.md has no such section", rel, m[0])
			}
		}
		if m := outside.FindString(string(b)); m != "" {
			t.Errorf("%s points outside the repository for the rules (%s): docs/rules.md holds them", rel, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
