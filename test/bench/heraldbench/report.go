package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	lead    bool // a headline: a page that lacks it gets it at its top
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

// write puts the run's sections into the page at path, each in place of
// the section with the same heading (numbers aside, so a -quick run's
// smaller sizes still find theirs), and leaves every other section as it
// is: a page's preamble and hand-written sections, and the sections of the
// measurements this run did not take (-only). A section the page lacks is
// added at its end, or at its top for a lead table. The plots are written
// to plotDir.
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
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	pg := parsePage(string(old))
	if pg.preamble == "" {
		pg.preamble = "# Benchmarks\n\nWritten by `make bench` (`go run ./test/bench/heraldbench`). " +
			"Each figure comes with its command, its bound or baseline and the ratio to it. Nothing here is asserted by a test: timings are measured, never required, by the test suite.\n"
	}
	stamp := r.started.UTC().Format("2006-01-02 15:04 MST")
	var m strings.Builder
	for _, l := range r.machine {
		fmt.Fprintf(&m, "- %s\n", l)
	}
	fmt.Fprintf(&m, "\nRead when the run of %s started.\n", stamp)
	pg.put("Machine", m.String(), false)
	for _, t := range r.tables {
		pg.put(t.title, r.section(t, rel, stamp), t.lead)
	}
	if len(r.notes) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "What the run of %s could not measure:\n\n", stamp)
		for _, n := range r.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		pg.put("Notes", b.String(), false)
	}
	return os.WriteFile(path, []byte(pg.String()), 0o644)
}

// section is the body of one table's section: intro, command and date,
// table, plot, notes.
func (r *report) section(t *table, rel, stamp string) string {
	var b strings.Builder
	if r.quick {
		fmt.Fprintf(&b, "**A `-quick` smoke run: sizes are reduced and the figures are not comparable.**\n\n")
	}
	if t.intro != "" {
		fmt.Fprintf(&b, "%s\n\n", t.intro)
	}
	if t.command != "" {
		fmt.Fprintf(&b, "Reproduce: `%s` (measured %s)\n\n", t.command, stamp)
	} else {
		fmt.Fprintf(&b, "Measured %s.\n\n", stamp)
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
	return b.String()
}

// page is a markdown page cut at its second-level headings (outside code
// fences).
type page struct {
	preamble string
	sections []pageSection
}

type pageSection struct {
	heading string // without "## "
	body    string // what follows the heading line, up to the next section
}

func parsePage(text string) *page {
	pg := &page{}
	var cur *pageSection
	var b strings.Builder
	flush := func() {
		if cur == nil {
			pg.preamble = b.String()
		} else {
			cur.body = b.String()
			pg.sections = append(pg.sections, *cur)
		}
		b.Reset()
	}
	fence := false
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if h, ok := strings.CutPrefix(l, "## "); ok && !fence {
			flush()
			cur = &pageSection{heading: strings.TrimSpace(h)}
			continue
		}
		b.WriteString(l)
	}
	if text != "" {
		flush()
	}
	return pg
}

// sectionKey is a heading with its numbers masked: "one post to 10000
// inboxes on 1000 hosts" and a -quick run's "1000 inboxes on 100 hosts"
// are the same section.
func sectionKey(heading string) string {
	return strings.TrimSpace(numbers.ReplaceAllString(heading, "#"))
}

var numbers = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// put replaces the section under heading (matched by sectionKey) with
// body, or adds it: first if lead, else last.
func (pg *page) put(heading, body string, lead bool) {
	s := pageSection{heading: heading, body: "\n" + strings.TrimSpace(body) + "\n\n"}
	for i := range pg.sections {
		if sectionKey(pg.sections[i].heading) == sectionKey(heading) {
			pg.sections[i] = s
			return
		}
	}
	if lead {
		pg.sections = append([]pageSection{s}, pg.sections...)
		return
	}
	pg.sections = append(pg.sections, s)
}

func (pg *page) String() string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(pg.preamble, "\n") + "\n\n")
	for _, s := range pg.sections {
		fmt.Fprintf(&b, "## %s\n%s", s.heading, s.body)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
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

// percent writes a share (0.97) as a percentage ("97%").
func percent(share float64) string { return fmt.Sprintf("%.0f%%", 100*share) }

// cpuCell is the machine's busy CPU per job in µs, for a table ("–" where
// /proc/stat was not read).
func cpuCell(micros int64, jobs int) string {
	if micros <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(micros)/float64(max(jobs, 1)))
}

func mib(kib int) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
