// Command testreport reads `go test -json` and prints what `make test`
// shows: while the tests run, each package's result line, a failing test's
// output and build errors, as go test prints them without -v; at the end
// (-summary), every failed and every skipped test with the reason it gave,
// since a skip names what it left unverified and go test's own output hides
// it behind an "ok".
//
//	go test -json ./... 2>&1 | testreport -save bin/test-unit.json
//	testreport -summary bin/test-unit.json bin/test-ferret.json
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	save := flag.String("save", "", "stream mode: read go test -json on stdin, print progress, and copy the events to this file")
	summary := flag.Bool("summary", false, "summary mode: print the failed and skipped tests of the event files named as arguments")
	flag.Parse()
	switch {
	case *summary:
		os.Exit(summarize(os.Stdout, flag.Args()))
	case *save != "":
		os.Exit(stream(os.Stdin, os.Stdout, *save))
	default:
		fmt.Fprintln(os.Stderr, "usage: testreport -save FILE < events | testreport -summary FILE...")
		os.Exit(2)
	}
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output events
}

type key struct{ pkg, test string }

// stream prints progress as go test does without -v and copies every line
// to the file save, for summarize.
func stream(in io.Reader, out io.Writer, save string) int {
	f, err := os.Create(save)
	if err != nil {
		fmt.Fprintf(out, "testreport: %v\n", err)
		return 1
	}
	defer f.Close()
	r := newReport()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		fmt.Fprintf(f, "%s\n", line)
		r.line(line, out)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testreport: reading go test's output: %v\n", err)
		return 1
	}
	return 0
}

// report follows the events of one or more runs.
type report struct {
	output  map[key][]string // a test's (or a package's, test "") lines so far
	failed  []key
	skipped map[key][]string // reason lines
	pkgFail map[string]bool  // packages with a test that failed
	pkgs    struct{ ok, failed, noTests int }
}

func newReport() *report {
	return &report{output: map[key][]string{}, skipped: map[key][]string{}, pkgFail: map[string]bool{}}
}

// line takes one line of input; live, when not nil, gets the progress.
func (r *report) line(line []byte, live io.Writer) {
	var e event
	if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
		// Not an event: go's own messages on stderr (a module
		// download, a vet error). Show them as they come.
		say(live, string(line)+"\n")
		return
	}
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		say(live, e.Output)
	case "output":
		r.output[k] = append(r.output[k], e.Output)
		if e.Test == "" && summaryLine(e.Output) {
			say(live, e.Output)
		}
	case "fail":
		if e.Test != "" {
			r.failed = append(r.failed, k)
			r.pkgFail[e.Package] = true
			for _, l := range r.output[k] {
				if !strings.HasPrefix(l, "=== ") {
					say(live, l)
				}
			}
		} else {
			r.pkgs.failed++
			if !r.pkgFail[e.Package] {
				// No test failed: a panic, a timeout, TestMain or a build
				// failure. Everything the package printed says which.
				for _, l := range r.output[k] {
					if !summaryLine(l) {
						say(live, l)
					}
				}
			}
		}
		delete(r.output, k)
	case "skip":
		if e.Test == "" {
			r.pkgs.noTests++
			break
		}
		var reason []string
		for _, l := range r.output[k] {
			t := strings.TrimSpace(l)
			if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
				continue
			}
			reason = append(reason, strings.TrimRight(l, "\n"))
		}
		r.skipped[k] = reason
		delete(r.output, k)
	case "pass":
		if e.Test == "" {
			r.pkgs.ok++
		}
		delete(r.output, k)
	}
}

// summaryLine: the one line go test prints per package without -v.
func summaryLine(l string) bool {
	return strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   \t")
}

func say(w io.Writer, s string) {
	if w != nil {
		io.WriteString(w, s)
	}
}

// summarize prints the failed and skipped tests of the event files.
func summarize(out io.Writer, files []string) int {
	r := newReport()
	for _, name := range files {
		f, err := os.Open(name)
		if os.IsNotExist(err) {
			continue // that run did not happen (no ferret module, a build that stopped early)
		}
		if err != nil {
			fmt.Fprintf(out, "testreport: %v\n", err)
			return 1
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			r.line(sc.Bytes(), nil)
		}
		f.Close()
	}
	skips := make([]key, 0, len(r.skipped))
	for k := range r.skipped {
		skips = append(skips, k)
	}
	sort.Slice(skips, func(i, j int) bool {
		if skips[i].pkg != skips[j].pkg {
			return skips[i].pkg < skips[j].pkg
		}
		return skips[i].test < skips[j].test
	})
	fmt.Fprintf(out, "\n==== make test: %d packages passed, %d failed; %d tests failed, %d skipped\n",
		r.pkgs.ok, r.pkgs.failed, len(r.failed), len(skips))
	if len(r.failed) > 0 {
		fmt.Fprintln(out, "\nFAILED (their output is above):")
		for _, k := range r.failed {
			fmt.Fprintf(out, "  %s  %s\n", k.pkg, k.test)
		}
	}
	if len(skips) > 0 {
		fmt.Fprintln(out, "\nSKIPPED: what each skip leaves unverified, in its own words:")
		for _, k := range skips {
			fmt.Fprintf(out, "  %s  %s\n", k.pkg, k.test)
			for _, l := range r.skipped[k] {
				fmt.Fprintf(out, "      %s\n", strings.TrimSpace(l))
			}
			if len(r.skipped[k]) == 0 {
				fmt.Fprintln(out, "      (no reason given)")
			}
		}
	}
	return 0
}
