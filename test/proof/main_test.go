package proof_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
)

const defaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	// workerBin and heraldBin are the helper program and the herald binary,
	// built once by TestMain (without -race: see buildBinaries).
	workerBin, heraldBin string
	// skipReason is set when no PostgreSQL answers: every PostgreSQL proof
	// then skips (the SQLite ones run).
	skipReason string
	// mongoSkipReason is set when MONGODB_URI is unset or its server does
	// not answer: every Mongo proof then skips.
	mongoSkipReason string
)

func databaseURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return defaultURL
}

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	flag.Parse()
	if err := ping(databaseURL()); err != nil {
		skipReason = fmt.Sprintf("no PostgreSQL at %s (%v)", redact(databaseURL()), err)
	}
	mongoSkipReason = pingMongo()
	// Built whether or not PostgreSQL answers: the SQLite proofs need them.
	dir, err := os.MkdirTemp("", "herald-proof-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "proof: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, "proof:", err)
		return 1
	}
	return m.Run()
}

// buildBinaries builds ./worker and ./cmd/herald into dir. They are built
// without -race even when the tests run with it: the race detector makes
// the helper processes several times slower, and the code they run (the
// engine, the stores, the delivery client) is race-tested by its own
// packages; what these proofs add is several real processes on one
// database. Set HERALD_PROOF_RACE=1 to build them with -race anyway.
func buildBinaries(dir string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if os.Getenv("HERALD_PROOF_RACE") == "1" {
		args = append(args, "-race")
	}
	args = append(args, "./worker", "github.com/heraldfed/herald/cmd/herald")
	cmd := exec.Command("go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	workerBin, heraldBin = filepath.Join(dir, "worker"), filepath.Join(dir, "herald")
	return nil
}

func ping(dbURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// redact hides a password in a database URL.
func redact(dbURL string) string {
	if u, err := url.Parse(dbURL); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return "(a key=value DSN)"
}

// requirePG skips, naming what stays unverified, when no PostgreSQL answers.
func requirePG(t *testing.T, unverified string) {
	t.Helper()
	if skipReason != "" {
		t.Skipf("UNVERIFIED: %s; not proven: %s", skipReason, unverified)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// database is one test's own schema: created at random, handed to the
// child processes through search_path in their DATABASE_URL, dropped when
// the test ends.
type database struct {
	schema string
	url    string // DATABASE_URL of the schema, for child processes
	pool   *pgxpool.Pool
}

func newDatabase(t *testing.T, migrate bool) *database {
	t.Helper()
	ctx := testCtx(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "herald_proof_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, databaseURL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	d := &database{schema: schema, url: withParams(t, databaseURL(), map[string]string{
		"search_path": schema, "application_name": schema,
	})}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, databaseURL())
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	d.pool, err = pgxpool.New(ctx, d.url)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(d.pool.Close)
	if migrate {
		log := slog.New(slog.DiscardHandler)
		if err := postgres.MigrateUp(ctx, d.pool, log); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		if err := postgres.EnsureIndexes(ctx, d.pool); err != nil {
			t.Fatalf("indexes: %v", err)
		}
	}
	return d
}

// withParams sets connection parameters on a postgres:// URL or a
// key=value DSN.
func withParams(t *testing.T, dbURL string, params map[string]string) string {
	t.Helper()
	if u, err := url.Parse(dbURL); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		for k, v := range params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for k, v := range params {
		dbURL += " " + k + "=" + v
	}
	return dbURL
}

// count runs a query returning one integer.
func (d *database) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := d.pool.QueryRow(testCtx(t), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// proc is one child process with its output: stderr is JSON log lines,
// stdout JSON event lines (the worker's), both kept in memory.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}

	mu      sync.Mutex
	logs    []map[string]any
	events  []map[string]any
	waitErr error
}

// startProc starts bin; it is killed, if still running, when the test ends,
// and its last log lines are shown if the test failed.
func startProc(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); p.read(stdout, &p.events) }()
	go func() { defer readers.Done(); p.read(stderr, &p.logs) }()
	go func() {
		readers.Wait()
		err := p.cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill() // our own child, by its pid
			<-p.exited
		}
		if t.Failed() {
			p.mu.Lock()
			defer p.mu.Unlock()
			from := max(0, len(p.logs)-12)
			for _, l := range p.logs[from:] {
				b, _ := json.Marshal(l)
				if len(b) > 400 {
					b = append(b[:400], "..."...)
				}
				t.Logf("%s log: %s", p.name, b)
			}
		}
	})
	return p
}

func (p *proc) read(r io.Reader, into *[]map[string]any) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			m = map[string]any{"msg": "(not JSON)", "raw": sc.Text()}
		}
		m["_at"] = time.Now()
		p.mu.Lock()
		*into = append(*into, m)
		p.mu.Unlock()
	}
}

// Logs returns the log lines whose msg is msg.
func (p *proc) Logs(msg string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, l := range p.logs {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// Events returns the stdout events of a kind.
func (p *proc) Events(kind string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, e := range p.events {
		if e["event"] == kind {
			out = append(out, e)
		}
	}
	return out
}

// waitFor polls cond until it holds, the process exits, or timeout.
func (p *proc) waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !eventually(timeout, func() bool {
		select {
		case <-p.exited:
			return true
		default:
		}
		return cond()
	}) || !cond() {
		p.mu.Lock()
		err := p.waitErr
		p.mu.Unlock()
		t.Fatalf("%s: %s did not happen within %s (exit: %v)", p.name, what, timeout, err)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("%s did not stop within 30s of SIGTERM", p.name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waitErr != nil {
		t.Errorf("%s exited with %v", p.name, p.waitErr)
	}
}

// kill9 kills the process with SIGKILL: no shutdown, no lease released.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	<-p.exited
}

// A proof checks what the workers do, not how fast (make bench measures
// that): beside the rest of `make test` on a loaded 2-core machine a run
// of the same jobs has taken from 40 s to over 5 minutes. So the waits for
// the jobs give up when the jobs stop moving, not at a deadline: stall is
// how long no job may finish before a proof calls the run stuck (longer
// than the lease of every proof that expects orphans, so a reaped orphan
// is not a stall: at most mongoCrashLease; the proofs that run with
// mongoLease, as long, expect none), and proofCap bounds the whole wait
// all the same.
const (
	stall    = 2 * time.Minute
	proofCap = 20 * time.Minute
)

// progressing polls count every 20 ms until done(count) holds, and gives
// up when count has not grown for stall or proofCap has passed. It returns
// whether done held, and the last count.
func progressing(count func() int, done func(int) bool) (bool, int) {
	start := time.Now()
	last, moved := count(), start
	for {
		if done(last) {
			return true, last
		}
		now := time.Now()
		if now.Sub(moved) > stall || now.Sub(start) > proofCap {
			return false, last
		}
		time.Sleep(20 * time.Millisecond)
		if c := count(); c != last {
			last, moved = c, time.Now()
		}
	}
}

// waitFinished waits until n jobs succeeded, by finished's counts of the
// succeeded and the dead: it fails at once if a job died, and when the jobs
// stop moving (progressing). states says what the store holds, for the
// failure.
func waitFinished(t *testing.T, n int, finished func(context.Context) (succeeded, dead int, err error), states func() any) {
	t.Helper()
	var succeeded, dead int
	start := time.Now()
	ok, _ := progressing(func() int {
		if s, d, err := finished(testCtx(t)); err == nil {
			succeeded, dead = s, d
		}
		return succeeded + dead
	}, func(int) bool { return succeeded == n || dead > 0 })
	took := time.Since(start).Round(time.Second)
	switch {
	case dead > 0:
		t.Fatalf("jobs: %d dead, %d succeeded of %d after %s; states: %v", dead, succeeded, n, took, states())
	case !ok:
		t.Fatalf("jobs: %d succeeded of %d after %s, none finished in the last %s (or %s in all); states: %v",
			succeeded, n, took, stall, proofCap, states())
	}
}

// eventually polls cond every 20 ms for at most timeout.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}
