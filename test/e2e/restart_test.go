package e2e_test

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldfed/herald/test/heraldtest"
)

// process is one `herald` binary running as an OS process.
type process struct {
	t    *testing.T
	cmd  *exec.Cmd
	logs *heraldtest.LogBuffer
	done chan error
}

// buildHerald builds the binary, as `make build` does, into the test's
// temporary directory.
func buildHerald(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "herald")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/herald")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeAddr picks a loopback port for a server whose HERALD_DOMAIN must name
// it before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runHerald starts the binary with the given settings (and nothing else of
// this process's environment but PATH and HOME) and its arguments.
func runHerald(t *testing.T, bin string, env map[string]string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &process{t: t, cmd: cmd, logs: &heraldtest.LogBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("herald %s output:\n%s", strings.Join(args, " "), p.output())
		}
	})
	return p
}

func (p *process) output() string {
	return p.logs.String()
}

// wait returns the exit code, failing the test if the process does not
// end within the bound.
func (p *process) wait(within time.Duration) int {
	p.t.Helper()
	select {
	case err := <-p.done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			p.t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		p.t.Fatalf("herald did not exit within %s:\n%s", within, p.output())
		return -1
	}
}

// ready waits until base answers /readyz with 200.
func (p *process) ready(base string) {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-p.done:
			p.t.Fatalf("herald exited before it was ready (%v):\n%s", err, p.output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("herald not ready after 60 s:\n%s", p.output())
		}
	}
}

// stop sends SIGTERM and expects a clean exit.
func (p *process) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	if code := p.wait(60 * time.Second); code != 0 {
		p.t.Fatalf("herald exited %d after SIGTERM:\n%s", code, p.output())
	}
}

// held answers inbox POSTs only when release is closed, or when the
// sender gives up: a delivery in flight for as long as the test wants.
type held struct{ release chan struct{} }

func (h *held) behavior(w http.ResponseWriter, r *http.Request) {
	select {
	case <-h.release:
		w.WriteHeader(http.StatusAccepted)
	case <-r.Context().Done():
	}
}

// The "done when": `herald serve` on the default store with a data
// directory, stopped with SIGTERM and started again as a new process,
// still has the account, its personas, their key pairs, the follower and
// the delivery that was in flight, which it then sends, signed with the
// key the remote server cached before the restart (a new key would fail
// there, as GoToSocial refuses it with 401). A second process on the same
// data directory is refused at start, and so is `herald migrate up`, while
// operators' commands work beside it; `herald backup` copies the running
// instance, and a server started on the copy has the same data.
func TestRestartKeepsEverything(t *testing.T) {
	t.Parallel()
	bin := buildHerald(t)
	dataDir := filepath.Join(t.TempDir(), "herald-data")
	addr := freeAddr(t)
	base := "http://" + addr
	env := map[string]string{
		"HERALD_ADDR": addr, "HERALD_DOMAIN": addr, "HERALD_DATA_DIR": dataDir,
		"HERALD_ALLOW_PRIVATE_TARGETS": "true", "HERALD_BCRYPT_COST": "4", "HERALD_SHUTDOWN_GRACE": "1s",
		"HERALD_ADMIN_TOKEN": "t0ken", "HERALD_LOG_FORMAT": "json",
	}
	rm := newRemote(t, false, time.Now, "bob")
	bob := rm.actor("bob")
	a := api{t: t, base: base}

	first := runHerald(t, bin, env, "serve")
	first.ready(base)
	if _, err := os.Stat(filepath.Join(dataDir, "herald.db")); err != nil {
		t.Fatalf("the default store did not create its file in HERALD_DATA_DIR: %v", err)
	}
	token := a.signUp("alice")
	if status, out := a.call(http.MethodPost, "/api/v1/personas", token, map[string]string{"name": "news"}); status != http.StatusCreated {
		t.Fatalf("persona: %d %v", status, out)
	}
	alice := base + "/users/alice"
	rm.follow(bob, alice, alice+"/inbox")
	eventually(t, "the Accept at bob's inbox", func() bool { return len(rm.received("Accept")) == 1 })
	if err := rm.received("Accept")[0].verifyErr; err != nil {
		t.Fatalf("the Accept's signature: %v", err)
	}
	keyBefore := actorKey(t, a, "/users/alice")

	// A post whose delivery is in flight when the server is stopped.
	h := &held{release: make(chan struct{})}
	rm.setBehavior(h.behavior)
	a.post(token, map[string]any{"as": "alice", "content": "before the restart", "visibility": "public"})
	eventually(t, "the Create in flight", func() bool { return len(rm.received("Create")) == 1 })

	// A second server on the same data directory is refused at once.
	second := runHerald(t, bin, map[string]string{"HERALD_ADDR": freeAddr(t), "HERALD_DATA_DIR": dataDir, "HERALD_LOG_FORMAT": "json"}, "serve")
	if code := second.wait(60 * time.Second); code == 0 || !strings.Contains(second.output(), "in use by another Herald process") {
		t.Fatalf("second server on the data directory: exit %d\n%s", code, second.output())
	}
	// A backup of the running instance.
	backupDir := filepath.Join(t.TempDir(), "backup")
	bk := runHerald(t, bin, map[string]string{"HERALD_DATA_DIR": dataDir}, "backup", backupDir)
	if code := bk.wait(60 * time.Second); code != 0 || !strings.Contains(bk.output(), "backed up") {
		t.Fatalf("herald backup: exit %d\n%s", code, bk.output())
	}

	// Operators' commands beside the running server: a reservation through
	// the file is what the server's sign-up then meets; migrating is
	// refused (the server migrated at its start).
	reserve := runHerald(t, bin, map[string]string{"HERALD_DATA_DIR": dataDir}, "names", "reserve", "ops")
	if code := reserve.wait(60 * time.Second); code != 0 {
		t.Fatalf("herald names reserve beside the server: exit %d\n%s", code, reserve.output())
	}
	if status, out := a.call(http.MethodPost, "/api/v1/accounts", "", map[string]string{"username": "ops", "password": "correct horse"}); status != http.StatusConflict {
		t.Fatalf("sign-up of a name the CLI reserved: %d %v", status, out)
	}
	migrate := runHerald(t, bin, map[string]string{"HERALD_DATA_DIR": dataDir}, "migrate", "up")
	if code := migrate.wait(60 * time.Second); code == 0 || !strings.Contains(migrate.output(), "in use by another Herald process") {
		t.Fatalf("herald migrate up beside the server: exit %d\n%s", code, migrate.output())
	}

	first.stop()
	rm.setBehavior(accepted)

	again := runHerald(t, bin, env, "serve")
	again.ready(base)
	if status, out := a.call(http.MethodPost, "/api/v1/sessions", "", map[string]string{"username": "alice", "password": "correct horse"}); status != http.StatusCreated {
		t.Fatalf("login after the restart: %d %v", status, out)
	}
	if keyAfter := actorKey(t, a, "/users/alice"); keyAfter != keyBefore {
		t.Fatal("alice's key changed across the restart")
	}
	if status, _ := a.call(http.MethodGet, "/users/news", "", nil); status != http.StatusOK {
		t.Fatalf("persona news after the restart: %d", status)
	}
	if status, out := a.call(http.MethodGet, "/users/alice/followers", "", nil); status != http.StatusOK || out["totalItems"] != float64(1) {
		t.Fatalf("alice's followers after the restart: %d %v", status, out)
	}
	eventually(t, "the released Create delivered after the restart", func() bool { return len(rm.received("Create")) >= 2 })
	for i, rec := range rm.received("") {
		if rec.verifyErr != nil {
			t.Fatalf("delivery %d (%v) fails the signature check with the key bob's server cached: %v", i, rec.activity["type"], rec.verifyErr)
		}
	}
	eventually(t, "the queue settled", func() bool {
		_, q := a.call(http.MethodGet, "/admin/api/queue", "t0ken", nil)
		by, _ := q["by_state"].(map[string]any)
		return by["succeeded"] == float64(2) && by["queued"] == float64(0) && by["leased"] == float64(0) && by["dead"] == float64(0)
	})
	again.stop()

	// The copy is a data directory of its own.
	restoredEnv := map[string]string{}
	for k, v := range env {
		restoredEnv[k] = v
	}
	restoredEnv["HERALD_DATA_DIR"] = backupDir
	restored := runHerald(t, bin, restoredEnv, "serve")
	restored.ready(base)
	if keyRestored := actorKey(t, a, "/users/alice"); keyRestored != keyBefore {
		t.Fatal("alice's key differs in the backup")
	}
	if status, out := a.call(http.MethodGet, "/users/alice/followers", "", nil); status != http.StatusOK || out["totalItems"] != float64(1) {
		t.Fatalf("alice's followers in the backup: %d %v", status, out)
	}
	restored.stop()
}

// actorKey reads the public key an actor document publishes.
func actorKey(t *testing.T, a api, path string) string {
	t.Helper()
	status, doc := a.call(http.MethodGet, path, "", nil)
	pk, _ := doc["publicKey"].(map[string]any)
	pem, _ := pk["publicKeyPem"].(string)
	if status != http.StatusOK || !strings.Contains(pem, "PUBLIC KEY") {
		t.Fatalf("%s: %d %v", path, status, doc)
	}
	return pem
}
