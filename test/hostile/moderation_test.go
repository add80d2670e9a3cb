package hostile_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const adminToken = "hostile-admin-token"

// allRequests counts every request Herald made to the peer: GETs served
// and POSTs received.
func (p *peer) allRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.gets) + len(p.posts)
}

// host is the peer's host:port, the domain an operator blocks it by.
func (p *peer) host() string {
	u, _ := url.Parse(p.base)
	return u.Host
}

// A suspended domain, tried from outside (SPEC §11): its signed POSTs get
// 403 before any key fetch and store nothing; a post by a persona followed
// from it and from another server reaches only the other; the suspended
// server sees no request of Herald's after the block; its follows are
// gone; lifting the block restores federation.
func TestSuspendedDomainIsShutOut(t *testing.T) {
	t.Parallel()
	eachStore(t, "a suspended domain is refused before any signature work and sent nothing", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		evil, good := s.peer(), s.peer()
		e, g := evil.actor("e"), good.actor("g")
		followLocal(t, e, s.alice)
		followLocal(t, g, s.alice)
		eventually(t, "both Accepts", func() bool { return len(evil.received("Accept")) == 1 && len(good.received("Accept")) == 1 })

		status, out := h.call(http.MethodPost, "/admin/api/domain-blocks", adminToken,
			map[string]string{"domain": evil.host(), "severity": "suspend", "reason": "spam"})
		if status != http.StatusCreated {
			t.Fatalf("block %s: %d %v", evil.host(), status, out)
		}
		if st := h.followState(e.uri, s.alice); st != "" {
			t.Errorf("e's follow of alice after the suspension: %q, want none", st)
		}
		before := evil.allRequests()

		// Its signed POSTs: 403, before any key fetch, nothing stored.
		stranger := evil.actor("stranger") // never seen: its key would need a fetch
		for _, a := range []*actor{e, stranger} {
			id, act := s.noteToAlice(a, "from a suspended domain")
			if ans := a.send(inboxOf(s.alice), act); ans.status != http.StatusForbidden {
				t.Errorf("%s's POST after the suspension: %s, want 403", a.uri, ans)
			}
			if h.stored(id) {
				t.Errorf("%s's note was stored", a.uri)
			}
		}

		// alice's post reaches the other server only (e's follow is gone);
		// a direct note to e is queued and ends without a request.
		status, out = h.call(http.MethodPost, "/api/v1/posts", s.token, map[string]any{"as": "alice", "content": "after the block"})
		if status != http.StatusCreated {
			t.Fatalf("alice posts: %d %v", status, out)
		}
		status, out = h.call(http.MethodPost, "/api/v1/posts", s.token, map[string]any{"as": "alice", "content": "psst", "visibility": "direct", "to": []string{e.uri}})
		if status != http.StatusCreated {
			t.Fatalf("alice writes to e: %d %v", status, out)
		}
		eventually(t, "alice's Create at the other server", func() bool { return len(good.received("Create")) == 1 })
		eventually(t, "the job to the suspended server ended as suspended", func() bool {
			_, jobs := h.raw(http.MethodGet, "/admin/api/jobs?state=dead", adminToken, nil, "")
			return strings.Contains(string(jobs), "suspended")
		})
		if n := evil.allRequests() - before; n != 0 {
			t.Fatalf("the suspended server saw %d requests of Herald's after the block", n)
		}

		// Lifted: federation resumes (the removed follows do not come back).
		if status, out := h.call(http.MethodDelete, "/admin/api/domain-blocks/"+url.PathEscape(evil.host()), adminToken, nil); status != http.StatusNoContent {
			t.Fatalf("lift: %d %v", status, out)
		}
		id, act := s.noteToAlice(e, "after the lift")
		deadline := time.Now().Add(30 * time.Second)
		for {
			ans := e.send(inboxOf(s.alice), act)
			if ans.status == http.StatusAccepted {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("e's POST after the lift: %s, want 202", ans)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !h.stored(id) {
			t.Fatal("e's note after the lift was not stored")
		}
	})
}

// Allowlist mode on every store: a domain not allowed is refused (first
// contact included), an allowed one federates.
func TestAllowlistModeFederatesOnlyWithAllowed(t *testing.T) {
	t.Parallel()
	eachStoreWith(t, "allowlist mode refuses a domain not allowed", map[string]string{"HERALD_FEDERATION_MODE": "allowlist"}, func(t *testing.T, h *herald) {
		s := newScene(t, h)
		friend, stranger := s.peer(), s.peer()
		f, x := friend.actor("f"), stranger.actor("x")
		if status, out := h.call(http.MethodPost, "/admin/api/domain-allows", adminToken, map[string]string{"domain": friend.host()}); status != http.StatusCreated {
			t.Fatalf("allow %s: %d %v", friend.host(), status, out)
		}
		id, act := s.noteToAlice(x, "not allowed")
		if ans := x.send(inboxOf(s.alice), act); ans.status != http.StatusForbidden || h.stored(id) {
			t.Fatalf("a domain not allowed: %s, stored %v; want 403 and nothing", ans, h.stored(id))
		}
		if stranger.allRequests() != 0 {
			t.Fatalf("Herald sent %d requests to a domain not allowed", stranger.allRequests())
		}
		s.stillVerified(f)
	})
}

// A Flag from another server is kept for the operator, on every store.
func TestFlagReachesTheOperator(t *testing.T) {
	t.Parallel()
	eachStore(t, "a Flag is kept as a report", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		r := s.peer().actor("reporter")
		flag := activity("Flag", r, []string{s.alice})
		flag["content"] = "spam from alice"
		mustAccept(t, "the Flag", r.send(inboxOf(s.alice), flag))
		_, body := h.raw(http.MethodGet, "/admin/api/reports?state=open", adminToken, nil, "")
		if !strings.Contains(string(body), "spam from alice") || !strings.Contains(string(body), r.uri) {
			t.Fatalf("the operator's reports: %s", body)
		}
	})
}

// Registrations needing approval, on every store: no token until the
// operator approves.
func TestRegistrationsNeedApproval(t *testing.T) {
	t.Parallel()
	eachStoreWith(t, "a sign-up waits for the operator's approval", map[string]string{"HERALD_REGISTRATIONS": "approval"}, func(t *testing.T, h *herald) {
		creds := map[string]string{"username": "newcomer", "password": "correct horse", "reason": "I like queues"}
		if status, out := h.call(http.MethodPost, "/api/v1/accounts", "", creds); status != http.StatusAccepted || out["token"] != nil {
			t.Fatalf("sign-up: %d %v, want 202 without a token", status, out)
		}
		login := map[string]string{"username": "newcomer", "password": "correct horse"}
		if status, _ := h.call(http.MethodPost, "/api/v1/sessions", "", login); status != http.StatusForbidden {
			t.Fatalf("login before approval: %d, want 403", status)
		}
		_, list := h.call(http.MethodGet, "/admin/api/registrations", adminToken, nil)
		regs, _ := list["registrations"].([]any)
		if len(regs) != 1 {
			t.Fatalf("pending: %v", list)
		}
		id := regs[0].(map[string]any)["id"].(string)
		if status, out := h.call(http.MethodPost, "/admin/api/registrations/"+id+"/approve", adminToken, nil); status != http.StatusOK {
			t.Fatalf("approve: %d %v", status, out)
		}
		if status, out := h.call(http.MethodPost, "/api/v1/sessions", "", login); status != http.StatusCreated || out["token"] == nil {
			t.Fatalf("login after approval: %d %v", status, out)
		}
	})
}
