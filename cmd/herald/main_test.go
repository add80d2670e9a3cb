package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pgx "github.com/jackc/pgx/v5"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// syncBuffer is a bytes.Buffer safe for a server goroutine writing while
// the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type result struct {
	code           int
	stdout, stderr string
}

func herald(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut syncBuffer
	code := run(ctx, args, func(k string) string { return env[k] }, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	r := herald(t, nil, "help")
	if r.code != 0 {
		t.Fatalf("help: %d", r.code)
	}
	for _, c := range commands() {
		if !strings.Contains(r.stdout, c.name()) {
			t.Errorf("help does not list %q", c.name())
		}
		args := append(append([]string{}, c.words...), "--help")
		if c.arg != "" {
			args = append(append([]string{}, c.words...), "x", "--help")
		}
		h := herald(t, nil, args...)
		if h.code != 0 || !strings.HasPrefix(h.stdout, "usage: herald "+c.name()) {
			t.Errorf("%s --help: %d %q %q", c.name(), h.code, h.stdout, h.stderr)
		}
		// --help works before the argument too.
		if c.arg != "" {
			if h := herald(t, nil, append(append([]string{}, c.words...), "--help")...); h.code != 0 {
				t.Errorf("%s --help without %s: %d %s", c.name(), c.arg, h.code, h.stderr)
			}
		}
	}
	if r := herald(t, nil, "--help"); r.code != 0 || !strings.Contains(r.stdout, "HERALD_ADMIN_TOKEN") {
		t.Fatalf("--help: %d", r.code)
	}
	// herald help COMMAND is herald COMMAND -h; a command's help lists its
	// own flags, not the settings'.
	h := herald(t, nil, "help", "migrate", "down")
	if h.code != 0 || h.stdout != herald(t, nil, "migrate", "down", "-h").stdout ||
		!strings.Contains(h.stdout, "--steps N") || strings.Contains(h.stdout, "--herald-addr") {
		t.Fatalf("help migrate down: %d %q", h.code, h.stdout)
	}
}

// A command's flags and its argument come in any order; after "--" every
// argument is the argument, a leading dash and all.
func TestFlagsAndArgumentInAnyOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		pos  []string
		all  bool
	}{
		{"flag last", []string{"alice", "--all"}, []string{"alice"}, true},
		{"flag first", []string{"--all", "alice"}, []string{"alice"}, true},
		{"no flag", []string{"alice"}, []string{"alice"}, false},
		{"after the terminator", []string{"--all", "--", "-alice", "--all"}, []string{"-alice", "--all"}, true},
		{"nothing", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := keysRotateCommand()
			pos, err := parse(c.flags, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(pos, " ") != strings.Join(tt.pos, " ") || c.flags.Lookup("all").Value.String() != strconv.FormatBool(tt.all) {
				t.Fatalf("positional %q, --all %s; want %q, %v", pos, c.flags.Lookup("all").Value, tt.pos, tt.all)
			}
		})
	}
}

func TestBadCommandLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want int
		says string
	}{
		{"unknown command", nil, []string{"frobnicate"}, 2, "unknown command"},
		{"group without subcommand", nil, []string{"instances"}, 2, "instances list, instances lift"},
		{"unknown subcommand", nil, []string{"jobs", "purge"}, 2, "needs a subcommand"},
		{"lift without host", nil, []string{"instances", "lift"}, 2, "missing HOST"},
		{"reserve without name", nil, []string{"names", "reserve", "--herald-store=postgres"}, 2, "missing NAME"},
		{"unknown flag", nil, []string{"jobs", "stats", "--nope"}, 2, "nope"},
		{"stray argument", nil, []string{"jobs", "stats", "extra"}, 2, "unexpected"},
		{"bad setting", map[string]string{"HERALD_WORKERS": "many"}, []string{"serve"}, 2, "HERALD_WORKERS"},
		{"bad setting as flag", nil, []string{"--herald-store=redis"}, 2, "HERALD_STORE"},
		{"steps zero", map[string]string{"HERALD_STORE": "postgres", "DATABASE_URL": "postgres://x"}, []string{"migrate", "down", "--steps=0"}, 2, "-steps: want a whole number of 1 or more"},
		{"steps not a number", map[string]string{"HERALD_STORE": "postgres", "DATABASE_URL": "postgres://x"}, []string{"migrate", "down", "--steps", "all"}, 2, "-steps: want a whole number"},
		{"steps without value", nil, []string{"migrate", "down", "--steps"}, 2, "needs an argument: -steps"},
		{"quarantined not a bool", nil, []string{"instances", "list", "--quarantined=maybe"}, 2, "-quarantined"},
		{"demo posts", nil, []string{"demo", "--demo-posts=0"}, 2, "-demo-posts: want a whole number of 1 or more"},
		{"demo every", nil, []string{"demo", "--demo-every=soon"}, 2, "-demo-every: want a positive duration"},
		{"two arguments", nil, []string{"names", "reserve", "a", "b"}, 2, "unexpected arguments: [b]"},
		{"help of an unknown command", nil, []string{"help", "frobnicate"}, 2, "unknown command"},
		{"memory store", map[string]string{"HERALD_STORE": "memory"}, []string{"jobs", "stats"}, 1, "HERALD_STORE=memory"},
		{"memory lift", map[string]string{"HERALD_STORE": "memory"}, []string{"instances", "lift", "a.example"}, 1, "HERALD_STORE=memory"},
		{"memory migrate", map[string]string{"HERALD_STORE": "memory"}, []string{"migrate", "up"}, 1, "no schema"},
		{"memory backup", map[string]string{"HERALD_STORE": "memory"}, []string{"backup", "/tmp/x"}, 1, "HERALD_STORE=memory"},
		{"backup without destination", nil, []string{"backup"}, 2, "missing DEST"},
		{"sqlite without a database", map[string]string{"HERALD_DATA_DIR": "/nonexistent/herald-data"}, []string{"jobs", "stats"}, 1, "no Herald database"},
		{"sqlite version without a database", map[string]string{"HERALD_DATA_DIR": "/nonexistent/herald-data"}, []string{"migrate", "version"}, 1, "no Herald database"},
		{"unreachable mongo migrate", map[string]string{"HERALD_STORE": "mongo", "MONGODB_URI": "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=1000"}, []string{"migrate", "version"}, 1, "mongo 127.0.0.1:1"},
		{"unreachable mongo store", map[string]string{"HERALD_STORE": "mongo", "MONGODB_URI": "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=1000"}, []string{"names", "reserve", "ops"}, 1, "mongo 127.0.0.1:1"},
		{"unreachable postgres", map[string]string{"HERALD_STORE": "postgres", "DATABASE_URL": "postgres://postgres@127.0.0.1:1/x?connect_timeout=2"}, []string{"jobs", "stats"}, 1, "herald:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := herald(t, tt.env, tt.args...)
			if r.code != tt.want || !strings.Contains(r.stderr, tt.says) {
				t.Fatalf("exit %d, stderr %q; want %d saying %q", r.code, r.stderr, tt.want, tt.says)
			}
		})
	}
}

// pgSchema makes an empty schema and returns a DATABASE_URL whose
// connections use it, or skips naming what stays unverified.
func pgSchema(t *testing.T) (string, *pgx.Conn) {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Skipf("UNVERIFIED: no PostgreSQL at DATABASE_URL (%v): the CLI's migrate, jobs, instances and names commands were not run against a store", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "herald_cli_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE") })
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), conn
}

func TestStoreCommands(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dbURL, _ := pgSchema(t)
		latest, err := postgres.LatestMigration()
		if err != nil {
			t.Fatal(err)
		}
		storeCommands(t, map[string]string{"HERALD_STORE": "postgres", "DATABASE_URL": dbURL, "HERALD_LOG_LEVEL": "warn"},
			latest, true)
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		latest, err := sqlite.LatestMigration()
		if err != nil {
			t.Fatal(err)
		}
		// The default store: only the data directory is given.
		storeCommands(t, map[string]string{"HERALD_DATA_DIR": filepath.Join(t.TempDir(), "data"), "HERALD_LOG_LEVEL": "warn"},
			latest, false)
	})
}

// storeCommands drives the maintenance commands on one store, from an
// empty one: before migrations the commands say what to do, and each
// command reads or changes what a server would. exists: the store is there
// before any migration (a database server's schema), not only once migrate
// up (or a server) creates it (SQLite's file).
func storeCommands(t *testing.T, env map[string]string, latest uint, exists bool) {
	expect := expecter(t, env)

	if exists {
		expect(0, "schema version 0, this build needs", "migrate", "version")
		expect(1, "herald migrate up", "jobs", "stats")
	} else {
		expect(1, "no Herald database", "migrate", "version")
		expect(1, "no Herald database", "jobs", "stats")
	}
	expect(0, "up to date", "migrate", "up")
	expect(0, "up to date", "migrate", "up") // twice is fine
	r := expect(0, "behind", "migrate", "down", "--steps", "1")
	// One step down is the previous migration file's version, which need
	// not be latest-1: numbers are handed out to branches ahead.
	if m := regexp.MustCompile(`schema version (\d+), this build needs (\d+)`).FindStringSubmatch(r.stdout); m == nil ||
		m[2] != itoa(latest) || m[1] == m[2] || m[1] == "0" {
		t.Fatalf("after down: %s", r.stdout)
	}
	expect(1, "herald migrate up", "instances", "list")
	expect(0, "up to date", "migrate", "up")

	// Seed what a running server would have made, through the stores the
	// commands use.
	ctx := context.Background()
	stores := cliStores(t, env)
	now := time.Now().UTC()
	jobs := stores.Jobs
	var batch []domain.Job
	for i, inbox := range []string{"https://a.example/1", "https://a.example/2", "https://down.example/inbox"} {
		j, _ := domain.NewJob(contract.JobID("cli-job-"+itoa(uint(i))), "https://l.example/act/"+itoa(uint(i)), inbox, "s", "k", []byte("{}"), now)
		batch = append(batch, j)
	}
	if _, err := jobs.Enqueue(ctx, batch); err != nil {
		t.Fatal(err)
	}
	instances := stores.Instances
	if _, err := instances.Update(ctx, "down.example", func(r *domain.RemoteInstance) {
		for range domain.BreakerThreshold {
			r.RecordFailure(now, "HTTP 503 Service Unavailable")
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := instances.Update(ctx, "ok.example", func(r *domain.RemoteInstance) { r.RecordSuccess(now) }); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.DeferHost(ctx, "down.example", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	r = expect(0, "queued", "jobs", "stats")
	if !regexp.MustCompile(`queued\s+3`).MatchString(r.stdout) || !regexp.MustCompile(`a\.example\s+2`).MatchString(r.stdout) {
		t.Fatalf("stats:\n%s", r.stdout)
	}
	r = expect(0, "down.example", "instances", "list")
	if !strings.Contains(r.stdout, "ok.example") || !strings.Contains(r.stdout, "HTTP 503") {
		t.Fatalf("list:\n%s", r.stdout)
	}
	r = expect(0, "down.example", "instances", "list", "--quarantined")
	if strings.Contains(r.stdout, "ok.example") {
		t.Fatalf("--quarantined lists a healthy host:\n%s", r.stdout)
	}
	expect(0, "1 waiting jobs are due", "instances", "lift", "DOWN.example")
	expect(0, "no remote host", "instances", "list", "--quarantined=true")
	expect(1, "not found", "instances", "lift", "never.example")
	expect(1, "invalid input", "instances", "lift", "https://x/")

	expect(0, "reserved billing", "names", "reserve", "Billing")
	expect(1, "name taken", "names", "reserve", "billing")
	expect(1, "invalid name", "names", "reserve", "two words")
	expect(0, "released billing", "names", "release", "billing")
	expect(1, "not found", "names", "release", "billing")
	expect(1, "fixed list", "names", "release", "postmaster")
	expect(1, "instance actor", "names", "release", "relay", "--herald-instance-actor=relay")
	expect(1, "HERALD_RESERVED_NAMES", "names", "release", "ops", "--herald-reserved-names=ops")
	expect(1, "invalid name", "names", "release", "no way")
}

// expecter runs herald with env and fails the test unless it exits with
// want saying says (on stdout or stderr).
func expecter(t *testing.T, env map[string]string) func(want int, says string, args ...string) result {
	return func(want int, says string, args ...string) result {
		t.Helper()
		r := herald(t, env, args...)
		if r.code != want || !strings.Contains(r.stdout+r.stderr, says) {
			t.Fatalf("herald %s: exit %d\nstdout %s\nstderr %s\nwant %d saying %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, want, says)
		}
		return r
	}
}

// cliStores opens the stores of env as the commands do, closed at the
// test's end.
func cliStores(t *testing.T, env map[string]string) *bootstrap.Stores {
	t.Helper()
	cfg, err := bootstrap.LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stores, closeStores, err := bootstrap.OpenStoresForCLI(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeStores)
	return stores
}

// migratedSQLite is the default store in dir/data, migrated by `herald
// migrate up`: its environment, an expecter on it, and its stores.
func migratedSQLite(t *testing.T, dir string) (map[string]string, func(int, string, ...string) result, *bootstrap.Stores) {
	t.Helper()
	env := map[string]string{"HERALD_DATA_DIR": filepath.Join(dir, "data"), "HERALD_LOG_LEVEL": "warn"}
	expect := expecter(t, env)
	expect(0, "up to date", "migrate", "up")
	return env, expect, cliStores(t, env)
}

func itoa(v uint) string { return strconv.FormatUint(uint64(v), 10) }

// waitFor polls cond until it holds or the bounded wait ends.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func get(t *testing.T, u, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

var addrRe = regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"`)

func TestServeStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	env := map[string]string{"HERALD_ADDR": "127.0.0.1:0", "HERALD_ADMIN_TOKEN": "t0ken", "HERALD_BCRYPT_COST": "4", "HERALD_DATA_DIR": t.TempDir()}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &out, &errOut) }()
	var addr string
	waitFor(t, "the server to listen", func() bool {
		if m := addrRe.FindStringSubmatch(errOut.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	base := "http://" + addr
	if code, _ := get(t, base+"/healthz", ""); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	if code, _ := get(t, base+"/admin/api/queue", ""); code != 401 {
		t.Fatalf("operator API without the token: %d", code)
	}
	if code, _ := get(t, base+"/admin/api/queue", "wrong"); code != 401 {
		t.Fatalf("operator API with a wrong token: %d", code)
	}
	if code, body := get(t, base+"/admin/api/queue", "t0ken"); code != 200 || body["by_state"] == nil {
		t.Fatalf("operator API: %d %v", code, body)
	}
	if resp, err := http.Get(base + "/metrics"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %v", err)
	} else {
		resp.Body.Close()
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exit %d: %s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(errOut.String(), "shutting down") {
		t.Fatalf("no shutdown in the log: %s", errOut.String())
	}
}

func TestDemoFansOut(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	// The demo runs on memory unless HERALD_STORE says otherwise: no data
	// directory appears.
	dataDir := filepath.Join(t.TempDir(), "herald-data")
	// Sign-ups need approval: the demo's own persona does not.
	env := map[string]string{"HERALD_ADDR": "127.0.0.1:0", "HERALD_BCRYPT_COST": "4", "HERALD_LOG_LEVEL": "error", "HERALD_DATA_DIR": dataDir,
		"HERALD_REGISTRATIONS": "approval"}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--demo-posts=2", "--demo-every=50ms"}, func(k string) string { return env[k] }, &out, &errOut)
	}()
	var base, token string
	pageRe := regexp.MustCompile(`operator page: (http://127\.0\.0\.1:\d+)/admin`)
	tokenRe := regexp.MustCompile(`admin token is (\S+)`)
	waitFor(t, "the demo to start", func() bool {
		if m := pageRe.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	m := tokenRe.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no generated admin token: %s", out.String())
	}
	token = m[1]
	failingRe := regexp.MustCompile(`demo remote server failing\s+http://(\S+)`)
	fm := failingRe.FindStringSubmatch(out.String())
	if fm == nil {
		t.Fatalf("the demo did not name its failing server: %s", out.String())
	}
	failing := fm[1]
	// Two posts to 71 followers: the fast host's 80 succeed, the gone
	// host's 8 die, the failing host is held after its first 503s.
	waitFor(t, "the fan-out", func() bool {
		_, q := get(t, base+"/admin/api/queue", token)
		by, _ := q["by_state"].(map[string]any)
		s, _ := by["succeeded"].(float64)
		d, _ := by["dead"].(float64)
		return s >= 80 && d == 8
	})
	// The failing host's first attempts fail and hold its other jobs on
	// the retry curve, unattempted: the breaker counts the failures and its
	// 30 jobs stay queued, none spent. The quarantine needs 10 failures,
	// about five holds (a minute and more); the breaker's own tests (the
	// engine's and test/e2e's, on a driven clock) prove it.
	waitFor(t, "the failing host's hold", func() bool {
		_, in := get(t, base+"/admin/api/instances", token)
		l, _ := in["instances"].([]any)
		failures, quarantined := 0.0, false
		for _, v := range l {
			if m, _ := v.(map[string]any); m["host"] == failing {
				failures, _ = m["consecutive_failures"].(float64)
				quarantined, _ = m["quarantined"].(bool)
			}
		}
		if failures < 1 || failures >= 10 || quarantined {
			return false
		}
		// All 30 jobs of the host queued and waiting: the failed ones on
		// their curve, the others held. Without the hold the unattempted
		// ones would be due now (and the breaker would quarantine the host
		// within a second).
		_, q := get(t, base+"/admin/api/jobs?state=queued&host="+failing+"&limit=100", token)
		jobs, _ := q["jobs"].([]any)
		if len(jobs) != 30 {
			return false
		}
		for _, v := range jobs {
			m, _ := v.(map[string]any)
			s, _ := m["run_at"].(string)
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil || time.Until(at) < 5*time.Second {
				return false
			}
		}
		return true
	})
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("demo exit %d: %s", code, errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("demo did not stop")
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the demo wrote a data directory: %v", err)
	}
}

// herald.example.env documents every setting, with its default.
func TestExampleEnvListsEverySetting(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../herald.example.env")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			lines[k] = v
		}
	}
	settings := bootstrap.Settings()
	for _, s := range settings {
		v, ok := lines[s[0]]
		if !ok {
			t.Errorf("herald.example.env lacks %s", s[0])
		} else if v != s[1] {
			t.Errorf("herald.example.env: %s=%q, the default is %q", s[0], v, s[1])
		}
	}
	if len(lines) != len(settings) {
		t.Errorf("herald.example.env has %d variables, there are %d settings", len(lines), len(settings))
	}
	// And it loads: a server could start with it as is.
	if _, err := bootstrap.LoadConfig(nil, func(k string) string { return lines[k] }, io.Discard); err != nil {
		t.Fatalf("herald.example.env does not load: %v", err)
	}
}

// The README's settings table lists every setting with its default.
func TestReadmeListsEverySetting(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			continue
		}
		names, def := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		// One row may name two settings: "`A`, `B` | `1`, `2`".
		defs := strings.Split(def, ", ")
		for i, n := range strings.Split(names, ", ") {
			d := def
			if len(defs) == len(strings.Split(names, ", ")) {
				d = defs[i]
			}
			rows[strings.Trim(n, "`")] = strings.Trim(d, "`")
		}
	}
	for _, s := range bootstrap.Settings() {
		d, ok := rows[s[0]]
		want := s[1]
		if want == "" {
			want = "none"
		}
		switch {
		case !ok:
			t.Errorf("README's settings table lacks %s", s[0])
		case !strings.HasPrefix(d, want):
			t.Errorf("README: %s defaults to %q, the code to %q", s[0], d, want)
		}
	}
}

// The domain-block commands on the default store: list, a dry run that
// changes nothing, the import, the export to stdout and to a file, which
// imports again as it was; a suspension ends the domain's queued job.
func TestDomainBlocksCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env, expect, stores := migratedSQLite(t, dir)
	ctx := context.Background()
	j, _ := domain.NewJob(contract.JobID("cli-spam"), "https://l.example/act/1", "https://spam.example/inbox", "s", "k", []byte("{}"), time.Now())
	if _, err := stores.Jobs.Enqueue(ctx, []domain.Job{j}); err != nil {
		t.Fatal(err)
	}

	list := filepath.Join(dir, "blocks.csv")
	csv := "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n" +
		"spam.example,suspend,false,false,spam,false\n" +
		"loud.example,silence,false,false,,false\n" +
		"media.example,noop,true,false,,false\n" +
		"not a domain,suspend,false,false,,false\n"
	if err := os.WriteFile(list, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(0, "no domain is blocked", "domain-blocks", "list")
	r := expect(0, "dry run: nothing was changed", "domain-blocks", "import", list, "--dry-run")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`2\s+would add\s+spam\.example\s+suspend`), regexp.MustCompile(`3\s+would add\s+loud\.example\s+silence`),
		regexp.MustCompile(`4\s+skipped\s+media\.example\s+severity noop`), regexp.MustCompile(`5\s+invalid\s+not a domain\s+`),
		regexp.MustCompile(`2 would add, 0 would change, 0 unchanged, 1 skipped, 1 invalid`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("dry run lacks %s:\n%s", want, r.stdout)
		}
	}
	expect(0, "no domain is blocked", "domain-blocks", "list")
	if got, _ := stores.JobAdmin.Get(ctx, j.ID); got.State != domain.JobQueued {
		t.Fatalf("a dry run ended the job: %+v", got)
	}

	r = expect(0, "2 added, 0 changed", "domain-blocks", "import", list)
	if !strings.Contains(r.stdout, "suspensions ended 1 queued deliveries") {
		t.Fatalf("import:\n%s", r.stdout)
	}
	if got, _ := stores.JobAdmin.Get(ctx, j.ID); got.State != domain.JobDead || got.LastError != "suspended" {
		t.Fatalf("the suspension did not end the job: %+v", got)
	}
	r = expect(0, "2 blocks", "domain-blocks", "list")
	if !regexp.MustCompile(`spam\.example\s+suspend\s+\S+\s+spam`).MatchString(r.stdout) || !strings.Contains(r.stdout, "loud.example") {
		t.Fatalf("list:\n%s", r.stdout)
	}
	expect(0, "0 added, 0 changed, 2 unchanged", "domain-blocks", "import", list)

	want := "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n" +
		"loud.example,silence,false,false,,false\nspam.example,suspend,false,false,spam,false\n"
	if r := expect(0, "#domain", "domain-blocks", "export"); r.stdout != want {
		t.Fatalf("export to stdout:\n%s", r.stdout)
	}
	out := filepath.Join(dir, "export.csv")
	expect(0, "wrote 2 blocks to "+out, "domain-blocks", "export", out)
	if b, err := os.ReadFile(out); err != nil || string(b) != want {
		t.Fatalf("export file %q %v", b, err)
	}

	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want int
		says string
	}{
		{"import without a file", env, []string{"domain-blocks", "import"}, 2, "missing FILE"},
		{"no such file", env, []string{"domain-blocks", "import", filepath.Join(dir, "nope.csv")}, 1, "no such file"},
		{"memory store", map[string]string{"HERALD_STORE": "memory"}, []string{"domain-blocks", "list"}, 1, "HERALD_STORE=memory"},
		{"dry-run not a bool", env, []string{"domain-blocks", "import", list, "--dry-run=maybe"}, 2, "-dry-run"},
	} {
		if r := herald(t, tt.env, tt.args...); r.code != tt.want || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%s: exit %d %q, want %d saying %q", tt.name, r.code, r.stderr, tt.want, tt.says)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	_ = os.WriteFile(bad, []byte("spam.example,suspend\n"), 0o644)
	expect(1, "#domain column", "domain-blocks", "import", bad)
}

// herald personas delete: the operator deletes a persona in the store;
// the servers' deletions' pass does the rest. Unknown names exit 1.
func TestPersonasDeleteCommand(t *testing.T) {
	t.Parallel()
	_, expect, stores := migratedSQLite(t, t.TempDir())
	ctx := context.Background()
	rn, _ := domain.NewReservedName("dora", domain.NameKindPersona, "a1", time.Now())
	if err := stores.Names.Reserve(ctx, rn); err != nil {
		t.Fatal(err)
	}
	if err := stores.Actors.CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "dora", Keys: contract.Keys, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	expect(2, "missing NAME", "personas", "delete")
	expect(1, "not found", "personas", "delete", "nobody")
	expect(0, "dora is deleted", "personas", "delete", "dora")
	if got, err := stores.Names.Get(ctx, "dora"); err != nil || !got.Deleted() {
		t.Fatalf("dora's name after the command: %+v %v", got, err)
	}
	if _, err := stores.Actors.AvatarByName(ctx, "dora"); err == nil {
		t.Fatal("dora still a persona")
	}
	expect(1, "gone", "personas", "delete", "dora")
}
