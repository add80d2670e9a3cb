package mastodon_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// accountID is the account id of a local persona.
func (s *server) accountID(t *testing.T, name string) string {
	t.Helper()
	r := s.do(t, http.MethodGet, "/api/v1/accounts/lookup?acct="+name, "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("lookup %s: %d %s", name, r.status, r.body)
	}
	return r.object(t)["id"].(string)
}

// relation runs one action of the graph and returns the relationship it
// answered.
func (s *server) relation(t *testing.T, token, id, action string) map[string]any {
	t.Helper()
	return s.relationAt(t, token, "/api/v1/accounts/"+id+"/"+action, id)
}

// answer authorizes or rejects the follow request of account id.
func (s *server) answer(t *testing.T, token, id, verb string) map[string]any {
	t.Helper()
	return s.relationAt(t, token, "/api/v1/follow_requests/"+id+"/"+verb, id)
}

func (s *server) relationAt(t *testing.T, token, path, id string) map[string]any {
	t.Helper()
	r := s.do(t, http.MethodPost, path, token, url.Values{})
	if r.status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, r.status, r.body)
	}
	rel := r.object(t)
	if rel["id"] != id {
		t.Fatalf("POST %s answered the relationship of %v, want %s", path, rel["id"], id)
	}
	return rel
}

// relationshipOf reads GET /api/v1/accounts/relationships for one id.
func (s *server) relationshipOf(t *testing.T, token, id string) map[string]any {
	t.Helper()
	r := s.do(t, http.MethodGet, "/api/v1/accounts/relationships?id[]="+id+"&id[]=no-such-account", token, nil)
	l := r.list(t)
	if r.status != http.StatusOK || len(l) != 1 || l[0]["id"] != id {
		t.Fatalf("relationships of %s: %d %s", id, r.status, r.body)
	}
	return l[0]
}

// listsOnly checks that the account list at path, read with token, is
// the account id alone.
func (s *server) listsOnly(t *testing.T, token, path, id string) {
	t.Helper()
	if l := s.do(t, http.MethodGet, path, token, nil).list(t); len(l) != 1 || l[0]["id"] != id {
		t.Fatalf("%s: %v, want %s alone", path, l, id)
	}
}

// holds reports whether every key of want has that value in rel.
func holds(rel map[string]any, want map[string]bool) bool {
	for k, v := range want {
		if rel[k] != v {
			return false
		}
	}
	return true
}

// queued returns the activities queued to inbox, by type.
func (s *server) queued(t *testing.T, inbox string) map[string]int {
	t.Helper()
	js, err := s.jobs.List(t.Context(), ports.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, j := range js {
		var act struct{ Type string }
		if j.Inbox == inbox && json.Unmarshal(j.Payload, &act) == nil {
			out[act.Type]++
		}
	}
	return out
}

// The token's persona follows, unfollows, blocks and mutes a remote
// account found by search (served by an httptest server); each answer is
// the relationship, and what goes out is queued to the remote's inbox.
func TestGraphOfARemoteAccount(t *testing.T) {
	t.Parallel()
	rm := newFakeRemote(t, "gus")
	s := setup(t, withFetcher(newHTTPFetcher(true)))
	tok := s.login(t, "alice", "alice", "read write follow")
	_, accounts, _, _ := s.searchOf(t, tok, url.Values{"q": {rm.acct()}, "resolve": {"true"}})
	if len(accounts) != 1 {
		t.Fatalf("search found %v", accounts)
	}
	gus, alice := accounts[0]["id"].(string), s.accountID(t, "alice")
	aliceURI, inbox := "https://local.example/users/alice", rm.actorURI()+"/inbox"

	steps := []struct {
		name   string
		action string
		want   map[string]bool
		queued map[string]int // the activities queued to gus so far
	}{
		{"follow: requested until gus accepts", "follow", map[string]bool{"requested": true, "following": false, "showing_reblogs": true}, map[string]int{"Follow": 1}},
		{"follow again sends nothing new", "follow", map[string]bool{"requested": true}, map[string]int{"Follow": 1}},
		{"unfollow withdraws the request", "unfollow", map[string]bool{"requested": false, "following": false}, map[string]int{"Follow": 1, "Undo": 1}},
		{"unfollow again changes nothing", "unfollow", map[string]bool{"requested": false}, map[string]int{"Follow": 1, "Undo": 1}},
		{"block", "block", map[string]bool{"blocking": true}, map[string]int{"Follow": 1, "Undo": 1, "Block": 1}},
		{"unblock", "unblock", map[string]bool{"blocking": false}, map[string]int{"Follow": 1, "Undo": 2, "Block": 1}},
		{"unblock again changes nothing", "unblock", map[string]bool{"blocking": false}, map[string]int{"Follow": 1, "Undo": 2, "Block": 1}},
		{"mute sends nothing", "mute", map[string]bool{"muting": true, "muting_notifications": true}, map[string]int{"Follow": 1, "Undo": 2, "Block": 1}},
		{"unmute", "unmute", map[string]bool{"muting": false}, map[string]int{"Follow": 1, "Undo": 2, "Block": 1}},
	}
	for _, st := range steps {
		rel := s.relation(t, tok, gus, st.action)
		if !holds(rel, st.want) {
			t.Fatalf("%s: %v, want %v", st.name, rel, st.want)
		}
		if again := s.relationshipOf(t, tok, gus); !holds(again, st.want) {
			t.Fatalf("%s: relationships read %v, want %v", st.name, again, st.want)
		}
		if got := s.queued(t, inbox); fmt.Sprint(got) != fmt.Sprint(st.queued) {
			t.Fatalf("%s: queued %v, want %v", st.name, got, st.queued)
		}
	}

	// gus accepts a new follow: alice follows it, and each lists the other.
	s.relation(t, tok, gus, "follow")
	if err := s.follows.SetState(t.Context(), aliceURI, rm.actorURI(), domain.FollowAccepted, s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if rel := s.relationshipOf(t, tok, gus); !holds(rel, map[string]bool{"following": true, "requested": false}) {
		t.Fatalf("after the Accept: %v", rel)
	}
	s.listsOnly(t, "", "/api/v1/accounts/"+alice+"/following", gus)
	s.listsOnly(t, "", "/api/v1/accounts/"+gus+"/followers", alice)

	// gus blocks alice: blocked_by.
	b, err := domain.NewActorBlock(rm.actorURI(), aliceURI, domain.BlockKindBlock, rm.srv.URL+"/blocks/1", s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.blocks.AddBlock(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if rel := s.relationshipOf(t, tok, gus); rel["blocked_by"] != true {
		t.Fatalf("blocked by gus: %v", rel)
	}

	// The lists of blocks and mutes; Herald's own API keeps ?as=.
	s.relation(t, tok, gus, "block")
	s.relation(t, tok, gus, "mute")
	for _, path := range []string{"/api/v1/blocks", "/api/v1/mutes"} {
		s.listsOnly(t, tok, path, gus)
		if r := s.do(t, http.MethodGet, path+"?as=alice", tok, nil); r.status != http.StatusUnauthorized {
			t.Fatalf("%s?as= is Herald's own API, which takes no OAuth token: %d %s", path, r.status, r.body)
		}
	}
	if r := s.do(t, http.MethodPost, "/api/v1/accounts/"+gus+"/mute", tok, url.Values{"duration": {"3600"}}); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a mute with a duration: %d %s", r.status, r.body)
	}
}

// Local personas follow each other at once; a locked one's requests wait
// in follow_requests until it authorizes or rejects them.
func TestGraphOfLocalAccountsAndFollowRequests(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write follow")
	work := s.login(t, "alice", "alice_work", "read write follow")
	bob := s.login(t, "bob", "bob", "read write follow")
	aliceID, workID, bobID := s.accountID(t, "alice"), s.accountID(t, "alice_work"), s.accountID(t, "bob")

	if rel := s.relation(t, alice, bobID, "follow"); !holds(rel, map[string]bool{"following": true, "requested": false}) {
		t.Fatalf("alice follows bob: %v", rel)
	}
	if rel := s.relationshipOf(t, bob, aliceID); !holds(rel, map[string]bool{"followed_by": true, "following": false}) {
		t.Fatalf("bob's side: %v", rel)
	}
	s.listsOnly(t, "", "/api/v1/accounts/"+bobID+"/followers", aliceID)
	s.listsOnly(t, "", "/api/v1/accounts/"+aliceID+"/following", bobID)
	// The other persona of the same account is another account.
	if rel := s.relationshipOf(t, work, bobID); rel["following"] != false {
		t.Fatalf("alice_work does not follow bob: %v", rel)
	}

	if r := s.do(t, http.MethodPatch, "/api/v1/accounts/update_credentials", bob, url.Values{"locked": {"true"}}); r.status != 200 {
		t.Fatalf("lock: %d %s", r.status, r.body)
	}
	if rel := s.relation(t, work, bobID, "follow"); !holds(rel, map[string]bool{"requested": true, "following": false}) {
		t.Fatalf("a follow of a locked persona: %v", rel)
	}
	if l := s.do(t, http.MethodGet, "/api/v1/accounts/"+bobID+"/followers", "", nil).list(t); len(l) != 1 {
		t.Fatalf("a request is not a follower yet: %v", l)
	}
	requests := s.do(t, http.MethodGet, "/api/v1/follow_requests", bob, nil).list(t)
	if len(requests) != 1 || requests[0]["id"] != workID {
		t.Fatalf("bob's follow requests: %v", requests)
	}
	if rel := s.answer(t, bob, workID, "authorize"); !holds(rel, map[string]bool{"followed_by": true, "requested_by": false}) {
		t.Fatalf("authorized: %v", rel)
	}
	if rel := s.relationshipOf(t, work, bobID); rel["following"] != true {
		t.Fatalf("alice_work after the authorization: %v", rel)
	}

	// A request rejected goes.
	s.relation(t, alice, bobID, "unfollow")
	if rel := s.relation(t, alice, bobID, "follow"); rel["requested"] != true {
		t.Fatalf("alice asks again: %v", rel)
	}
	if rel := s.answer(t, bob, aliceID, "reject"); !holds(rel, map[string]bool{"followed_by": false, "requested_by": false}) {
		t.Fatalf("rejected: %v", rel)
	}
	if rel := s.relationshipOf(t, alice, bobID); !holds(rel, map[string]bool{"following": false, "requested": false}) {
		t.Fatalf("alice after the rejection: %v", rel)
	}

	cases := []struct {
		name, token, method, path string
		status                    int
	}{
		{"authorize what is not asked", bob, "POST", "/api/v1/follow_requests/" + aliceID + "/authorize", 404},
		{"follow oneself", alice, "POST", "/api/v1/accounts/" + aliceID + "/follow", 403},
		{"follow no one", alice, "POST", "/api/v1/accounts/no-such-account/follow", 404},
		{"block a local persona", alice, "POST", "/api/v1/accounts/" + bobID + "/block", 422},
		{"followers of no one", "", "GET", "/api/v1/accounts/no-such-account/followers", 404},
		{"too many relationships", alice, "GET", "/api/v1/accounts/relationships?" + manyIDs(81), 422},
	}
	for _, c := range cases {
		if r := s.do(t, c.method, c.path, c.token, nil); r.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, r.status, r.body, c.status)
		}
	}
}

func manyIDs(n int) string {
	v := url.Values{}
	for i := range n {
		v.Add("id[]", fmt.Sprint("id-", i))
	}
	return v.Encode()
}

// Each endpoint needs its scope: follow grants the follows', blocks' and
// mutes' scopes; read and write only their own halves.
func TestGraphScopes(t *testing.T) {
	t.Parallel()
	s := setup(t)
	bobID := s.accountID(t, "bob")
	cases := []struct {
		scope, method, path string
		status              int
	}{
		{"read", "POST", "/api/v1/accounts/" + bobID + "/follow", 403},
		{"write:follows", "POST", "/api/v1/accounts/" + bobID + "/follow", 200},
		{"follow", "POST", "/api/v1/accounts/" + bobID + "/unfollow", 200},
		{"write:blocks", "POST", "/api/v1/accounts/" + bobID + "/mute", 403},
		{"write:mutes", "POST", "/api/v1/accounts/" + bobID + "/mute", 200},
		{"write:follows", "POST", "/api/v1/accounts/" + bobID + "/unblock", 403},
		{"read:follows", "GET", "/api/v1/blocks", 403},
		{"read:blocks", "GET", "/api/v1/blocks", 200},
		{"read:mutes", "GET", "/api/v1/mutes", 200},
		{"read:blocks", "GET", "/api/v1/accounts/relationships?id[]=" + bobID, 403},
		{"read:follows", "GET", "/api/v1/accounts/relationships?id[]=" + bobID, 200},
		{"read:follows", "GET", "/api/v1/follow_requests", 200},
		{"write", "GET", "/api/v1/follow_requests", 403},
		{"", "GET", "/api/v1/follow_requests", 401},
	}
	for _, c := range cases {
		tok := ""
		if c.scope != "" {
			tok = s.login(t, "alice", "alice", c.scope)
		}
		if r := s.do(t, c.method, c.path, tok, url.Values{}); r.status != c.status {
			t.Errorf("%s with %q: %d %s, want %d", c.path, c.scope, r.status, r.body, c.status)
		}
	}
}

// Account lists page with Mastodon's max_id, min_id and since_id, through
// the Link header's next and prev.
func TestFollowersPaging(t *testing.T) {
	t.Parallel()
	s := setup(t)
	bobID, bobURI := s.accountID(t, "bob"), "https://local.example/users/bob"
	for i := range 5 {
		f, err := domain.NewFollower(fmt.Sprintf("https://remote.example/users/f%d", i), bobURI, "", domain.FollowAccepted, s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.follows.Add(t.Context(), f); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(r response) []string {
		var out []string
		for _, a := range r.list(t) {
			out = append(out, a["id"].(string))
		}
		return out
	}
	first := s.do(t, http.MethodGet, "/api/v1/accounts/"+bobID+"/followers?limit=2", "", nil)
	var pages [][]string
	seen := map[string]bool{}
	for r := first; ; {
		page := ids(r)
		pages = append(pages, page)
		for _, id := range page {
			if seen[id] {
				t.Fatalf("%s twice", id)
			}
			seen[id] = true
		}
		next := linkOf(t, r, "next")
		if next == "" {
			break
		}
		r = s.do(t, http.MethodGet, next, "", nil)
	}
	if fmt.Sprint(len(pages[0]), len(pages[1]), len(pages[2]), len(seen)) != "2 2 1 5" {
		t.Fatalf("pages %v", pages)
	}
	second := s.do(t, http.MethodGet, linkOf(t, first, "next"), "", nil)
	if prev := ids(s.do(t, http.MethodGet, linkOf(t, second, "prev"), "", nil)); fmt.Sprint(prev) != fmt.Sprint(pages[0]) {
		t.Fatalf("prev of the second page %v, want %v", prev, pages[0])
	}
	if since := ids(s.do(t, http.MethodGet, "/api/v1/accounts/"+bobID+"/followers?limit=3&since_id="+pages[2][0], "", nil)); fmt.Sprint(since) != fmt.Sprint(append(pages[0], pages[1][0])) {
		t.Fatalf("since_id the last: %v", since)
	}
	if min := ids(s.do(t, http.MethodGet, "/api/v1/accounts/"+bobID+"/followers?limit=3&min_id="+pages[2][0], "", nil)); fmt.Sprint(min) != fmt.Sprint(append(pages[0][1:], pages[1]...)) {
		t.Fatalf("min_id the last: %v", min)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/accounts/"+bobID+"/followers?max_id=no-such-account", "", nil); r.status != 200 || len(r.list(t)) != 0 {
		t.Fatalf("an unknown cursor: %d %s", r.status, r.body)
	}
	if l := s.do(t, http.MethodGet, "/api/v1/accounts/"+bobID+"/followers?limit=100", "", nil).list(t); len(l) != 5 {
		t.Fatalf("limit over the maximum: %d accounts", len(l))
	}
}
