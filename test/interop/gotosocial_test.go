package interop_test

import (
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
