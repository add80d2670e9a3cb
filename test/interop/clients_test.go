package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientsUnverified is what TestMegalodonGoToSocial proves, named when it
// cannot run.
const clientsUnverified = "a client library no one here wrote (megalodon) driving Herald's Mastodon API against a real GoToSocial " +
	"(authorization-code flow, search and follow, home timeline, favourite and reblog, a post with a content warning and a poll, " +
	"a reply notified) stays unverified"

// TestMegalodonGoToSocial drives Herald's Mastodon-compatible client API
// with megalodon (test/clients/harness/gotosocial.mjs, run by Node, one
// step at a time) beside a real GoToSocial, whose account this test drives
// through GoToSocial's own Mastodon API between the steps: megalodon signs
// in through the authorization-code flow, finds the GoToSocial account by
// search and follows it (GoToSocial accepts); reads the account's post in
// the home timeline, favourites and reblogs it (GoToSocial notifies both);
// posts with a content warning and a poll (GoToSocial shows both); and
// reads the account's reply as a mention notification. Once per store, one
// GoToSocial for all.
func TestMegalodonGoToSocial(t *testing.T) {
	peer := requireDir(t, peerDir(), "no GoToSocial binary and gts script (set HERALD_GOTOSOCIAL to their directory)", clientsUnverified)
	mg := requireMegalodon(t)
	g := startGTS(t, peer)
	eachStore(t, func(t *testing.T, store string, h *herald) {
		g.t = t
		megalodonScenario(t, store, g, h, mg)
	})
}

// megalodon runs the Node harness's steps.
type megalodon struct{ node, dir string }

// requireMegalodon finds node and installs the harness's packages (npm ci)
// when they are not there yet; it skips, saying why, without node or npm.
func requireMegalodon(t *testing.T) megalodon {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (install Node 20 and npm): " + clientsUnverified)
	}
	dir, err := filepath.Abs("../clients/harness")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "megalodon")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm is not installed, so megalodon cannot be installed (install Node 20 and npm): " + clientsUnverified)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	return megalodon{node: node, dir: dir}
}

// run runs one step of gotosocial.mjs with env and returns what it saw.
func (mg megalodon) run(t *testing.T, step string, env map[string]string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mg.node, "gotosocial.mjs")
	cmd.Dir = mg.dir
	cmd.Env = append(os.Environ(), "HERALD_STEP="+step)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var seen map[string]any
	jsonErr := json.Unmarshal(stdout.Bytes(), &seen)
	if tok, ok := seen["token"].(string); ok {
		// The token stays out of the test's log.
		t.Logf("megalodon %s saw: %s", step, strings.ReplaceAll(strings.TrimSpace(stdout.String()), tok, "(token)"))
	} else {
		t.Logf("megalodon %s saw: %s", step, strings.TrimSpace(stdout.String()))
	}
	if err != nil {
		t.Fatalf("megalodon step %s failed: %v\n%s", step, err, stderr.String())
	}
	if jsonErr != nil || seen["ok"] != true {
		t.Fatalf("megalodon step %s did not finish: %v", step, jsonErr)
	}
	return seen
}

func megalodonScenario(t *testing.T, store string, g *gts, h *herald, mg megalodon) {
	gus := g.account(store + "_gus")
	session := h.signUp("mia")
	if s := h.api("POST", "/api/v1/personas", session, map[string]string{"name": "mia_work"}, nil); s != 201 {
		t.Fatalf("create the persona mia_work: %d", s)
	}
	persona := "mia_work@" + h.host
	env := map[string]string{"HERALD_URL": h.base, "HERALD_REMOTE_ACCT": gus.name + "@" + g.host, "HERALD_REMOTE_BASE": g.base}
	step := func(name string, f func(t *testing.T)) {
		t.Helper()
		if !t.Run(name, func(t *testing.T) { g.t, h.t = t, t; f(t) }) {
			t.FailNow()
		}
		g.t, h.t = t, t
	}
	// needs skips the rest when this Herald does not serve a route yet.
	needs := func(t *testing.T, path, what string) {
		t.Helper()
		if s := h.api("GET", path, env["HERALD_TOKEN"], nil, nil); s == 404 {
			t.Skipf("Herald does not serve %s yet (404): %s stays unverified", path, what)
		}
	}

	step("megalodon signs in by the code flow and follows a GoToSocial account found by search", func(t *testing.T) {
		seen := mg.run(t, "follow", merge(env, map[string]string{"HERALD_USER": "mia", "HERALD_PASSWORD": "interop horse battery", "HERALD_PERSONA": "mia_work"}))
		env["HERALD_TOKEN"], _ = seen["token"].(string)
		eventually(t, "GoToSocial to show mia_work following "+gus.name, func() bool {
			id := gus.resolveAccount(persona)
			return id != "" && gus.relationship(id).FollowedBy
		})
	})

	step("megalodon reads the GoToSocial post in home, favourites and reblogs it", func(t *testing.T) {
		needs(t, "/api/v1/timelines/home", "reading the home timeline, favouriting and reblogging a GoToSocial post")
		text := "gus on " + store + " writes to his followers"
		gus.post(url.Values{"status": {text}, "visibility": {"public"}})
		mg.run(t, "react", merge(env, map[string]string{"HERALD_TEXT": text}))
		eventually(t, "GoToSocial to notify gus of mia_work's favourite and reblog", func() bool {
			kinds := map[string]bool{}
			for _, n := range gus.notifications() {
				if n.Account.Acct == persona && n.Status != nil && strings.Contains(n.Status.Content, text) {
					kinds[n.Type] = true
				}
			}
			return kinds["favourite"] && kinds["reblog"]
		})
	})

	var posted map[string]any
	step("megalodon posts with a content warning and a poll, GoToSocial shows both", func(t *testing.T) {
		needs(t, "/api/v1/timelines/home", "posting with a content warning and a poll")
		posted = mg.run(t, "post", merge(env, map[string]string{"HERALD_TEXT": "mia on " + store + " asks", "HERALD_SPOILER": "a question"}))
		uri, _ := posted["uri"].(string)
		var res struct {
			Statuses []gtsRich `json:"statuses"`
		}
		q := url.Values{"q": {uri}, "resolve": {"true"}, "type": {"statuses"}}
		if s := gus.call("GET", "/api/v2/search?"+q.Encode(), nil, &res); s != 200 || len(res.Statuses) != 1 {
			t.Fatalf("GoToSocial's search for %s: %d %+v", uri, s, res)
		}
		st := res.Statuses[0]
		if st.SpoilerText != "a question" || st.Poll == nil || len(st.Poll.Options) != 2 || st.Poll.Options[0].Title != "yes" || st.Poll.Options[1].Title != "no" {
			t.Fatalf("GoToSocial shows mia_work's post as %+v, want the content warning \"a question\" and the poll yes/no", st)
		}
		posted["gts_id"] = st.ID
	})

	step("GoToSocial's reply reaches megalodon as a notification", func(t *testing.T) {
		needs(t, "/api/v1/notifications", "seeing a GoToSocial reply arrive as a notification")
		if posted == nil {
			t.Skip("no post to reply to (the step before was skipped): seeing a GoToSocial reply arrive as a notification stays unverified")
		}
		text := "gus on " + store + " answers yes"
		gtsID, _ := posted["gts_id"].(string)
		gus.post(url.Values{"status": {"@" + persona + " " + text}, "visibility": {"public"}, "in_reply_to_id": {gtsID}})
		status, _ := posted["status"].(string)
		mg.run(t, "notified", merge(env, map[string]string{"HERALD_TEXT": text, "HERALD_STATUS": status}))
	})

	step("no 5xx or panic in Herald's log", func(t *testing.T) { checkHeraldLog(t, h) })
}

// merge is a with b's entries added.
func merge(a, b map[string]string) map[string]string {
	m := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}
