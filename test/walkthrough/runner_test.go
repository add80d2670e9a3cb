package walkthrough_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// block is one fenced shell block of a doc.
type block struct {
	server bool      // ```sh server: a long-running server, "in its own terminal"
	cmds   []command // in order
	line   int       // where it starts in the doc, for messages
}

// command is one shell command (continuation lines joined) and the output
// the doc promises under it, if any.
type command struct {
	text  string
	want  string // "" for none
	again bool   // the promise ends with againNote: ask until it holds
}

// againNote ends a promise that holds only after a moment (a delivery to
// the other server): the reader, and the test, ask again until it does.
// Only read-only or idempotent commands carry it.
const againNote = " (ask again until it does)"

// blocks reads the ```sh blocks of the section of doc (a path from the
// repository's root) titled heading, in order.
func blocks(t *testing.T, doc, heading string) []block {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root(t), doc))
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	in := false
	level := 0
	for i, l := range strings.Split(string(raw), "\n") {
		if cur == nil && strings.HasPrefix(l, "#") && !in {
			h := strings.TrimLeft(l, "#")
			if strings.TrimSpace(h) == heading {
				in, level = true, len(l)-len(h)
				continue
			}
		}
		if !in {
			continue
		}
		if cur == nil && strings.HasPrefix(l, "#") {
			if h := strings.TrimLeft(l, "#"); len(l)-len(h) <= level && strings.HasPrefix(h, " ") {
				break // the next section at the same level or above
			}
		}
		switch {
		case cur == nil && (l == "```sh" || l == "```sh server"):
			cur = &block{server: l == "```sh server", line: i + 1}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.add(l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no ```sh block under %q", doc, heading)
	}
	return out
}

// add takes one line of a block.
func (b *block) add(l string) {
	n := len(b.cmds)
	switch {
	case strings.TrimSpace(l) == "":
		return
	case n > 0 && strings.HasSuffix(b.cmds[n-1].text, "\\") && b.cmds[n-1].want == "":
		b.cmds[n-1].text += "\n" + l
	case strings.HasPrefix(l, "# "):
		if n > 0 { // an output promised under a command; a comment before the first is prose
			want := strings.TrimSpace(strings.TrimPrefix(l, "# "))
			b.cmds[n-1].want, b.cmds[n-1].again = strings.CutSuffix(want, againNote)
		}
	default:
		b.cmds = append(b.cmds, command{text: l})
	}
}

// matches reports whether out has a line matching want, … standing for any
// text.
func matches(out, want string) bool {
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re := regexp.MustCompile(`(?m)^\s*` + strings.Join(parts, ".*") + `\s*$`)
	return re.MatchString(out)
}

// root is the repository's root: walkthroughs run there, as in a clone.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// tools skips the test when a tool the walkthrough uses is missing.
func tools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed: the walkthrough stays UNVERIFIED", n)
		}
	}
}

// exclusive holds a lock that every walkthrough test of every checkout on
// this machine takes, since the docs name fixed ports (8080, 8081, ...), then
// checks that the ports are free.
func exclusive(t *testing.T, addrs ...string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "herald-walkthrough.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() }) // closing drops the lock
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Skipf("%s is taken by another process (%v): the walkthrough, which names that port, stays UNVERIFIED", a, err)
		}
		_ = ln.Close()
	}
}

// environ is this process's environment without Herald's settings and
// without those of a make that runs the tests, so a walkthrough sees what
// a newcomer's shell has, plus extra.
func environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") && !strings.HasPrefix(kv, "MAKE") && !strings.HasPrefix(kv, "MFLAGS=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// warm builds what go run and make run will build, so that their own
// build (and the servers' start) is quick. A cold build takes minutes.
func warm(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./cmd/herald")
	cmd.Dir = root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/herald: %v\n%s", err, out)
	}
}

// server starts a ```sh server block in the repository's root, in a
// process group of its own, and waits until addr answers /readyz. It is
// stopped (SIGTERM to its group, as Ctrl-C in its terminal) when the test
// ends.
func server(t *testing.T, b block, addr string, env []string) *syncBuffer {
	t.Helper()
	if len(b.cmds) != 1 {
		t.Fatalf("server block at line %d has %d commands, want 1", b.line, len(b.cmds))
	}
	var log syncBuffer
	cmd := exec.Command("bash", "-c", b.cmds[0].text)
	cmd.Dir, cmd.Env = root(t), env
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("%s did not stop on SIGTERM within 30 s", b.cmds[0].text)
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", b.cmds[0].text, log.String())
		}
	})
	deadline := time.Now().Add(10 * time.Minute) // a cold build on a busy 2-core machine
	for {
		select {
		case <-done:
			t.Fatalf("%s exited before it was ready:\n%s", b.cmds[0].text, log.String())
		default:
		}
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return &log
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 10 minutes:\n%s", b.cmds[0].text, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// session is one bash, as the newcomer's third terminal: variables set by
// one command are there for the next.
type session struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	n     int
}

func newSession(t *testing.T, env []string) *session {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	// The other terminal may be anywhere: a file a walkthrough writes
	// lands in a temporary directory, not in the checkout.
	cmd.Dir, cmd.Env = t.TempDir(), env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, in: in, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		_ = in.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	fmt.Fprintln(in, "set -o pipefail")
	return s
}

// run runs one command and answers its output and exit status.
func (s *session) run(text string) (string, int) {
	s.t.Helper()
	s.n++
	end := fmt.Sprintf("@@end-%d ", s.n)
	// Braces keep assignments in this shell; stdin is not the session's.
	fmt.Fprintf(s.in, "{\n%s\n} </dev/null\nprintf '\\n%s%%d\\n' $?\n", text, end)
	var out strings.Builder
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("the shell exited during %s:\n%s", text, out.String())
			}
			if rest, found := strings.CutPrefix(l, end); found {
				var status int
				fmt.Sscan(rest, &status)
				return strings.TrimSpace(out.String()), status
			}
			out.WriteString(l + "\n")
		case <-timeout:
			s.t.Fatalf("%s still running after 2 minutes:\n%s", text, out.String())
		}
	}
}

// walk runs every command of the blocks in order: each must exit 0 and
// print what the doc promises under it, at once or, for a promise ending
// with againNote, within a minute of asking again.
func (s *session) walk(bs ...block) {
	s.t.Helper()
	for _, b := range bs {
		for _, c := range b.cmds {
			deadline := time.Now().Add(time.Minute)
			for {
				out, status := s.run(c.text)
				s.t.Logf("$ %s\n%s", c.text, out)
				ok := status == 0 && (c.want == "" || matches(out, c.want))
				if ok {
					break
				}
				if !c.again || time.Now().After(deadline) {
					s.t.Fatalf("doc line %d: %s\nexit %d, output:\n%s\nwant: %q", b.line, c.text, status, out, c.want)
				}
				time.Sleep(time.Second)
			}
		}
	}
}
