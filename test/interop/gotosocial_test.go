package interop_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestGoToSocial federates a fresh Herald with a real GoToSocial, once
// per store. One GoToSocial serves every run (it takes tens of seconds to
// start); each run has its own GoToSocial accounts and its own fresh
// Herald on a new port, which GoToSocial has never seen, so every run's
// first contact is a real one on both sides. Each scenario is a named
// subtest, so `go test -v` lists them; later ones build on earlier ones.
func TestGoToSocial(t *testing.T) {
	// The two peers' tests run side by side: each has its own peer and its
	// own Heralds, and most of their time is spent waiting on deliveries.
	t.Parallel()
	peer := requirePeer(t)
	g := startGTS(t, peer)
	eachStore(t, func(t *testing.T, store string, h *herald) {
		g.t = t
		runScenarios(t, store, g, h)
	})
}

func runScenarios(t *testing.T, store string, g *gts, h *herald) {
	r := newRun(t, store, gtsPeer{g}, h)
	r.play(t, sharedScenarios)
	// GoToSocial-only scenario functions,
	// func xxxScenarios(t *testing.T, store string, g *gts, h *herald),
	// are called here, before the restart, the suspension and the log check.
	personaRelationScenarios(t, store, g, h)
	lockAndKeyScenarios(t, store, g, h, func(name string, f func(*testing.T)) { r.step(t, name, f) })
	personaDeletionScenarios(t, store, g, h)
	contentScenarios(t, store, g, h, func(name string, f func(*testing.T)) { r.step(t, name, f) })
	r.play(t, lastScenarios)
}

// gtsPeer drives a GoToSocial through its Mastodon API.
type gtsPeer struct{ g *gts }

func (p gtsPeer) name() string                     { return "GoToSocial" }
func (p gtsPeer) hostport() string                 { return p.g.host }
func (p gtsPeer) use(t *testing.T)                 { p.g.t = t }
func (p gtsPeer) lacks(feature) string             { return "" }
func (p gtsPeer) checkLog(t *testing.T, h *herald) { p.g.checkLog(t, h) }

func (p gtsPeer) newUser(name string) user {
	u := p.g.account(name)
	return gtsDriver{masto: masto{t: func() *testing.T { return p.g.t }, call: u.call, uri: u.uri, handle: u.name + "@" + p.g.host}, u: u}
}

// gtsDriver is what GoToSocial does beside the Mastodon API both peers
// share (masto).
type gtsDriver struct {
	masto
	u *gtsUser
}

func (d gtsDriver) follows(id, _ string) bool { return d.u.relationship(id).Following }

func (d gtsDriver) followedBy(acct, _ string) bool {
	return d.u.relationship(d.u.resolveAccount(acct)).FollowedBy
}

func (d gtsDriver) direct(acct, _, text, _ string) status {
	return d.post("@"+acct+" "+text, "direct", "")
}

func (d gtsDriver) unboosted(st status) bool { return d.reblogs(st.ID) == 0 }

func (d gtsDriver) home(text string) *note {
	s := d.u.inHome(text)
	if s == nil {
		return nil
	}
	if s.Reblog != nil {
		return &note{ID: s.Reblog.ID, URI: s.Reblog.URI, Content: s.Reblog.Content, Booster: s.Account.ID}
	}
	return &note{ID: s.ID, URI: s.URI, Content: s.Content}
}

func (d gtsDriver) reread(n note) *note {
	s := d.u.status(n.ID)
	if s == nil {
		return nil
	}
	return &note{ID: s.ID, URI: s.URI, Content: s.Content}
}

func (d gtsDriver) replied(parent status, text string) bool {
	for _, r := range d.u.replies(parent.ID) {
		if strings.Contains(r.Content, text) && r.InReplyToID != nil && *r.InReplyToID == parent.ID {
			return true
		}
	}
	return false
}

// hasMention reports whether a mention notification holds a status with
// text and visibility.
func hasMention(ns []gtsNotification, text, visibility string) bool {
	for _, n := range ns {
		if n.Type == "mention" && n.Status != nil && strings.Contains(n.Status.Content, text) && n.Status.Visibility == visibility {
			return true
		}
	}
	return false
}

// lockAndKeyScenarios: a locked Herald persona (manuallyApprovesFollowers)
// and a key rotation, with fresh accounts on both sides so that the
// scenarios before are not disturbed. GoToSocial's follow of the locked
// persona stays requested until Herald accepts it; another account's
// follow, rejected, is gone. After a rotation of the persona's key a post
// still reaches GoToSocial, which logs no signature failure.
func lockAndKeyScenarios(t *testing.T, store string, g *gts, h *herald, step func(string, func(*testing.T))) {
	cy := g.account(store + "_cy")
	di := g.account(store + "_di")
	lenaTok := h.signUp("lena")
	lenaAcct := "lena@" + h.host
	var lenaID string

	step("locked persona: GoToSocial's follow waits for Herald's approval", func(t *testing.T) {
		var set struct {
			Locked bool `json:"locked"`
		}
		if s := h.api("PATCH", "/api/v1/personas/lena", lenaTok, map[string]bool{"locked": true}, &set); s != 200 || !set.Locked {
			t.Fatalf("lock lena: %d %+v", s, set)
		}
		eventually(t, "GoToSocial to resolve "+lenaAcct, func() bool {
			lenaID = cy.resolveAccount(lenaAcct)
			return lenaID != ""
		})
		var acct struct {
			Locked bool `json:"locked"`
		}
		if s := cy.call("GET", "/api/v1/accounts/"+lenaID, nil, &acct); s != 200 || !acct.Locked {
			t.Fatalf("GoToSocial shows lena unlocked (manuallyApprovesFollowers not read): %d %+v", s, acct)
		}
		for _, u := range []*gtsUser{cy, di} {
			if s := u.call("POST", "/api/v1/accounts/"+lenaID+"/follow", url.Values{}, nil); s != 200 {
				t.Fatalf("%s follows lena: %d", u.name, s)
			}
			eventually(t, "Herald to list "+u.name+"'s request as pending", func() bool { return h.requests(lenaTok, "lena")[u.uri] == "pending" })
			if r := u.relationship(lenaID); !r.Requested || r.Following {
				t.Fatalf("%s's relationship before the answer: %+v, want requested", u.name, r)
			}
		}
	})

	step("locked persona: Herald accepts one request and rejects the other", func(t *testing.T) {
		if s := h.api("POST", "/api/v1/follow_requests/authorize", lenaTok, map[string]string{"as": "lena", "follower": cy.uri}, nil); s != 200 {
			t.Fatalf("authorize: %d", s)
		}
		eventually(t, "GoToSocial to see cy's follow accepted", func() bool { return cy.relationship(lenaID).Following })
		if s := h.api("POST", "/api/v1/follow_requests/reject", lenaTok, map[string]string{"as": "lena", "follower": di.uri}, nil); s != 200 {
			t.Fatalf("reject: %d", s)
		}
		eventually(t, "GoToSocial to drop di's request", func() bool { r := di.relationship(lenaID); return !r.Requested && !r.Following })
		if st := h.followers(lenaTok, "lena"); st[cy.uri] != "accepted" || st[di.uri] != "" {
			t.Fatalf("lena's followers on Herald: %v", st)
		}
		h.publish(lenaTok, map[string]any{"as": "lena", "content": "to my approved followers on " + store})
		eventually(t, "lena's post in cy's home timeline", func() bool { return cy.inHome("to my approved followers on "+store) != nil })
	})

	step("key rotation: Herald's posts still verify on GoToSocial", func(t *testing.T) {
		logFrom := len(g.log())
		var rot struct {
			KeyID string `json:"key_id"`
		}
		if s := h.api("POST", "/api/v1/personas/lena/rotate-key", lenaTok, nil, &rot); s != 200 || rot.KeyID != h.base+"/users/lena#main-key" {
			t.Fatalf("rotate-key: %d %+v", s, rot)
		}
		// The Update{Person} carrying the new key, delivered (GoToSocial
		// answered 2xx to a request signed with the new key).
		eventually(t, "the Update{Person} delivered to GoToSocial", func() bool {
			var done struct {
				Jobs []struct {
					ActivityID string `json:"activity_id"`
				} `json:"jobs"`
			}
			h.api("GET", "/admin/api/jobs?state=succeeded&limit=200&host="+url.QueryEscape(g.host), adminToken, nil, &done)
			for _, j := range done.Jobs {
				if strings.HasPrefix(j.ActivityID, h.base+"/users/lena/activities/update-") {
					return true
				}
			}
			return false
		})
		h.publish(lenaTok, map[string]any{"as": "lena", "content": "after the key rotation on " + store})
		eventually(t, "the post after the rotation in cy's home timeline", func() bool { return cy.inHome("after the key rotation on "+store) != nil })
		// GoToSocial logs a refused signature at INFO ("authentication
		// NOT PASSED", 401): none of Herald's may be refused after the
		// rotation, the Update (signed with the old key) included.
		for _, line := range strings.Split(g.log()[logFrom:], "\n") {
			low := strings.ToLower(line)
			if strings.Contains(line, h.host) && (strings.Contains(line, "statusCode=401") || strings.Contains(low, "not passed") ||
				((strings.Contains(low, "signature") || strings.Contains(low, "verif")) && (strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN")))) {
				t.Errorf("gotosocial log after the rotation: %s", line)
			}
		}
	})
}
