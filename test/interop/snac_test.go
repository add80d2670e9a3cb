package interop_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// snacUnverified is what TestSnac proves, named when it cannot run.
const snacUnverified = "federation with a real snac (resolve, first-contact follows, posts, replies, " +
	"direct and long posts, edits, deletes, likes and boosts and their Undo, profile update, unfollow, restart, domain suspension) stays unverified"

// snacDir is where the snac binary and its snacpeer script are: the
// HERALD_SNAC directory, else the CI machine's (findPeer). "" when there
// is none.
func snacDir() string { return findPeer("HERALD_SNAC", "snac", "snacpeer", "snac") }

// TestSnac runs the scenarios GoToSocial runs against a real snac (a C
// server), once per store. One snac serves every run (each run has its own
// accounts and a fresh Herald on a new port). snac answers its inbox 202
// before it verifies the signature and drops what fails only in its log,
// so every delivery to it is checked by what it kept: its timeline (read
// by `snacpeer timeline`), the log line of the activity it took, or its
// client API, never the status code Herald got.
func TestSnac(t *testing.T) {
	t.Parallel() // beside TestGoToSocial
	dir := requireDir(t, snacDir(), "no snac binary and snacpeer script (set HERALD_SNAC to their directory)", snacUnverified)
	s := startSnac(t, dir)
	eachStore(t, func(t *testing.T, store string, h *herald) {
		s.t = t
		r := newRun(t, store, s, h)
		r.play(t, sharedScenarios)
		r.play(t, lastScenarios)
	})
}

// snac is one snac server started by the snacpeer script.
type snac struct {
	t      *testing.T
	script string
	dir    string
	port   int
	host   string
	base   string
}

func startSnac(t *testing.T, peer string) *snac {
	t.Helper()
	s := &snac{t: t, script: filepath.Join(peer, "snacpeer"), dir: t.TempDir(), port: freePort(t)}
	s.host = fmt.Sprintf("127.0.0.1:%d", s.port)
	s.base = "http://" + s.host
	t.Cleanup(func() {
		_ = exec.Command(s.script, "stop", s.dir).Run()
		if t.Failed() {
			t.Logf("snac log, but for the suite's client API calls (last 80 lines):\n%s", lastLines(s.federationLog(), 80))
		}
	})
	cmd := exec.Command(s.script, "start", s.dir, fmt.Sprint(s.port))
	// snac answers requests and runs its delivery queue on one pool of
	// threads (CPUs + 2 by default: 4 here). Its deliveries to its own
	// shared inbox take threads on both ends, and Herald fetches a boosted
	// note from snac before it answers snac's Announce: with all four
	// waiting, the fetch found no thread and snac's delivery timed out
	// (queue_timeout, 6 s; retried after 2 minutes). More threads keep the
	// suite within its minute; docs/federation.md names the difference.
	cmd.Env = append(os.Environ(), `SNAC_CONFIG={"num_threads":8}`)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("snacpeer start: %v\n%s", err, out)
	}
	return s
}

// cmd runs a snacpeer command on this server and returns its output.
func (s *snac) cmd(args ...string) string {
	s.t.Helper()
	out, err := s.try(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *snac) try(args ...string) (string, error) {
	out, err := exec.Command(s.script, append(args[:1:1], append([]string{s.dir}, args[1:]...)...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return "", fmt.Errorf("snacpeer %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	return string(out), nil
}

func (s *snac) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "snac.log"))
	return string(b)
}

// federationLog is snac's log without the lines of the suite's polling of
// its client API, which bury the rest.
func (s *snac) federationLog() string {
	var keep []string
	for _, line := range strings.Split(s.log(), "\n") {
		if !strings.Contains(line, "mastoapi_") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func (s *snac) name() string     { return "snac" }
func (s *snac) hostport() string { return s.host }
func (s *snac) use(t *testing.T) { s.t = t }
func (s *snac) lacks(f feature) string {
	if f == textMention {
		// activitypub.c, process_tags: mentions are split out of the text
		// by "(@[A-Za-z0-9_]+(@[A-Za-z0-9\.-]+)?)", a host without a port,
		// and every server here is 127.0.0.1:PORT. It does mention the
		// author a post replies to (a Mention in tag), which the reply and
		// direct scenarios use.
		return "its mention pattern @[A-Za-z0-9_]+(@[A-Za-z0-9\\.-]+) takes no port in the host, and every server here is 127.0.0.1:PORT"
	}
	if f == refollow {
		// Seen in its log: a Follow from an actor it lists as a follower
		// is logged "repeated 'Follow' from ACTOR" and answered with no
		// Accept, so the follow stays pending on Herald.
		return "it answers a Follow from an actor it already lists as a follower with no Accept (logged \"repeated 'Follow' from ACTOR\"), " +
			"and a suspension removes the follow on Herald only"
	}
	return ""
}

// newUser creates an account (snac accepts follows at once) and a client
// for it.
func (s *snac) newUser(name string) user {
	s.t.Helper()
	var acc struct{ Token, Actor, Acct string }
	if err := json.Unmarshal([]byte(s.cmd("account", name)), &acc); err != nil || acc.Token == "" {
		s.t.Fatalf("snacpeer account %s: %v", name, err)
	}
	u := &snacUser{s: s, name: name, token: acc.Token}
	u.masto = masto{t: func() *testing.T { return s.t }, call: u.call, uri: acc.Actor, handle: acc.Acct}
	return u
}

// snacStatus5xx is a 5xx answer snac logged for a request of its own to
// Herald ("sent to inbox … (503 Service Unavailable)" and the like), or
// its 599, a request that timed out (queue_timeout).
var snacStatus5xx = regexp.MustCompile(`\(5\d\d\b`)

// checkLog fails on a signature of Herald's that snac refused (it answers
// 202 and drops the activity, saying so only in its log), a 5xx from
// Herald or a delivery to it that timed out, or a crash.
func (s *snac) checkLog(t *testing.T, h *herald) {
	t.Helper()
	for _, line := range strings.Split(s.log(), "\n") {
		switch {
		case strings.Contains(line, "bad signature") && strings.Contains(line, h.host):
			t.Errorf("snac log: %s", line)
		case strings.Contains(line, h.host) && snacStatus5xx.MatchString(line):
			t.Errorf("snac log: %s", line)
		}
	}
	// It logs nothing when it crashes: its process must still run.
	if pid, err := os.ReadFile(filepath.Join(s.dir, "pid")); err != nil {
		t.Errorf("snac's pid file: %v", err)
	} else if _, err := os.Stat(filepath.Join("/proc", strings.TrimSpace(string(pid)))); err != nil {
		t.Errorf("snac (pid %s) is no longer running", strings.TrimSpace(string(pid)))
	}
}

// snacUser drives one snac account: its Mastodon API (masto), and the
// snacpeer script where that API cannot tell.
type snacUser struct {
	masto
	s     *snac
	name  string
	token string
}

func (u *snacUser) call(method, path string, form url.Values, out any) int {
	u.s.t.Helper()
	req := apiRequest(u.s.t, method, u.s.base+path, u.token, form)
	// snac closes a connection after its answer without saying so: a POST
	// sent on a kept-alive connection was reset (Go retries only
	// idempotent requests).
	req.Close = true
	return do(u.s.t, req, out)
}

// follows reads snac's following list: its API says following:true from
// the moment it sends the Follow, before any Accept.
func (u *snacUser) follows(_, actor string) bool {
	for _, line := range strings.Split(u.s.cmd("following", u.name), "\n") {
		if line == actor+" accepted" {
			return true
		}
	}
	return false
}

func (u *snacUser) followedBy(_, actor string) bool {
	for _, line := range strings.Split(u.s.cmd("followers", u.name), "\n") {
		if line == actor {
			return true
		}
	}
	return false
}

// direct answers the direct note inThread: snac addresses a direct post
// to the accounts it mentions, and it can mention no account on a host
// with a port but the author it replies to.
func (u *snacUser) direct(_, _, text, inThread string) status {
	u.t().Helper()
	id := u.find(inThread)
	if id == "" {
		u.t().Fatalf("snac cannot find the direct note %s", inThread)
	}
	return u.post(text, "direct", id)
}

// unboosted reads snac's log: it takes an Undo{Announce} and keeps the
// boost counted. activitypub.c, process_input_message, Undo of an
// Announce: "commented out: if a followed user boosts something that is
// requested and then unboosts, the post remains here, but with no
// apparent reason, and that is confusing"; it logs "Unboost for OBJECT".
func (u *snacUser) unboosted(st status) bool {
	return u.s.logged("[" + u.name + "] Unboost for " + st.URI + " ")
}

// logged reports whether a line of snac's log holds every fragment.
func (s *snac) logged(fragments ...string) bool {
	for _, line := range strings.Split(s.log(), "\n") {
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

// snacObject is one object of a snac timeline, as `snacpeer timeline`
// prints it.
type snacObject struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	AttributedTo any    `json:"attributedTo"`
	Content      string `json:"content"`
	InReplyTo    string `json:"inReplyTo"`
}

// timeline is the account's timeline as snac stored it.
func (u *snacUser) timeline() []snacObject {
	// snacpeer lists the files, then reads each: one deleted in between
	// (a Delete snac is taking) fails ls (exit status 2, its message
	// discarded) or jq ("Could not open file"), and the timeline is read
	// again.
	out, err := u.s.try("timeline", u.name)
	for i := 0; err != nil && i < 5; i++ {
		time.Sleep(100 * time.Millisecond)
		out, err = u.s.try("timeline", u.name)
	}
	if err != nil {
		u.t().Fatal(err)
	}
	var objs []snacObject
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		var o snacObject
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			u.t().Fatalf("snacpeer timeline: %v in %s", err, clip([]byte(line)))
		}
		objs = append(objs, o)
	}
	return objs
}

// received reports whether snac took the Note id from its inbox for this
// account: "[NAME] new 'Note' ACTOR ID" is logged once the signature
// verified, while a note read from an outbox after a follow is logged
// "(collect_outbox)".
func (u *snacUser) received(id string) bool {
	for _, line := range strings.Split(u.s.log(), "\n") {
		if strings.Contains(line, "["+u.name+"] new 'Note' http") && strings.HasSuffix(line, " "+id) {
			return true
		}
	}
	return false
}

func (u *snacUser) home(text string) *note {
	for _, o := range u.timeline() {
		if o.Type == "Note" && strings.Contains(o.Content, text) && u.received(o.ID) {
			return &note{ID: o.ID, URI: o.ID, Content: o.Content}
		}
	}
	return nil
}

func (u *snacUser) reread(n note) *note {
	for _, o := range u.timeline() {
		if o.ID == n.URI {
			return &note{ID: o.ID, URI: o.ID, Content: o.Content}
		}
	}
	return nil
}

func (u *snacUser) replied(parent status, text string) bool {
	for _, o := range u.timeline() {
		if o.Type == "Note" && strings.Contains(o.Content, text) && o.InReplyTo == parent.URI && u.received(o.ID) {
			return true
		}
	}
	return false
}
