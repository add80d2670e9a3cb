package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// peerDir is where the GoToSocial binary and its gts script are: the
// HERALD_GOTOSOCIAL directory, else the CI machine's (findPeer). "" when
// there is none.
func peerDir() string {
	return findPeer("HERALD_GOTOSOCIAL", "gotosocial", "gts", "gotosocial")
}

// findPeer is the directory a peer's files are in: the one the variable
// env names, else <name> in the peers directory the CI machine keeps
// beside the checkout (the path below is relative to test/interop, where
// the suite runs). "" when a file is missing there.
func findPeer(env, name string, files ...string) string {
	dir := os.Getenv(env)
	if dir == "" {
		dir = filepath.Join("../../../shared/peers", name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(abs, f)); err != nil {
			return ""
		}
	}
	return abs
}

// unverified is what this suite proves, named when it cannot run.
const unverified = "federation with a real GoToSocial (resolve, first-contact follows, posts, replies, mentions, " +
	"direct and long posts, edits, deletes, Undo, profile update, groups, boosts and likes, restart) stays unverified"

// requirePeer skips unless the suite is enabled and a GoToSocial exists.
func requirePeer(t *testing.T) string {
	t.Helper()
	return requireDir(t, peerDir(), "no GoToSocial binary and gts script (set HERALD_GOTOSOCIAL to their directory)", unverified)
}

// requireDir skips, saying what stays unverified, unless the suite is
// enabled, dir names a peer (else missing says why not), and the tools
// its script needs are installed.
func requireDir(t *testing.T, dir, missing, unverified string) string {
	t.Helper()
	if os.Getenv("HERALD_INTEROP") != "1" {
		t.Skip("HERALD_INTEROP is not 1 (run `make interop`): " + unverified)
	}
	if dir == "" {
		t.Skip(missing + ": " + unverified)
	}
	for _, tool := range []string{"curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the peer's script needs %s, which is not installed: %s", tool, unverified)
		}
	}
	return dir
}

// freePort picks a loopback port for a server that must know its own
// address before it starts (both servers put it in their actor URIs).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// eventually polls cond for up to 60 s: both servers deliver
// asynchronously, and the machine may be loaded.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// gts is one GoToSocial server started by the gts script.
type gts struct {
	t      *testing.T
	script string
	dir    string
	port   int
	base   string
	host   string
}

func startGTS(t *testing.T, peer string) *gts {
	t.Helper()
	g := &gts{t: t, script: filepath.Join(peer, "gts"), dir: t.TempDir(), port: freePort(t)}
	g.host = fmt.Sprintf("127.0.0.1:%d", g.port)
	g.base = "http://" + g.host
	t.Cleanup(func() {
		_ = exec.Command(g.script, "stop", g.dir).Run()
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(g.dir, "gts.log")); err == nil {
				t.Logf("gotosocial log (last 60 lines):\n%s", lastLines(string(log), 60))
			}
		}
	})
	cmd := exec.Command(g.script, "start", g.dir, fmt.Sprint(g.port))
	// The suite polls GoToSocial's client API several times a second, and
	// its default limit (300 requests in 5 minutes from one address)
	// answered 429 in the middle of a run, failing the stores after it.
	cmd.Env = append(os.Environ(), "GTS_ADVANCED_RATE_LIMIT_REQUESTS=0")
	out, err := cmd.CombinedOutput()
	if err != nil && !g.answersLate(t) {
		t.Fatalf("gts start: %v\n%s", err, out)
	}
	return g
}

// answersLate waits on a GoToSocial that the gts script gave up on while it
// was still starting: the script waits 60 s, and on a loaded machine its
// WebAssembly compilation alone took 100 s (seen in make interop). Only a
// process still alive is waited on, at most 5 more minutes.
func (g *gts) answersLate(t *testing.T) bool {
	pid, err := os.ReadFile(filepath.Join(g.dir, "pid"))
	if err != nil {
		return false
	}
	proc := filepath.Join("/proc", strings.TrimSpace(string(pid)))
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(proc); err != nil {
			return false // it exited: the script's error says why
		}
		if resp, err := http.Get(g.base + "/api/v1/instance"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Logf("gotosocial answered after the gts script's 60 s wait (slow start under load)")
				return true
			}
		}
		time.Sleep(time.Second)
	}
	return false
}

func (g *gts) log() string {
	b, _ := os.ReadFile(filepath.Join(g.dir, "gts.log"))
	return string(b)
}

// account creates an unlocked account and returns a client for it.
func (g *gts) account(name string) *gtsUser {
	g.t.Helper()
	out, err := exec.Command(g.script, "account", g.dir, name).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		g.t.Fatalf("gts account %s: %v %s", name, err, stderr)
	}
	u := &gtsUser{g: g, name: name, token: strings.TrimSpace(string(out)), uri: g.base + "/users/" + name}
	u.id = u.verify()
	return u
}

// gtsUser drives one GoToSocial account through its Mastodon API.
type gtsUser struct {
	g     *gts
	name  string
	token string
	id    string
	uri   string
}

func (u *gtsUser) call(method, path string, form url.Values, out any) int {
	u.g.t.Helper()
	return do(u.g.t, apiRequest(u.g.t, method, u.g.base+path, u.token, form), out)
}

// apiRequest is a Mastodon-API request with the bearer token, the form
// (if any) as its urlencoded body.
func apiRequest(t *testing.T, method, target, token string, form url.Values) *http.Request {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req
}

func do(t *testing.T, req *http.Request, out any) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", req.Method, req.URL, resp.StatusCode, clip(b), err)
		}
	}
	if resp.StatusCode >= 300 {
		t.Logf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, clip(b))
	}
	return resp.StatusCode
}

func clip(b []byte) string {
	if len(b) > 500 {
		return string(b[:500]) + "…"
	}
	return string(b)
}

func (u *gtsUser) verify() string {
	var acct struct {
		ID string `json:"id"`
	}
	if s := u.call("GET", "/api/v1/accounts/verify_credentials", nil, &acct); s != 200 || acct.ID == "" {
		u.g.t.Fatalf("verify_credentials of %s: %d", u.name, s)
	}
	return acct.ID
}

// gtsAccount and gtsStatus are the parts of the Mastodon API's entities
// the suite reads.
type gtsAccount struct {
	ID          string `json:"id"`
	Acct        string `json:"acct"`
	URL         string `json:"url"`
	DisplayName string `json:"display_name"`
}

type gtsStatus struct {
	ID          string     `json:"id"`
	URI         string     `json:"uri"`
	Content     string     `json:"content"`
	Visibility  string     `json:"visibility"`
	InReplyToID *string    `json:"in_reply_to_id"`
	Account     gtsAccount `json:"account"`
	Reblog      *gtsStatus `json:"reblog"`
	ReblogsCnt  int        `json:"reblogs_count"`
	Mentions    []struct {
		Acct string `json:"acct"`
		URL  string `json:"url"`
	} `json:"mentions"`
}

// resolveAccount finds a remote account by user@host (WebFinger, then its
// actor, as GoToSocial does it); "" when not found.
func (u *gtsUser) resolveAccount(acct string) string {
	var res struct {
		Accounts []gtsAccount `json:"accounts"`
	}
	q := url.Values{"q": {"@" + acct}, "resolve": {"true"}, "type": {"accounts"}}
	if s := u.call("GET", "/api/v2/search?"+q.Encode(), nil, &res); s != 200 || len(res.Accounts) == 0 {
		return ""
	}
	return res.Accounts[0].ID
}

// resolveStatus finds a status by its URI, fetching it if needed.
func (u *gtsUser) resolveStatus(uri string) *gtsStatus {
	var res struct {
		Statuses []gtsStatus `json:"statuses"`
	}
	q := url.Values{"q": {uri}, "resolve": {"true"}, "type": {"statuses"}}
	if s := u.call("GET", "/api/v2/search?"+q.Encode(), nil, &res); s != 200 || len(res.Statuses) == 0 {
		return nil
	}
	return &res.Statuses[0]
}

type relationship struct {
	Following  bool `json:"following"`
	FollowedBy bool `json:"followed_by"`
	Requested  bool `json:"requested"`
	BlockedBy  bool `json:"blocked_by"`
}

func (u *gtsUser) relationship(id string) relationship {
	var rs []relationship
	if s := u.call("GET", "/api/v1/accounts/relationships?id[]="+url.QueryEscape(id), nil, &rs); s != 200 || len(rs) == 0 {
		return relationship{}
	}
	return rs[0]
}

func (u *gtsUser) post(form url.Values) gtsStatus {
	u.g.t.Helper()
	var st gtsStatus
	if s := u.call("POST", "/api/v1/statuses", form, &st); s != 200 {
		u.g.t.Fatalf("%s posting %s: %d", u.name, clip([]byte(form.Encode())), s)
	}
	return st
}

// status reads one status by its GoToSocial id; nil when it answers
// otherwise than 200 (a deleted status is 404).
func (u *gtsUser) status(id string) *gtsStatus {
	var st gtsStatus
	if s := u.call("GET", "/api/v1/statuses/"+id, nil, &st); s != 200 {
		return nil
	}
	return &st
}

// replies are the statuses of a status's thread below it.
func (u *gtsUser) replies(id string) []gtsStatus {
	var ctx struct {
		Descendants []gtsStatus `json:"descendants"`
	}
	u.call("GET", "/api/v1/statuses/"+id+"/context", nil, &ctx)
	return ctx.Descendants
}

func (u *gtsUser) home() []gtsStatus {
	var sts []gtsStatus
	u.call("GET", "/api/v1/timelines/home?limit=40", nil, &sts)
	return sts
}

type gtsNotification struct {
	Type    string     `json:"type"`
	Account gtsAccount `json:"account"`
	Status  *gtsStatus `json:"status"`
}

func (u *gtsUser) notifications() []gtsNotification {
	var ns []gtsNotification
	u.call("GET", "/api/v1/notifications?limit=40", nil, &ns)
	return ns
}

// inHome finds a status in the home timeline whose content holds text.
func (u *gtsUser) inHome(text string) *gtsStatus {
	for _, s := range u.home() {
		if strings.Contains(s.Content, text) || (s.Reblog != nil && strings.Contains(s.Reblog.Content, text)) {
			return &s
		}
	}
	return nil
}

// herald is one Herald binary running as an OS process.
type herald struct {
	t    *testing.T
	bin  string
	env  map[string]string
	base string
	host string

	mu   sync.Mutex
	logs bytes.Buffer // every run's output, in order
	cmd  *exec.Cmd
	done chan error
}

func (h *herald) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.Write(p)
}

func (h *herald) output() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.String()
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildHerald builds the binary once per test run, as `make build` does.
func buildHerald(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "herald-interop-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "herald")
		out, err := exec.Command("go", "build", "-o", builtBin, "../../cmd/herald").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// adminToken opens the operator API of the Herald under test.
const adminToken = "interop-admin-token"

func newHerald(t *testing.T, store map[string]string) *herald {
	t.Helper()
	port := freePort(t)
	h := &herald{t: t, bin: buildHerald(t), host: fmt.Sprintf("127.0.0.1:%d", port)}
	h.base = "http://" + h.host
	h.env = map[string]string{
		"HERALD_ADDR": h.host, "HERALD_DOMAIN": h.host, "HERALD_ALLOW_PRIVATE_TARGETS": "true",
		"HERALD_LOG_FORMAT": "json", "HERALD_LOG_LEVEL": "debug", "HERALD_BCRYPT_COST": "4",
		"HERALD_AUTH_RATE_PER_MINUTE": "1000", "HERALD_AUTH_BURST": "100", "HERALD_SHUTDOWN_GRACE": "5s",
		"HERALD_ADMIN_TOKEN": adminToken,
	}
	for k, v := range store {
		h.env[k] = v
	}
	t.Cleanup(func() {
		h.kill()
		if t.Failed() {
			// The log is at debug level: a step's polling fills its last
			// lines, so the warnings and errors of the whole run come first.
			t.Logf("herald log, warnings and errors (last 60):\n%s", lastLines(warnings(h.output()), 60))
			t.Logf("herald log (last 80 lines):\n%s", lastLines(h.output(), 80))
		}
	})
	h.start()
	return h
}

func (h *herald) start() {
	h.t.Helper()
	cmd := exec.Command(h.bin, "serve")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range h.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = h, h
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	h.mu.Lock()
	h.cmd, h.done = cmd, done
	h.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(h.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-done:
			h.t.Fatalf("herald exited before it was ready (%v):\n%s", err, lastLines(h.output(), 40))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("herald not ready after 60 s:\n%s", lastLines(h.output(), 40))
		}
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (h *herald) stop() {
	h.t.Helper()
	h.mu.Lock()
	cmd, done := h.cmd, h.done
	h.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		h.t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			h.t.Fatalf("herald exited with %v after SIGTERM", err)
		}
	case <-time.After(60 * time.Second):
		h.t.Fatal("herald did not stop within 60 s of SIGTERM")
	}
	h.mu.Lock()
	h.cmd = nil
	h.mu.Unlock()
}

func (h *herald) kill() {
	h.mu.Lock()
	cmd, done := h.cmd, h.done
	h.cmd = nil
	h.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-done
	}
}

// api calls Herald's client API with a bearer token.
func (h *herald) api(method, path, token string, in, out any) int {
	h.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.base+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	return do(h.t, req, out)
}

func (h *herald) signUp(name string) string {
	h.t.Helper()
	var s struct {
		Token string `json:"token"`
	}
	if st := h.api("POST", "/api/v1/accounts", "", map[string]string{"username": name, "password": "interop horse battery"}, &s); st != 201 {
		h.t.Fatalf("sign up %s: %d", name, st)
	}
	return s.Token
}

type heraldPost struct {
	URI        string `json:"uri"`
	Author     string `json:"author"`
	Content    string `json:"content"`
	Visibility string `json:"visibility"`
	Group      string `json:"group"`
	InReplyTo  string `json:"in_reply_to"`
	Updated    string `json:"updated"`
	Local      bool   `json:"local"`
	Likes      int    `json:"likes"`
	Announces  int    `json:"announces"`
	Boost      *struct {
		By       string `json:"by"`
		Activity string `json:"activity"`
	} `json:"boost"`
}

func (h *herald) postsBy(token, author string) []heraldPost {
	var out struct {
		Posts []heraldPost `json:"posts"`
	}
	h.api("GET", "/api/v1/posts?limit=50&author="+url.QueryEscape(author), token, nil, &out)
	return out.Posts
}

func (h *herald) postBy(token, author, text string) *heraldPost {
	for _, p := range h.postsBy(token, author) {
		if strings.Contains(p.Content, text) {
			return &p
		}
	}
	return nil
}

// direct finds a note containing text in the direct thread of the persona
// as with the actor with, through the client API.
func (h *herald) direct(token, as, with, text string) *heraldPost {
	var out struct {
		Direct []heraldPost `json:"direct"`
	}
	h.api("GET", "/api/v1/direct?limit=50&as="+url.QueryEscape(as)+"&with="+url.QueryEscape(with), token, nil, &out)
	for _, p := range out.Direct {
		if strings.Contains(p.Content, text) {
			return &p
		}
	}
	return nil
}

// mentioned finds a post containing text among the mentions of the
// persona as, through the client API.
func (h *herald) mentioned(token, as, text string) *heraldPost {
	var out struct {
		Posts []heraldPost `json:"posts"`
	}
	h.api("GET", "/api/v1/mentions?limit=50&as="+url.QueryEscape(as), token, nil, &out)
	for _, p := range out.Posts {
		if strings.Contains(p.Content, text) {
			return &p
		}
	}
	return nil
}

func (h *herald) publish(token string, in map[string]any) string {
	h.t.Helper()
	_, uri := h.publishID(token, in)
	return uri
}

// publishID publishes and returns the post's id (for PATCH and DELETE)
// and object URI.
func (h *herald) publishID(token string, in map[string]any) (string, string) {
	h.t.Helper()
	var out struct {
		ID  string `json:"id"`
		URI string `json:"uri"`
	}
	if s := h.api("POST", "/api/v1/posts", token, in, &out); s != 201 {
		h.t.Fatalf("publish %v: %d", clip([]byte(fmt.Sprint(in))), s)
	}
	return out.ID, out.URI
}

func (h *herald) follow(token, as, target string) string {
	h.t.Helper()
	var out struct {
		State string `json:"state"`
	}
	if s := h.api("POST", "/api/v1/follows", token, map[string]string{"as": as, "target": target}, &out); s != 200 && s != 201 {
		h.t.Fatalf("follow %s: %d", target, s)
	}
	return out.State
}

func (h *herald) followers(token, persona string) map[string]string {
	var out struct {
		Followers []struct {
			URI   string `json:"uri"`
			State string `json:"state"`
		} `json:"followers"`
	}
	h.api("GET", "/api/v1/personas/"+persona+"/followers?limit=200", token, nil, &out)
	m := map[string]string{}
	for _, f := range out.Followers {
		m[f.URI] = f.State
	}
	return m
}

// logged reports whether some line of Herald's log holds every fragment.
func (h *herald) logged(fragments ...string) bool {
	for _, line := range strings.Split(h.output(), "\n") {
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(line, f)
		}
		if ok {
			return true
		}
	}
	return false
}

var (
	heraldStatus5xx = regexp.MustCompile(`"status":5\d\d`)
	gtsStatus5xx    = regexp.MustCompile(`\b5\d\d\b`)
	// gtsTimestamp is the time a GoToSocial log line starts with: its
	// milliseconds (".540") would read as a 5xx.
	gtsTimestamp = regexp.MustCompile(`timestamp="[^"]*"`)
)

// checkLogs fails on a 5xx answered by Herald, or a panic, in either log.
func checkLogs(t *testing.T, h *herald, g *gts) {
	t.Helper()
	checkHeraldLog(t, h)
	g.checkLog(t, h)
}

// checkHeraldLog fails on a 5xx answered by Herald, or a panic, in its log.
func checkHeraldLog(t *testing.T, h *herald) {
	t.Helper()
	for _, line := range strings.Split(h.output(), "\n") {
		if heraldStatus5xx.MatchString(line) || strings.Contains(line, "panic") {
			t.Errorf("herald log: %s", line)
		}
	}
}

// checkLog fails on a panic in GoToSocial's log, or an error it logged
// about Herald: a 5xx answered, a featured collection it could not fetch.
func (g *gts) checkLog(t *testing.T, h *herald) {
	t.Helper()
	for _, line := range strings.Split(g.log(), "\n") {
		if strings.Contains(line, "panic") {
			t.Errorf("gotosocial log: %s", line)
		}
		// GoToSocial fetches every remote account's featured collection
		// and logs an error when it cannot.
		if strings.Contains(line, h.host) && strings.Contains(strings.ToLower(line), "featured") &&
			(strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN")) {
			t.Errorf("gotosocial log: %s", line)
		}
		// GoToSocial names the remote it talked to; a 5xx from Herald
		// shows there as a status code next to Herald's host.
		if strings.Contains(line, h.host) && gtsStatus5xx.MatchString(gtsTimestamp.ReplaceAllString(strings.ReplaceAll(line, h.host, ""), "")) &&
			(strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN")) {
			t.Errorf("gotosocial log: %s", line)
		}
	}
}

// warnings is the lines of a JSON log at level WARN or ERROR.
func warnings(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// postgresDatabase creates a fresh database for one run and drops it
// afterwards, so the run starts on an empty store.
func postgresDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("PostgreSQL at DATABASE_URL is needed for the postgres run (set HERALD_INTEROP_STORES to leave it out): %v", err)
	}
	defer conn.Close(context.Background())
	name := fmt.Sprintf("herald_interop_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

// requests lists the follow requests waiting for a persona's approval.
func (h *herald) requests(token, persona string) map[string]string {
	var out struct {
		Followers []struct {
			URI   string `json:"uri"`
			State string `json:"state"`
		} `json:"followers"`
	}
	h.api("GET", "/api/v1/personas/"+persona+"/followers?state=pending&limit=200", token, nil, &out)
	m := map[string]string{}
	for _, f := range out.Followers {
		m[f.URI] = f.State
	}
	return m
}
