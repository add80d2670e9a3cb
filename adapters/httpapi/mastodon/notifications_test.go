package mastodon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

const (
	remoteBob   = "https://remote.example/users/bob"
	remoteCarol = "https://remote.example/users/carol"
)

// deliver hands the inbox an activity as the ActivityPub adapter does
// once the actor's signature is verified: the actor cached, then the
// activity handled.
func (s *server) deliver(t *testing.T, actor, activity string) {
	t.Helper()
	ctx := context.Background()
	fa := domain.ForeignAvatar{ActorURI: actor, Inbox: actor + "/inbox", Host: "remote.example",
		PreferredUsername: actor[strings.LastIndex(actor, "/")+1:], FetchedAt: s.clock.Now()}
	if err := s.content.Upsert(ctx, fa); err != nil {
		t.Fatal(err)
	}
	act, err := application.DecodeActivity([]byte(activity))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.fed.Inbox.Handle(ctx, application.InboxRequest{Signer: fa, Activity: act}); err != nil {
		t.Fatalf("inbox: %v", err)
	}
}

func mentioning(id, actor, whom string) string {
	return fmt.Sprintf(`{"id":"%s/activity","type":"Create","actor":%q,"to":[%q],"cc":[%q],"object":{"id":%q,"type":"Note","attributedTo":%q,
"content":"<p>@alice hello</p>","to":[%q],"cc":[%q],"tag":[{"type":"Mention","href":%q}],"published":"2026-01-01T00:00:00Z"}}`,
		id, actor, application.ASPublic, whom, id, actor, application.ASPublic, whom, whom)
}

var nextLink = regexp.MustCompile(`<([^>]+)>; rel="next"`)

func types(l []map[string]any) string {
	var out []string
	for _, n := range l {
		out = append(out, fmt.Sprint(n["type"]))
	}
	return strings.Join(out, ",")
}

func TestNotificationsOfThePersona(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write follow")
	work := s.login(t, "alice", "alice_work", "read write")
	status := s.postStatus(t, alice, url.Values{"status": {"hello"}})
	const aliceURI = "https://local.example/users/alice"
	const noteURI = remoteBob + "/statuses/1"
	s.deliver(t, remoteBob, mentioning(noteURI, remoteBob, aliceURI))
	s.deliver(t, remoteBob, `{"id":"https://remote.example/f/1","type":"Follow","actor":"`+remoteBob+`","object":"`+aliceURI+`"}`)
	s.deliver(t, remoteCarol, `{"id":"https://remote.example/l/1","type":"Like","actor":"`+remoteCarol+`","object":"`+status["uri"].(string)+`"}`)

	r := s.do(t, http.MethodGet, "/api/v1/notifications", alice, nil)
	if r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	all := r.list(t)
	if types(all) != "favourite,follow,mention" {
		t.Fatalf("notifications %s", r.body)
	}
	fav, fol, men := all[0], all[1], all[2]
	if fav["status"].(map[string]any)["id"] != status["id"] || fav["account"].(map[string]any)["acct"] != "carol@remote.example" {
		t.Fatalf("favourite %v", fav)
	}
	if _, ok := fol["status"]; ok || fol["account"].(map[string]any)["acct"] != "bob@remote.example" {
		t.Fatalf("follow %v", fol)
	}
	ms := men["status"].(map[string]any)
	if ms["uri"] != noteURI || ms["account"].(map[string]any)["acct"] != "bob@remote.example" || men["group_key"] != "ungrouped-"+men["id"].(string) {
		t.Fatalf("mention %v", men)
	}
	bobID := fol["account"].(map[string]any)["id"].(string)

	for _, tt := range []struct{ query, want string }{
		{"types[]=mention", "mention"},
		{"types[]=mention&types[]=favourite", "favourite,mention"},
		{"exclude_types[]=mention&exclude_types[]=follow", "favourite"},
		{"types[]=status", ""}, // Mastodon's, never recorded here
		{"exclude_types[]=admin.sign_up", "favourite,follow,mention"},
		{"account_id=" + bobID, "follow,mention"},
		{"account_id=unknown", ""},
		{"since_id=" + men["id"].(string), "favourite,follow"},
		{"min_id=" + men["id"].(string) + "&limit=1", "follow"},
		{"max_id=" + fol["id"].(string), "mention"},
	} {
		r := s.do(t, http.MethodGet, "/api/v1/notifications?"+tt.query, alice, nil)
		if r.status != http.StatusOK || types(r.list(t)) != tt.want {
			t.Errorf("%s: %d %s, want %s", tt.query, r.status, r.body, tt.want)
		}
	}

	// Paging by the Link header, one at a time, keeps the filters.
	var seen []string
	next := "/api/v1/notifications?limit=1&exclude_types[]=follow"
	for range 5 {
		r := s.do(t, http.MethodGet, next, alice, nil)
		l := r.list(t)
		if len(l) == 0 {
			break
		}
		seen = append(seen, types(l))
		m := nextLink.FindStringSubmatch(r.header.Get("Link"))
		if m == nil || !strings.Contains(r.header.Get("Link"), `rel="prev"`) {
			t.Fatalf("Link %q", r.header.Get("Link"))
		}
		next = strings.TrimPrefix(m[1], "https://local.example")
	}
	if strings.Join(seen, " ") != "favourite mention" {
		t.Fatalf("pages %v", seen)
	}

	// One, and only the persona's own.
	path := "/api/v1/notifications/" + men["id"].(string)
	if r := s.do(t, http.MethodGet, path, alice, nil); r.status != http.StatusOK || r.object(t)["type"] != "mention" {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, path, work, nil); r.status != http.StatusNotFound {
		t.Fatalf("another persona's: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodPost, path+"/dismiss", work, nil); r.status != http.StatusNotFound {
		t.Fatalf("another persona dismisses: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/notifications", work, nil); r.status != http.StatusOK || len(r.list(t)) != 0 {
		t.Fatalf("alice_work's: %d %s", r.status, r.body)
	}

	// Scopes.
	statusesOnly := s.login(t, "alice", "alice", "read:statuses")
	readNotes := s.login(t, "alice", "alice", "read:notifications")
	for _, tt := range []struct {
		method, path, token string
		want                int
	}{
		{http.MethodGet, "/api/v1/notifications", statusesOnly, http.StatusForbidden},
		{http.MethodGet, path, statusesOnly, http.StatusForbidden},
		{http.MethodGet, "/api/v1/notifications", readNotes, http.StatusOK},
		{http.MethodPost, path + "/dismiss", readNotes, http.StatusForbidden},
		{http.MethodPost, "/api/v1/notifications/clear", readNotes, http.StatusForbidden},
		{http.MethodGet, "/api/v1/notifications", "", http.StatusUnauthorized},
		{http.MethodGet, "/api/v1/notifications?limit=x", alice, http.StatusUnprocessableEntity},
	} {
		if r := s.do(t, tt.method, tt.path, tt.token, nil); r.status != tt.want {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.want)
		}
	}

	// Dismiss one, then clear the rest.
	if r := s.do(t, http.MethodPost, path+"/dismiss", alice, nil); r.status != http.StatusOK || string(r.body) != "{}\n" {
		t.Fatalf("dismiss: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, path, alice, nil); r.status != http.StatusNotFound {
		t.Fatalf("dismissed: %d %s", r.status, r.body)
	}
	if got := types(s.do(t, http.MethodGet, "/api/v1/notifications", alice, nil).list(t)); got != "favourite,follow" {
		t.Fatalf("after dismiss: %s", got)
	}
	if r := s.do(t, http.MethodPost, "/api/v1/notifications/clear", alice, nil); r.status != http.StatusOK {
		t.Fatalf("clear: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/notifications", alice, nil); len(r.list(t)) != 0 || r.header.Get("Link") != "" {
		t.Fatalf("after clear: %s (Link %q)", r.body, r.header.Get("Link"))
	}
}

// A notification whose post is gone is left out of the list (and not
// found by id).
func TestNotificationOfADeletedPostIsGone(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read")
	const noteURI = remoteBob + "/statuses/2"
	s.deliver(t, remoteBob, mentioning(noteURI, remoteBob, "https://local.example/users/alice"))
	l := s.do(t, http.MethodGet, "/api/v1/notifications", alice, nil).list(t)
	if len(l) != 1 {
		t.Fatalf("before the delete: %v", l)
	}
	s.deliver(t, remoteBob, `{"id":"`+noteURI+`#delete","type":"Delete","actor":"`+remoteBob+`","object":"`+noteURI+`"}`)
	if r := s.do(t, http.MethodGet, "/api/v1/notifications", alice, nil); r.status != http.StatusOK || len(r.list(t)) != 0 {
		t.Fatalf("after the delete: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/notifications/"+l[0]["id"].(string), alice, nil); r.status != http.StatusNotFound {
		t.Fatalf("by id after the delete: %d %s", r.status, r.body)
	}
}

// A direct note to the persona is a mention whose status is direct.
func TestNotificationOfADirectNote(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read")
	const aliceURI = "https://local.example/users/alice"
	const noteURI = remoteBob + "/statuses/dm"
	s.deliver(t, remoteBob, directNote(noteURI, remoteBob, aliceURI, "psst"))
	l := s.do(t, http.MethodGet, "/api/v1/notifications", alice, nil).list(t)
	if len(l) != 1 || l[0]["type"] != "mention" {
		t.Fatalf("notifications %v", l)
	}
	st := l[0]["status"].(map[string]any)
	if st["visibility"] != "direct" || st["uri"] != noteURI || !strings.Contains(st["content"].(string), "psst") {
		t.Fatalf("the direct status %v", st)
	}
	// Another persona is no participant: it has no notification.
	work := s.login(t, "alice", "alice_work", "read")
	if l := s.do(t, http.MethodGet, "/api/v1/notifications", work, nil).list(t); len(l) != 0 {
		t.Fatalf("alice_work's %v", l)
	}
}
