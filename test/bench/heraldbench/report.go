package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// table is one markdown table of the report.
type table struct {
	title   string
	command string // how to reproduce this table alone
	intro   string
	header  []string
	rows    [][]string
	plot    string // file name of its SVG, if any
	notes   []string
}

type report struct {
	started time.Time
	took    time.Duration
	quick   bool
	machine []string
	tables  []*table
	svgs    map[string]string
	notes   []string
}

func (r *report) add(t *table) { r.tables = append(r.tables, t) }

func (r *report) svg(name, body string) string {
	if r.svgs == nil {
		r.svgs = map[string]string{}
	}
	r.svgs[name] = body
	return name
}

func (r *report) write(path, plotDir string) error {
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return err
	}
	for name, body := range r.svgs {
		if err := os.WriteFile(filepath.Join(plotDir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	rel, _ := filepath.Rel(filepath.Dir(path), plotDir)
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`go run ./test/bench/heraldbench`) on %s; the whole run took %s.\n",
		r.started.UTC().Format("2006-01-02 15:04 MST"), r.took.Round(time.Second))
	if r.quick {
		fmt.Fprintf(&b, "\n**This is a `-quick` smoke run: sizes are reduced and the figures are not the ones of the issue.**\n")
	}
	fmt.Fprintf(&b, "Each figure comes with its bound or baseline and the ratio to it. Nothing here is asserted by a test: timings are measured, never required, by the test suite.\n\n")
	fmt.Fprintf(&b, "## Machine\n\n")
	for _, m := range r.machine {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	for _, t := range r.tables {
		fmt.Fprintf(&b, "\n## %s\n\n", t.title)
		if t.intro != "" {
			fmt.Fprintf(&b, "%s\n\n", t.intro)
		}
		if t.command != "" {
			fmt.Fprintf(&b, "Reproduce: `%s`\n\n", t.command)
		}
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(t.header, " | "), strings.Repeat("---|", len(t.header)))
		for _, row := range t.rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
		if t.plot != "" {
			fmt.Fprintf(&b, "\n![%s](%s)\n", t.title, filepath.ToSlash(filepath.Join(rel, t.plot)))
		}
		for _, n := range t.notes {
			fmt.Fprintf(&b, "\n%s\n", n)
		}
	}
	if len(r.notes) > 0 {
		fmt.Fprintf(&b, "\n## Notes\n\n")
		for _, n := range r.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func machineInfo() []string {
	out := []string{
		fmt.Sprintf("%d logical CPUs (`GOMAXPROCS` %d), %s/%s, %s", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version()),
	}
	if m := grepFile("/proc/cpuinfo", "model name"); m != "" {
		out = append(out, "CPU: "+m)
	}
	if m := grepFile("/proc/meminfo", "MemTotal"); m != "" {
		out = append(out, "memory: "+m)
	}
	if v, err := exec.Command("psql", "--version").Output(); err == nil {
		out = append(out, "PostgreSQL client: "+strings.TrimSpace(string(v))+" (server on 127.0.0.1:5432)")
	}
	out = append(out, "MongoDB: "+mongoNote())
	return out
}

func grepFile(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func mongoNote() string {
	if os.Getenv("MONGODB_URI") != "" {
		return "MONGODB_URI set: the mongo rows ran against it"
	}
	return "no server on this machine (no MONGODB_URI, no Docker engine): the mongo rows are not measured"
}

// rssKiB reads VmRSS of a process (self when pid is 0), in KiB.
func rssKiB(pid int) int {
	path := "/proc/self/status"
	if pid > 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	v := grepFile(path, "VmRSS")
	var kib int
	fmt.Sscanf(v, "%d", &kib)
	return kib
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
}

func ratio(x, bound float64) string {
	if bound == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x/bound)
}

// cpuCell is the machine's busy CPU per job in µs, for a table ("–" where
// /proc/stat was not read).
func cpuCell(micros int64, jobs int) string {
	if micros <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(micros)/float64(max(jobs, 1)))
}

func mib(kib int) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
