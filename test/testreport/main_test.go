package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// events is go test -json of two packages: one with a passing test, a
// skipped one and a failing one; one that panics outside any test.
const events = `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestOK"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"    a_test.go:3: chatter\n"}
{"Action":"pass","Package":"p/a","Test":"TestOK"}
{"Action":"run","Package":"p/a","Test":"TestMongo"}
{"Action":"output","Package":"p/a","Test":"TestMongo","Output":"=== RUN   TestMongo\n"}
{"Action":"output","Package":"p/a","Test":"TestMongo","Output":"    a_test.go:9: no MONGODB_URI: UNVERIFIED: leasing on Mongo\n"}
{"Action":"output","Package":"p/a","Test":"TestMongo","Output":"--- SKIP: TestMongo (0.00s)\n"}
{"Action":"skip","Package":"p/a","Test":"TestMongo"}
{"Action":"run","Package":"p/a","Test":"TestBad"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"    a_test.go:12: got 1, want 2\n"}
{"Action":"output","Package":"p/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p/a","Test":"TestBad"}
{"Action":"output","Package":"p/a","Output":"FAIL\n"}
{"Action":"output","Package":"p/a","Output":"FAIL\tp/a\t0.01s\n"}
{"Action":"fail","Package":"p/a"}
{"Action":"output","Package":"p/b","Output":"panic: boom in TestMain\n"}
{"Action":"output","Package":"p/b","Output":"FAIL\tp/b\t0.01s\n"}
{"Action":"fail","Package":"p/b"}
go: downloading example.com/x v1.0.0
{"Action":"output","Package":"p/c","Output":"ok  \tp/c\t0.01s\n"}
{"Action":"pass","Package":"p/c"}
`

func TestStreamAndSummary(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "unit.json")
	var live bytes.Buffer
	if code := stream(strings.NewReader(events), &live, file); code != 0 {
		t.Fatalf("stream exit %d", code)
	}
	for _, tt := range []struct {
		name string
		want string
		in   bool
	}{
		{"a failing test's output", "a_test.go:12: got 1, want 2", true},
		{"its FAIL line", "--- FAIL: TestBad", true},
		{"a package that failed outside tests", "panic: boom in TestMain", true},
		{"package result lines", "ok  \tp/c", true},
		{"go's own messages", "go: downloading example.com/x", true},
		{"a passing test's chatter", "chatter", false},
		{"a skip, until the summary", "UNVERIFIED", false},
		{"=== lines", "=== RUN", false},
	} {
		if strings.Contains(live.String(), tt.want) != tt.in {
			t.Errorf("live output: %s (%q) shown %v, want %v:\n%s", tt.name, tt.want, !tt.in, tt.in, live.String())
		}
	}
	if saved, err := os.ReadFile(file); err != nil || string(saved) != events {
		t.Fatalf("saved events differ (%v):\n%s", err, saved)
	}

	var sum bytes.Buffer
	summarize(&sum, []string{file, filepath.Join(t.TempDir(), "absent.json")})
	for _, want := range []string{
		"1 packages passed, 2 failed; 1 tests failed, 1 skipped",
		"FAILED", "p/a  TestBad",
		"SKIPPED", "p/a  TestMongo", "no MONGODB_URI: UNVERIFIED: leasing on Mongo",
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	if strings.Contains(sum.String(), "--- SKIP") || strings.Contains(sum.String(), "chatter") {
		t.Errorf("summary has noise:\n%s", sum.String())
	}
}
