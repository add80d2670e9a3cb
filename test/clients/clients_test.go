package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/test/heraldtest"
)

// TestMegalodon registers an app with megalodon, signs in through the
// authorization page as a browser would (choosing the persona alice_work
// of the account alice), and posts, reads, looks up, deletes and revokes
// with the library's own calls. Before it runs, a remote actor (a fake
// server on loopback, its activity signed) mentions alice_work: the
// harness reads that notification, by list and by id, and dismisses it.
func TestMegalodon(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("UNVERIFIED: node is not installed, so no client library drives the Mastodon API here (install Node 20 and npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("UNVERIFIED: npm is not installed, so megalodon cannot be installed (install Node 20 and npm)")
	}
	dir, err := filepath.Abs("harness")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "megalodon")); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}

	// Loopback is where the remote actor lives: Herald may fetch it.
	h := heraldtest.Start(t, "herald", map[string]string{"HERALD_STORE": "memory", "HERALD_ALLOW_PRIVATE_TARGETS": "true"})
	signUp := func(body, path string, token string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, h.Base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, m)
		}
		tok, _ := m["token"].(string)
		return tok
	}
	session := signUp(`{"username":"alice","password":"correct horse battery"}`, "/api/v1/accounts", "")
	signUp(`{"name":"alice_work"}`, "/api/v1/personas", session)
	bob := newActorServer(t, "bob")
	const mentionText = "hello from the fediverse"
	bob.mention(h.Base+"/users/alice_work", "alice_work@"+h.Addr, mentionText)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "harness.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HERALD_URL="+h.Base, "HERALD_USER=alice", "HERALD_PASSWORD=correct horse battery", "HERALD_PERSONA=alice_work",
		"HERALD_MENTIONED_BY="+bob.uri, "HERALD_MENTION_TEXT="+mentionText)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("megalodon saw: %s", strings.TrimSpace(stdout.String()))
	if err != nil {
		t.Fatalf("the megalodon harness failed: %v\n%s", err, stderr.String())
	}
	var seen map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &seen); err != nil || seen["ok"] != true {
		t.Fatalf("the harness did not finish: %s %v", stdout.String(), err)
	}
}
