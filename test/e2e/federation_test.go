package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

// Sign-up, remote follows, a post and its delivery through the real
// server: each remote server gets exactly one correctly signed copy (one
// per shared inbox, one per actor where there is none), direct posts go to
// their recipients only, and a post to a group is announced by the group.
func TestFakeFediverseDelivery(t *testing.T) {
	t.Parallel()
	h := startHerald(t, "herald", nil)
	alice := h.persona("alice")
	token := h.signUp("alice")
	if status, out := h.call(http.MethodPost, "/api/v1/groups", token, map[string]any{"name": "club", "locked": false}); status != http.StatusCreated {
		t.Fatalf("group: %d %v", status, out)
	}
	club := h.base + "/groups/club"

	now := time.Now
	r1 := newRemote(t, true, now, "a1", "a2") // two followers behind one shared inbox
	r2 := newRemote(t, false, now, "b1")      // no shared inbox
	r3 := newRemote(t, true, now, "c1", "c2") // c1 follows alice, c2 the club
	followers := []struct {
		rm   *remote
		name string
	}{{r1, "a1"}, {r1, "a2"}, {r2, "b1"}, {r3, "c1"}}
	for i, f := range followers {
		inbox := alice + "/inbox"
		if i%2 == 1 {
			inbox = h.base + "/inbox" // the shared inbox works as well
		}
		f.rm.follow(f.rm.actor(f.name), alice, inbox)
	}
	r3.follow(r3.actor("c2"), club, club+"/inbox")

	// Each follower gets its Accept, signed by the followed actor.
	for _, f := range append(followers, struct {
		rm   *remote
		name string
	}{r3, "c2"}) {
		a := f.rm.actor(f.name)
		eventually(t, "the Accept for "+a.uri, func() bool {
			for _, g := range f.rm.received("Accept") {
				if g.path == "/users/"+f.name+"/inbox" {
					return true
				}
			}
			return false
		})
	}
	h.settled(t)
	for _, rm := range []*remote{r1, r2, r3} {
		for _, g := range rm.received("Accept") {
			if g.verifyErr != nil {
				t.Fatalf("%s: Accept signature does not verify: %v", rm.base, g.verifyErr)
			}
		}
		// Herald fetched the followers' actors with signed GETs.
		gets := rm.signedGets()
		if len(gets) == 0 {
			t.Fatalf("%s: Herald never fetched its actors", rm.base)
		}
		for _, err := range gets {
			if err != nil {
				t.Fatalf("%s: signed GET does not verify: %v", rm.base, err)
			}
		}
	}
	if status, out := h.call(http.MethodGet, "/api/v1/personas/alice/followers", token, nil); status != 200 || out["total"] != 4.0 {
		t.Fatalf("followers: %d %v", status, out)
	}

	// A public post: one copy per remote server.
	pub := h.post(token, map[string]any{"as": "alice", "content": "hello fediverse"})
	if pub["inboxes"] != 3.0 {
		t.Fatalf("published %v, want 3 inboxes", pub)
	}
	wantPaths := map[*remote][]string{r1: {"/inbox"}, r2: {"/users/b1/inbox"}, r3: {"/inbox"}}
	for rm := range wantPaths {
		eventually(t, "the Create at "+rm.base, func() bool { return len(rm.received("Create")) > 0 })
	}
	counts := h.settled(t)
	if counts[domain.JobDead] != 0 {
		t.Fatalf("dead jobs: %v", counts)
	}
	for rm, paths := range wantPaths {
		creates := rm.received("Create")
		if len(creates) != len(paths) {
			t.Fatalf("%s got %d copies of the Create, want %d", rm.base, len(creates), len(paths))
		}
		for i, g := range creates {
			obj, _ := g.activity["object"].(map[string]any)
			if g.path != paths[i] || g.verifyErr != nil || g.keyID != alice+"#main-key" || g.contentType != "application/activity+json" ||
				!strings.HasPrefix(g.userAgent, "Herald/") || !strings.Contains(g.userAgent, h.domain) ||
				g.activity["actor"] != alice || obj["content"] != "<p>hello fediverse</p>" || obj["id"] != pub["uri"] {
				t.Fatalf("%s: copy %+v (verify: %v)", rm.base, g, g.verifyErr)
			}
		}
	}

	// A direct post reaches its recipient's server only.
	dm := h.post(token, map[string]any{"as": "alice", "content": "just for b1", "visibility": "direct", "to": []string{r2.actor("b1").uri}})
	eventually(t, "the direct Create", func() bool { return len(r2.received("Create")) == 2 })
	h.settled(t)
	if len(r1.received("Create")) != 1 || len(r3.received("Create")) != 1 {
		t.Fatal("a direct post reached servers of non-recipients")
	}
	last := r2.received("Create")[1]
	if obj, _ := last.activity["object"].(map[string]any); obj["id"] != dm["uri"] || last.verifyErr != nil || last.path != "/users/b1/inbox" {
		t.Fatalf("direct copy %+v", last)
	}

	// A post to the club: the club announces it to its follower c2 (on r3,
	// which also gets alice's Create for c1: two activities, one each).
	h.post(token, map[string]any{"as": "alice", "content": "hello club", "to": []string{club}})
	eventually(t, "the club's Announce", func() bool { return len(r3.received("Announce")) == 1 })
	h.settled(t)
	ann := r3.received("Announce")[0]
	if ann.verifyErr != nil || ann.keyID != club+"#main-key" || ann.activity["actor"] != club {
		t.Fatalf("announce %+v (verify %v)", ann, ann.verifyErr)
	}
	if n := len(r3.received("Create")); n != 2 {
		t.Fatalf("r3 got %d Creates, want 2", n)
	}
}

// Bad inputs through the real server get their status and leave nothing:
// unsigned, forged, someone else's activity, malformed, too large.
func TestInboxRefusalsEndToEnd(t *testing.T) {
	t.Parallel()
	h := startHerald(t, "herald", nil)
	token := h.signUp("alice")
	alice := h.persona("alice")
	rm := newRemote(t, true, time.Now, "mallory", "victim")
	m, v := rm.actor("mallory"), rm.actor("victim")

	req, _ := http.NewRequest(http.MethodPost, alice+"/inbox", strings.NewReader(`{"type":"Follow","actor":"`+m.uri+`","object":"`+alice+`"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned: %d", resp.StatusCode)
	}
	// Signed by mallory, claiming to be the victim.
	if status, body := rm.send(m, alice+"/inbox", map[string]any{"id": v.uri + "/f/1", "type": "Follow", "actor": v.uri, "object": alice}); status != http.StatusUnauthorized {
		t.Fatalf("impersonation: %d %s", status, body)
	}
	if status, _ := rm.send(m, alice+"/inbox", map[string]any{"type": "Follow"}); status != http.StatusBadRequest {
		t.Fatalf("no actor: %d", status)
	}
	huge := strings.Repeat("x", 1<<20)
	if status, _ := rm.send(m, h.base+"/inbox", map[string]any{"type": "Create", "actor": m.uri, "content": huge}); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("too large: %d", status)
	}
	if status, out := h.call(http.MethodGet, "/api/v1/personas/alice/followers?state=accepted", token, nil); status != 200 || out["total"] != 0.0 {
		t.Fatalf("followers after refusals: %v", out)
	}
	if counts := h.settled(t); counts[domain.JobSucceeded]+counts[domain.JobDead] != 0 {
		t.Fatalf("refused requests queued deliveries: %v", counts)
	}
}

// Two Herald instances on two loopback ports follow each other's personas
// (one by WebFinger name, one by URI) and see each other's posts arrive,
// every request signed by one and verified by the other: the demo of
// docs/federation.md in process, down to the jobs each queued
// (test/walkthrough runs the demo's own commands).
func TestTwoHeraldInstancesFederate(t *testing.T) {
	t.Parallel()
	a := startHerald(t, "herald-a", nil)
	b := startHerald(t, "herald-b", nil)
	aliceTok, bobTok := a.signUp("alice"), b.signUp("bob")
	alice, bob := a.persona("alice"), b.persona("bob")

	status, out := a.call(http.MethodPost, "/api/v1/follows", aliceTok, map[string]string{"as": "alice", "target": "bob@" + b.domain})
	if status != http.StatusCreated || out["target"] != bob || out["state"] != "pending" {
		t.Fatalf("alice follows bob: %d %v", status, out)
	}
	status, out = b.call(http.MethodPost, "/api/v1/follows", bobTok, map[string]string{"as": "bob", "target": alice})
	if status != http.StatusCreated || out["target"] != alice {
		t.Fatalf("bob follows alice: %d %v", status, out)
	}
	for _, f := range []struct {
		h          *herald
		tok, as, t string
	}{{a, aliceTok, "alice", bob}, {b, bobTok, "bob", alice}} {
		eventually(t, f.as+"'s follow to be accepted", func() bool {
			_, out := f.h.call(http.MethodPost, "/api/v1/follows", f.tok, map[string]string{"as": f.as, "target": f.t})
			return out["state"] == "accepted"
		})
	}
	for _, f := range []struct {
		h        *herald
		tok, who string
		follower string
	}{{a, aliceTok, "alice", bob}, {b, bobTok, "bob", alice}} {
		_, out := f.h.call(http.MethodGet, "/api/v1/personas/"+f.who+"/followers", f.tok, nil)
		list, _ := out["followers"].([]any)
		if out["total"] != 1.0 || len(list) != 1 || list[0].(map[string]any)["uri"] != f.follower {
			t.Fatalf("%s's followers: %v", f.who, out)
		}
	}

	a.post(aliceTok, map[string]any{"as": "alice", "content": "hello from A"})
	b.post(bobTok, map[string]any{"as": "bob", "content": "hello from B"})
	for _, f := range []struct {
		h             *herald
		tok, author   string
		content, want string
	}{{b, bobTok, alice, "", "<p>hello from A</p>"}, {a, aliceTok, bob, "", "<p>hello from B</p>"}} {
		eventually(t, fmt.Sprintf("%q to arrive at %s", f.want, f.h.domain), func() bool {
			_, out := f.h.call(http.MethodGet, "/api/v1/posts?author="+url.QueryEscape(f.author), f.tok, nil)
			posts, _ := out["posts"].([]any)
			return len(posts) == 1 && posts[0].(map[string]any)["content"] == f.want && posts[0].(map[string]any)["local"] == false
		})
	}
	for _, h := range []*herald{a, b} {
		if counts := h.settled(t); counts[domain.JobDead] != 0 || counts[domain.JobSucceeded] != 3 {
			t.Fatalf("%s jobs: %v, want Follow, Accept and Create delivered", h.domain, counts)
		}
	}
}
