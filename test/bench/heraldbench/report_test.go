package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run writes its sections in place of theirs and leaves the rest of the
// page: the preamble, hand-written sections, and the sections of
// measurements it did not take.
func TestWriteReplacesItsSectionsAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "benchmarks.md")
	before := "# Benchmarks\n\nHand-written preamble.\n\n" +
		"## Headline\n\nold headline\n\n" +
		"## Machine\n\nold machine\n\n" +
		"## Signing cost\n\nold signing\n\n```\n## not a heading: inside a fence\n```\n\n" +
		"## How to read this page\n\nhand-written, kept\n\n" +
		"## Fan-out makespan: one post to 10000 inboxes on 1000 hosts\n\nold fan-out\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &report{started: time.Date(2026, 12, 6, 11, 6, 0, 0, time.UTC), machine: []string{"2 logical CPUs"}}
	r.add(&table{title: "Fan-out makespan: one post to 1000 inboxes on 100 hosts", command: "heraldbench -only fanout", header: []string{"row", "makespan"}, rows: [][]string{{"clean", "10.1 s"}}})
	r.add(&table{title: "Headline", header: []string{"a"}, rows: [][]string{{"new headline"}}, lead: true})
	r.add(&table{title: "Engine throughput against River", header: []string{"a"}, rows: [][]string{{"new engine"}}})
	if err := r.write(path, filepath.Join(dir, "bench")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"Hand-written preamble.", "old signing", "## not a heading: inside a fence", "hand-written, kept",
		"new headline", "| clean | 10.1 s |", "(measured 2026-12-06 11:06 UTC)", "new engine", "- 2 logical CPUs"} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"old headline", "old machine", "old fan-out"} {
		if strings.Contains(got, gone) {
			t.Errorf("the page still has %q:\n%s", gone, got)
		}
	}
	order := []string{"## Headline", "## Machine", "## Signing cost", "## How to read this page", "## Fan-out makespan: one post to 1000 inboxes", "## Engine throughput against River"}
	last := -1
	for _, h := range order {
		i := strings.Index(got, h)
		if i < 0 || i < last {
			t.Fatalf("sections out of order (want %q):\n%s", order, got)
		}
		last = i
	}
	if n := strings.Count(got, "## Fan-out makespan"); n != 1 {
		t.Errorf("%d fan-out sections, want 1", n)
	}

	// A page that does not exist yet is made with a preamble, the lead
	// table first.
	fresh := filepath.Join(dir, "fresh.md")
	if err := r.write(fresh, filepath.Join(dir, "bench")); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(fresh)
	if !strings.HasPrefix(string(b), "# Benchmarks\n") || strings.Index(string(b), "## Headline") > strings.Index(string(b), "## Machine") {
		t.Errorf("fresh page:\n%s", b)
	}
}
