package mastodon_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// directNote is a remote actor's direct Create of a note to whom.
func directNote(noteURI, actor, whom, text string) string {
	return fmt.Sprintf(`{"id":"%s/activity","type":"Create","actor":%q,"to":[%q],"object":{"id":%q,"type":"Note","attributedTo":%q,
"content":"<p>%s</p>","to":[%q],"tag":[{"type":"Mention","href":%q}],"published":"2026-01-01T00:00:00Z"}}`, noteURI, actor, whom, noteURI, actor, text, whom, whom)
}

// A direct status, local or received, reads by id and in context for its
// participants only: to another persona, an application's token and no
// token it does not exist.
func TestDirectStatusReadByItsParticipantsOnly(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write")
	bob := s.login(t, "bob", "bob", "read")
	work := s.login(t, "alice", "alice_work", "read")
	a := s.registerApp(t, "read")
	appTok := s.do(t, http.MethodPost, "/oauth/token", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {a.id}, "client_secret": {a.secret}}).object(t)["access_token"].(string)

	local := s.postStatus(t, alice, url.Values{"status": {"@bob psst"}, "visibility": {"direct"}})["id"].(string)
	const noteURI = remoteBob + "/statuses/dm"
	s.deliver(t, remoteBob, directNote(noteURI, remoteBob, "https://local.example/users/alice", "hush"))
	convs := s.do(t, http.MethodGet, "/api/v1/conversations", alice, nil).list(t)
	if len(convs) != 2 {
		t.Fatalf("alice's conversations %v", convs)
	}
	remote := convs[0]["last_status"].(map[string]any)["id"].(string)

	for _, c := range []struct {
		name, id, token string
		want            int
	}{
		{"local, its author", local, alice, http.StatusOK},
		{"local, its participant", local, bob, http.StatusOK},
		{"local, another persona", local, work, http.StatusNotFound},
		{"local, an application's token", local, appTok, http.StatusNotFound},
		{"local, no token", local, "", http.StatusNotFound},
		{"remote, its participant", remote, alice, http.StatusOK},
		{"remote, another persona", remote, work, http.StatusNotFound},
		{"remote, a local persona not in it", remote, bob, http.StatusNotFound},
		{"remote, an application's token", remote, appTok, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/statuses/" + c.id, "/api/v1/statuses/" + c.id + "/context"} {
				r := s.do(t, http.MethodGet, path, c.token, nil)
				if r.status != c.want {
					t.Fatalf("%s: %d %s, want %d", path, r.status, r.body, c.want)
				}
				if c.want == http.StatusOK && !strings.HasSuffix(path, "/context") && r.object(t)["visibility"] != "direct" {
					t.Fatalf("%s: %s", path, r.body)
				}
			}
		})
	}
}

// A persona's conversations: its direct threads, newest last status
// first, unread until read (its own posts are read), hidden until the
// thread's next post; paged with a Link header.
func TestConversations(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write")
	bob := s.login(t, "bob", "bob", "read write:conversations")
	work := s.login(t, "alice", "alice_work", "read write")
	readOnly := s.login(t, "alice", "alice", "read")
	const aliceURI = "https://local.example/users/alice"

	local := s.postStatus(t, alice, url.Values{"status": {"@bob psst"}, "visibility": {"direct"}})
	s.deliver(t, remoteBob, directNote(remoteBob+"/statuses/dm1", remoteBob, aliceURI, "hush"))

	l := s.do(t, http.MethodGet, "/api/v1/conversations", alice, nil).list(t)
	if len(l) != 2 {
		t.Fatalf("alice's %v", l)
	}
	remoteConv, localConv := l[0], l[1]
	if remoteConv["unread"] != true || remoteConv["last_status"].(map[string]any)["uri"] != remoteBob+"/statuses/dm1" {
		t.Fatalf("the remote conversation %v", remoteConv)
	}
	if acc := remoteConv["accounts"].([]any); len(acc) != 1 || !strings.Contains(acc[0].(map[string]any)["acct"].(string), "remote.example") {
		t.Fatalf("the remote conversation's accounts %v", acc)
	}
	if localConv["unread"] != false || localConv["last_status"].(map[string]any)["id"] != local["id"] {
		t.Fatalf("alice's own conversation %v", localConv)
	}
	if acc := localConv["accounts"].([]any); len(acc) != 1 || acc[0].(map[string]any)["acct"] != "bob" {
		t.Fatalf("the local conversation's accounts %v", acc)
	}

	// Bob has the local one, unread; alice_work has none.
	bl := s.do(t, http.MethodGet, "/api/v1/conversations", bob, nil).list(t)
	if len(bl) != 1 || bl[0]["unread"] != true || bl[0]["id"] != localConv["id"] {
		t.Fatalf("bob's %v", bl)
	}
	if wl := s.do(t, http.MethodGet, "/api/v1/conversations", work, nil).list(t); len(wl) != 0 {
		t.Fatalf("alice_work's %v", wl)
	}

	// Paging: one a page, the next by the Link header.
	r := s.do(t, http.MethodGet, "/api/v1/conversations?limit=1", alice, nil)
	if p := r.list(t); len(p) != 1 || p[0]["id"] != remoteConv["id"] {
		t.Fatalf("first page %s", r.body)
	}
	m := nextLink.FindStringSubmatch(r.header.Get("Link"))
	if m == nil {
		t.Fatalf("no next link: %q", r.header.Get("Link"))
	}
	next, _ := url.Parse(m[1])
	if p := s.do(t, http.MethodGet, next.RequestURI(), alice, nil).list(t); len(p) != 1 || p[0]["id"] != localConv["id"] {
		t.Fatalf("second page %v", p)
	}

	for _, c := range []struct {
		name, method, path, token string
		want                      int
	}{
		{"read needs write:conversations", http.MethodPost, "/api/v1/conversations/" + localConv["id"].(string) + "/read", readOnly, http.StatusForbidden},
		{"another persona's read", http.MethodPost, "/api/v1/conversations/" + localConv["id"].(string) + "/read", work, http.StatusNotFound},
		{"another persona's delete", http.MethodDelete, "/api/v1/conversations/" + localConv["id"].(string), work, http.StatusNotFound},
		{"an unknown one", http.MethodPost, "/api/v1/conversations/nope/read", bob, http.StatusNotFound},
		{"no token", http.MethodGet, "/api/v1/conversations", "", http.StatusUnauthorized},
	} {
		if r := s.do(t, c.method, c.path, c.token, nil); r.status != c.want {
			t.Fatalf("%s: %d %s, want %d", c.name, r.status, r.body, c.want)
		}
	}

	// Bob reads his.
	r = s.do(t, http.MethodPost, "/api/v1/conversations/"+localConv["id"].(string)+"/read", bob, nil)
	if r.status != http.StatusOK || r.object(t)["unread"] != false {
		t.Fatalf("read: %d %s", r.status, r.body)
	}
	if bl := s.do(t, http.MethodGet, "/api/v1/conversations", bob, nil).list(t); bl[0]["unread"] != false {
		t.Fatalf("bob's after read %v", bl)
	}

	// Alice hides the remote one; its next post shows it again, unread.
	if r := s.do(t, http.MethodDelete, "/api/v1/conversations/"+remoteConv["id"].(string), alice, nil); r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if l := s.do(t, http.MethodGet, "/api/v1/conversations", alice, nil).list(t); len(l) != 1 || l[0]["id"] != localConv["id"] {
		t.Fatalf("after delete %v", l)
	}
	s.deliver(t, remoteBob, directNote(remoteBob+"/statuses/dm2", remoteBob, aliceURI, "again"))
	l = s.do(t, http.MethodGet, "/api/v1/conversations", alice, nil).list(t)
	if len(l) != 2 || l[0]["id"] != remoteConv["id"] || l[0]["unread"] != true || l[0]["last_status"].(map[string]any)["uri"] != remoteBob+"/statuses/dm2" {
		t.Fatalf("after the next post %v", l)
	}
}
