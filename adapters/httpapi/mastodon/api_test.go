package mastodon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldfed/herald/domain"
)

func TestInstance(t *testing.T) {
	t.Parallel()
	s := setup(t)
	v1 := s.do(t, http.MethodGet, "/api/v1/instance", "", nil).object(t)
	if v1["uri"] != "local.example" || v1["registrations"] != true || !strings.HasPrefix(v1["version"].(string), "4.") {
		t.Fatalf("v1 instance %v", v1)
	}
	if stats := v1["stats"].(map[string]any); stats["user_count"] != float64(3) {
		t.Fatalf("user_count %v, want the three personas", stats["user_count"])
	}
	v2 := s.do(t, http.MethodGet, "/api/v2/instance", "", nil).object(t)
	reg := v2["registrations"].(map[string]any)
	if v2["domain"] != "local.example" || reg["enabled"] != true || reg["approval_required"] != false {
		t.Fatalf("v2 instance %v", v2)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/custom_emojis", "", nil); r.status != http.StatusOK || string(r.body) != "[]\n" {
		t.Fatalf("custom emojis %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/instance", "not-a-token", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("an invalid token on a public endpoint: %d", r.status)
	}
}

func TestAccountsAndStatusesActAsTheTokensPersona(t *testing.T) {
	t.Parallel()
	s := setup(t)
	work := s.login(t, "alice", "alice_work", "read write")
	bob := s.login(t, "bob", "bob", "read write")
	readOnly := s.login(t, "alice", "alice_work", "read")

	me := s.do(t, http.MethodGet, "/api/v1/accounts/verify_credentials", work, nil).object(t)
	if me["username"] != "alice_work" || me["acct"] != "alice_work" || me["source"] == nil {
		t.Fatalf("verify_credentials %v", me)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/accounts/lookup?acct=alice_work@local.example", "", nil); r.status != 200 || r.object(t)["id"] != me["id"] {
		t.Fatalf("lookup: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/accounts/lookup?acct=alice_work@other.example", "", nil); r.status != 404 {
		t.Fatalf("lookup of a remote acct: %d %s", r.status, r.body)
	}

	// Scopes: a read token cannot post.
	if r := s.do(t, http.MethodPost, "/api/v1/statuses", readOnly, url.Values{"status": {"hi"}}); r.status != http.StatusForbidden {
		t.Fatalf("post with a read token: %d %s", r.status, r.body)
	}
	post := func(key string) map[string]any {
		t.Helper()
		r := s.doWith(t, http.MethodPost, "/api/v1/statuses", work, `{"status":"hello <b>fediverse</b>","visibility":"public"}`,
			http.Header{"Idempotency-Key": {key}})
		if r.status != http.StatusOK {
			t.Fatalf("post: %d %s", r.status, r.body)
		}
		return r.object(t)
	}
	st := post("k1")
	if again := post("k1"); again["id"] != st["id"] {
		t.Fatalf("the same Idempotency-Key posted twice: %v then %v", st["id"], again["id"])
	}
	if st["visibility"] != "public" || !strings.Contains(st["content"].(string), "hello &lt;b&gt;fediverse&lt;/b&gt;") {
		t.Fatalf("status %v", st)
	}
	if acct := st["account"].(map[string]any); acct["username"] != "alice_work" {
		t.Fatalf("posted as %v, want alice_work", acct["username"])
	}
	id := st["id"].(string)
	if r := s.do(t, http.MethodGet, "/api/v1/statuses/"+id, work, nil); r.status != 200 || r.object(t)["id"] != id {
		t.Fatalf("get own status: %d %s", r.status, r.body)
	}
	// Another persona's token can neither read it as its own nor delete it.
	if r := s.do(t, http.MethodDelete, "/api/v1/statuses/"+id, bob, nil); r.status != http.StatusNotFound {
		t.Fatalf("bob deleting alice_work's status: %d %s", r.status, r.body)
	}
	alice := s.login(t, "alice", "alice", "read write")
	if r := s.do(t, http.MethodDelete, "/api/v1/statuses/"+id, alice, nil); r.status != http.StatusNotFound {
		t.Fatalf("the same account's other persona deleting it: %d %s", r.status, r.body)
	}
	list := s.do(t, http.MethodGet, "/api/v1/accounts/"+me["id"].(string)+"/statuses", "", nil).list(t)
	if len(list) != 1 || list[0]["id"] != id {
		t.Fatalf("account statuses %v", list)
	}
	// Followers-only: its author sees it, the public does not.
	s.postStatus(t, work, url.Values{"status": {"for followers"}, "visibility": {"private"}})
	if n := len(s.do(t, http.MethodGet, "/api/v1/accounts/"+me["id"].(string)+"/statuses", "", nil).list(t)); n != 1 {
		t.Fatalf("the public sees %d statuses, want 1", n)
	}
	if n := len(s.do(t, http.MethodGet, "/api/v1/accounts/"+me["id"].(string)+"/statuses", work, nil).list(t)); n != 2 {
		t.Fatalf("the author sees %d statuses, want 2", n)
	}
	if r := s.do(t, http.MethodPost, "/api/v1/statuses", work, url.Values{"status": {"x"}, "visibility": {"unlisted"}}); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("unlisted: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodDelete, "/api/v1/statuses/"+id, work, nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/statuses/"+id, work, nil); r.status != http.StatusNotFound {
		t.Fatalf("deleted status: %d", r.status)
	}
}

func TestUpdateCredentialsLocks(t *testing.T) {
	t.Parallel()
	s := setup(t)
	tok := s.login(t, "alice", "alice", "read write")
	r := s.do(t, http.MethodPatch, "/api/v1/accounts/update_credentials", tok, url.Values{"locked": {"true"}, "display_name": {"alice"}})
	if r.status != 200 || r.object(t)["locked"] != true {
		t.Fatalf("lock: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodPatch, "/api/v1/accounts/update_credentials", tok, url.Values{"display_name": {"Alice A."}}); r.status != 200 || r.object(t)["locked"] != true {
		t.Fatalf("display name change of a locked persona: %d %s", r.status, r.body)
	}
	read := s.login(t, "alice", "alice", "read")
	if r := s.do(t, http.MethodPatch, "/api/v1/accounts/update_credentials", read, url.Values{"locked": {"false"}}); r.status != http.StatusForbidden {
		t.Fatalf("update with a read token: %d %s", r.status, r.body)
	}
}

// A remote actor gets an account id once, for good, and reads back as
// an account while it is cached.
func TestRemoteAccountIDs(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := t.Context()
	bob := domain.ForeignAvatar{ActorURI: "https://remote.example/users/bob", PublicKeyID: "https://remote.example/users/bob#main-key",
		PreferredUsername: "bob", Host: "remote.example", Inbox: "https://remote.example/users/bob/inbox", FetchedAt: s.clock.Now()}
	if err := s.content.Upsert(ctx, bob); err != nil {
		t.Fatal(err)
	}
	id, err := s.api.Accounts.RemoteID(ctx, bob.ActorURI)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.api.Accounts.RemoteID(ctx, bob.ActorURI); err != nil || again != id {
		t.Fatalf("a second id %q (%v) for bob, first %q", again, err, id)
	}
	acct := s.do(t, http.MethodGet, "/api/v1/accounts/"+id, "", nil).object(t)
	if acct["acct"] != "bob@remote.example" || acct["uri"] != bob.ActorURI || acct["id"] != id {
		t.Fatalf("remote account %v", acct)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/accounts/no-such-id", "", nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown id: %d %s", r.status, r.body)
	}
}
