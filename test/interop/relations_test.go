package interop_test

import (
	"fmt"
	"net/url"
	"testing"
)

// personaRelationScenarios are a persona's unfollow, block, unblock and
// removal of a follower, and a GoToSocial account's block of a persona
// (SPEC §11 "Personas"), on a fresh persona and fresh GoToSocial accounts
// so that the scenarios before are not disturbed.
func personaRelationScenarios(t *testing.T, store string, g *gts, h *herald) {
	fay := g.account(store + "_fay")
	gus := g.account(store + "_gus")
	erinTok := h.signUp("erin")
	erinAcct := "erin@" + h.host
	var erinByFay, erinByGus string

	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			g.t, h.t = t, t
			f(t)
		}) {
			t.FailNow() // later scenarios build on this one
		}
		g.t, h.t = t, t
	}
	relation := func(method, path, target string) (int, map[string]any) {
		var out map[string]any
		s := h.api(method, path, erinTok, map[string]string{"as": "erin", "target": target}, &out)
		return s, out
	}

	step("unfollow Herald to GoToSocial", func(t *testing.T) {
		eventually(t, "GoToSocial to resolve "+erinAcct, func() bool {
			erinByFay, erinByGus = fay.resolveAccount(erinAcct), gus.resolveAccount(erinAcct)
			return erinByFay != "" && erinByGus != ""
		})
		h.follow(erinTok, "erin", fay.uri)
		eventually(t, "the follow of fay accepted", func() bool { return h.follow(erinTok, "erin", fay.uri) == "accepted" })
		eventually(t, "GoToSocial to list erin as fay's follower", func() bool { return fay.relationship(erinByFay).FollowedBy })
		if s, out := relation("DELETE", "/api/v1/follows", fay.uri); s != 200 || out["state"] != "accepted" {
			t.Fatalf("unfollow: %d %v", s, out)
		}
		eventually(t, "GoToSocial to drop erin's follow", func() bool { return !fay.relationship(erinByFay).FollowedBy })
		if s, _ := relation("DELETE", "/api/v1/follows", fay.uri); s != 404 {
			t.Fatalf("unfollow twice: %d, want 404", s)
		}
	})

	step("block Herald to GoToSocial, of a follower", func(t *testing.T) {
		if s := gus.call("POST", "/api/v1/accounts/"+erinByGus+"/follow", url.Values{}, nil); s != 200 {
			t.Fatalf("gus follows erin: %d", s)
		}
		eventually(t, "gus's follow accepted", func() bool { return h.followers(erinTok, "erin")[gus.uri] == "accepted" })
		h.follow(erinTok, "erin", gus.uri)
		eventually(t, "erin's follow of gus accepted", func() bool { return h.follow(erinTok, "erin", gus.uri) == "accepted" })
		eventually(t, "GoToSocial to see both follows", func() bool { r := gus.relationship(erinByGus); return r.Following && r.FollowedBy })

		if s, out := relation("POST", "/api/v1/blocks", gus.uri); s != 201 || out["created"] != true {
			t.Fatalf("block: %d %v", s, out)
		}
		if st := h.followers(erinTok, "erin")[gus.uri]; st != "" {
			t.Fatalf("gus still follows erin on Herald: %q", st)
		}
		eventually(t, "GoToSocial to show the block and no follow either way", func() bool {
			r := gus.relationship(erinByGus)
			return r.BlockedBy && !r.Following && !r.FollowedBy
		})
		// Nothing more reaches gus: a post addressed to gus and fay goes to
		// fay's inbox alone.
		text := "after the block on " + store
		id, _ := h.publishID(erinTok, map[string]any{"as": "erin", "content": text, "to": []string{gus.uri, fay.uri}})
		eventually(t, "the post to reach fay", func() bool { return hasMention(fay.notifications(), text, "public") })
		if !h.logged(`"msg":"post published"`, "/users/erin/statuses/"+id, `"inboxes":1,`) {
			t.Fatalf("the post after the block was not sent to one inbox alone:\n%s", lastLines(h.output(), 20))
		}
		if gus.inHome(text) != nil || hasMention(gus.notifications(), text, "public") {
			t.Fatal("gus got erin's post after the block")
		}
		var list struct {
			Blocks []struct {
				Target string `json:"target"`
			} `json:"blocks"`
		}
		if s := h.api("GET", "/api/v1/blocks?as=erin", erinTok, nil, &list); s != 200 || len(list.Blocks) != 1 || list.Blocks[0].Target != gus.uri {
			t.Fatalf("erin's blocks: %d %+v", s, list)
		}
	})

	step("unblock Herald to GoToSocial", func(t *testing.T) {
		if s, out := relation("DELETE", "/api/v1/blocks", gus.uri); s != 200 {
			t.Fatalf("unblock: %d %v", s, out)
		}
		eventually(t, "GoToSocial to lift the block", func() bool { return !gus.relationship(erinByGus).BlockedBy })
		if s := gus.call("POST", "/api/v1/accounts/"+erinByGus+"/follow", url.Values{}, nil); s != 200 {
			t.Fatalf("gus follows erin again: %d", s)
		}
		eventually(t, "gus's new follow accepted", func() bool { return h.followers(erinTok, "erin")[gus.uri] == "accepted" })
	})

	step("remove a follower Herald to GoToSocial", func(t *testing.T) {
		if s := fay.call("POST", "/api/v1/accounts/"+erinByFay+"/follow", url.Values{}, nil); s != 200 {
			t.Fatalf("fay follows erin: %d", s)
		}
		eventually(t, "fay's follow accepted", func() bool { return h.followers(erinTok, "erin")[fay.uri] == "accepted" })
		eventually(t, "GoToSocial to show fay following erin", func() bool { return fay.relationship(erinByFay).Following })
		if s, out := relation("POST", "/api/v1/followers/remove", fay.uri); s != 200 {
			t.Fatalf("remove follower: %d %v", s, out)
		}
		if st := h.followers(erinTok, "erin")[fay.uri]; st != "" {
			t.Fatalf("fay still follows erin on Herald: %q", st)
		}
		// GoToSocial takes a Reject only of a follow request, not of an
		// accepted follow (its rejectFollowIRI: "TODO: Handle Reject
		// Follow to remove an already-accepted follow relationship"), so
		// fay still shows as following there. Herald sends her nothing:
		// erin's next post goes to one inbox, gus's (GoToSocial has no
		// shared inbox). fay's home timeline cannot tell: GoToSocial puts
		// the status gus received there too, as fay follows erin for it.
		text := "after removing fay on " + store
		id, _ := h.publishID(erinTok, map[string]any{"as": "erin", "content": text})
		eventually(t, "the post in gus's home timeline", func() bool { return gus.inHome(text) != nil })
		if !h.logged(`"msg":"post published"`, "/users/erin/statuses/"+id, `"inboxes":1,`) {
			t.Fatalf("the post after the removal went to more than gus's inbox:\n%s", lastLines(h.output(), 20))
		}
		t.Logf("GoToSocial shows fay following erin after the Reject: %v", fay.relationship(erinByFay).Following)
	})

	step("block GoToSocial to Herald", func(t *testing.T) {
		h.follow(erinTok, "erin", gus.uri)
		eventually(t, "erin's follow of gus accepted", func() bool { return h.follow(erinTok, "erin", gus.uri) == "accepted" })
		if s := gus.call("POST", "/api/v1/accounts/"+erinByGus+"/block", url.Values{}, nil); s != 200 {
			t.Fatalf("gus blocks erin: %d", s)
		}
		// GoToSocial may send the Undo of gus's follow before the Block:
		// then the Block finds one follow left to remove, erin's.
		eventually(t, "Herald to keep gus's block and drop the follows", func() bool {
			return h.logged(`"msg":"blocked by remote"`, gus.uri, `"follows_removed":2`) ||
				(h.logged(`"msg":"blocked by remote"`, gus.uri, `"follows_removed":1`) && h.logged(`"msg":"follow undone"`, gus.uri))
		})
		if st := h.followers(erinTok, "erin")[gus.uri]; st != "" {
			t.Fatalf("gus still follows erin on Herald: %q", st)
		}
		text := fmt.Sprintf("while gus blocks erin on %s", store)
		id, _ := h.publishID(erinTok, map[string]any{"as": "erin", "content": text, "to": []string{gus.uri}})
		eventually(t, "the post published", func() bool { return h.logged(`"msg":"post published"`, "/users/erin/statuses/"+id) })
		if !h.logged(`"msg":"post published"`, "/users/erin/statuses/"+id, `"inboxes":0,`) {
			t.Fatalf("a post to gus was sent while gus blocks erin:\n%s", lastLines(h.output(), 20))
		}
		if s := gus.call("POST", "/api/v1/accounts/"+erinByGus+"/unblock", url.Values{}, nil); s != 200 {
			t.Fatalf("gus unblocks erin: %d", s)
		}
		eventually(t, "Herald to lift gus's block", func() bool { return h.logged(`"msg":"block by remote undone"`, gus.uri) })
	})
}
