package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// heraldBuild is a herald binary of one revision, built for the inbox
// scenario.
type heraldBuild struct {
	label string // baseline or current
	rev   string // short commit
	tree  string // "+ working tree ..." when built from the working tree
	desc  string // the commit's subject, for the report
	bin   string
	sha   string // of the binary, so that two builds of the same code show it
	// inboxLimit: the binary lists HERALD_INBOX_RATE_PER_MINUTE among its
	// settings, so the generous limit the scenario sets applies to it.
	// Older builds read only the variables they know and ignore it.
	inboxLimit bool
}

// buildHerald builds ./cmd/herald as `make build` does, into dir: of the
// working tree of repo when rev is empty, else of rev checked out in a
// temporary git worktree (removed afterwards).
func buildHerald(ctx context.Context, repo, dir, label, rev string) (*heraldBuild, error) {
	b := &heraldBuild{label: label, bin: filepath.Join(dir, "herald-"+label)}
	src := repo
	commit := "HEAD"
	if rev != "" {
		full, err := gitOut(ctx, repo, "rev-parse", "--verify", rev+"^{commit}")
		if err != nil {
			return nil, fmt.Errorf("%s revision %q: %w", label, rev, err)
		}
		commit = full
		src = filepath.Join(dir, label+"-src")
		if _, err := gitOut(ctx, repo, "worktree", "add", "--detach", src, full); err != nil {
			return nil, fmt.Errorf("git worktree add %s: %w", rev, err)
		}
		defer func() { _, _ = gitOut(context.Background(), repo, "worktree", "remove", "--force", src) }()
	}
	short, err := gitOut(ctx, repo, "rev-parse", "--short", commit)
	if err != nil {
		return nil, err
	}
	b.rev = short
	if b.desc, err = gitOut(ctx, repo, "log", "-1", "--format=%s", commit); err != nil {
		return nil, err
	}
	if rev == "" {
		// Untracked files count: a new .go file is part of the build.
		dirty, err := gitOut(ctx, repo, "status", "--porcelain")
		if err != nil {
			return nil, err
		}
		b.tree = "+ working tree"
		if dirty != "" {
			b.tree += fmt.Sprintf(" (%d paths changed or new)", len(strings.Split(dirty, "\n")))
		}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", b.bin, "./cmd/herald")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the %s herald (%s %s): %v\n%s", label, b.rev, b.tree, err, out)
	}
	bin, err := os.ReadFile(b.bin)
	if err != nil {
		return nil, err
	}
	b.sha = fmt.Sprintf("%x", sha256.Sum256(bin))[:12]
	help, err := exec.CommandContext(ctx, b.bin, "help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s help: %v\n%s", b.bin, err, help)
	}
	b.inboxLimit = bytes.Contains(help, []byte("HERALD_INBOX_RATE_PER_MINUTE"))
	return b, nil
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// heraldServer is one `herald serve` process on loopback.
type heraldServer struct {
	cmd     *exec.Cmd
	url     string
	dataDir string
	logPath string
	exited  chan struct{}
	token   string // the persona's owner's, once signUp has run
}

// startHerald starts b on a free loopback port with a fresh SQLite data
// directory under dir, and waits until /readyz answers. The environment
// holds only the scenario's settings, so none of the caller's HERALD_
// variables leaks in; extra settings (NAME=value) come last and win over
// the defaults (exec keeps the last of a duplicate key).
func startHerald(ctx context.Context, b *heraldBuild, dir string, extra ...string) (*heraldServer, error) {
	dataDir, err := os.MkdirTemp(dir, "data-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &heraldServer{url: "http://127.0.0.1:" + strconv.Itoa(port), dataDir: dataDir, logPath: dataDir + ".log", exited: make(chan struct{})}
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	s.cmd = exec.Command(b.bin, "serve")
	s.cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"HERALD_ADDR=127.0.0.1:" + strconv.Itoa(port),
		"HERALD_DOMAIN=" + inboxDomain,
		"HERALD_STORE=sqlite",
		"HERALD_DATA_DIR=" + dataDir,
		"HERALD_ALLOW_PRIVATE_TARGETS=true",
		"HERALD_LOG_FORMAT=json",
		"HERALD_SHUTDOWN_GRACE=5s",
		// The trust work's inbox rate limit, generous enough never to
		// answer 429 here; builds without it ignore the variables.
		"HERALD_INBOX_RATE_PER_MINUTE=1000000",
		"HERALD_INBOX_BURST=100000",
	}
	s.cmd.Env = append(s.cmd.Env, extra...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(time.Minute)
	probe := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := probe.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("herald exited at start: %s", s.logTail())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("herald not ready in a minute: %s", s.logTail())
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// stop sends SIGTERM and waits for the process (SIGKILL after 15 s).
func (s *heraldServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// logTail is the end of the server's log, for an error message.
func (s *heraldServer) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// signUp creates the persona the activities mention, through the client
// API, and checks its actor URI is the one they name.
func (s *heraldServer) signUp(ctx context.Context) error {
	body := fmt.Sprintf(`{"username":%q,"password":"correct horse battery staple"}`, inboxPersona)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/api/v1/accounts", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Token   string `json:"token"`
		Persona struct {
			URI string `json:"uri"`
		} `json:"persona"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("sign-up: HTTP %d: %s", resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("sign-up answered %q: %v", raw, err)
	}
	if out.Persona.URI != inboxPersonaURI() {
		return fmt.Errorf("sign-up made persona %q, the activities mention %q", out.Persona.URI, inboxPersonaURI())
	}
	s.token = out.Token
	return nil
}

// cpu is the server process's CPU time so far, user and system: utime
// and stime of /proc/PID/stat (fields 14 and 15, in ticks of hz a second;
// the name in field 2 may hold spaces, so fields are counted after its
// closing parenthesis).
func (s *heraldServer) cpu(hz int64) (time.Duration, error) {
	pid := s.cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %v", pid, err)
	}
	return time.Duration(utime+stime) * time.Second / time.Duration(hz), nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux Go supports, asked of getconf when it is there.
func clockTicks() int64 {
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
}

// storedNotes counts, once the server has stopped, the posts its SQLite
// store holds from the remote server at base: every Create sent must be
// stored by each build, or the builds did not do the same work.
func (s *heraldServer) storedNotes(ctx context.Context, base string) (int, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.dataDir, "herald.db")+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM posts WHERE object_uri LIKE ? || '/%'`, base).Scan(&n)
	return n, err
}
