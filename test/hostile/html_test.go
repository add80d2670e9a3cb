package hostile_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// SPEC §10, HTML: remote HTML is sanitized when it arrives, local posts
// are plain text rendered (escaped) by Herald, and no API ever returns
// unsanitized content.

// surface is one place content comes out of Herald: its name and every
// string in it.
type surface struct {
	name    string
	strings []string
}

// stringsOf collects every string of a decoded JSON document.
func stringsOf(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = stringsOf(e, out)
		}
	case map[string]any:
		for _, e := range x {
			out = stringsOf(e, out)
		}
	}
	return out
}

// read GETs a JSON document from Herald: the client API with the token,
// the ActivityPub surface as a server asks for it.
func (h *herald) read(path, token string) any {
	h.t.Helper()
	accept := ""
	if token == "" {
		accept = "application/activity+json"
	}
	status, body := h.raw(http.MethodGet, path, token, nil, accept)
	if status != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", path, status, body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	return v
}

// collection reads an ActivityPub collection's pages (at most ten).
func (h *herald) collection(path string) surface {
	h.t.Helper()
	s := surface{name: "GET " + path}
	next := path
	for range 10 {
		doc, _ := h.read(next, "").(map[string]any)
		s.strings = stringsOf(doc, s.strings)
		n, _ := doc["next"].(string)
		if n == "" {
			break
		}
		u, err := url.Parse(n)
		if err != nil {
			h.t.Fatal(err)
		}
		next = u.RequestURI()
	}
	return s
}

func marker(i int) string { return fmt.Sprintf("hostile%02d", i) }

// Remote notes carrying each payload, arriving by every path that stores
// remote HTML (a public note that mentions alice, a direct note to her, a
// note to her group, an edit of a note, a note fetched for a boost), then
// every surface that returns content: the client API's posts, mentions and
// direct listings, the group's and alice's outboxes and the followers
// collections, and the group's Announces delivered to a remote follower.
func TestRemoteHTMLComesOutSanitizedEverywhere(t *testing.T) {
	t.Parallel()
	eachStore(t, "remote HTML is sanitized on every surface", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		club := h.group(s.token, "club")
		rp, fp := s.peer(), s.peer()
		x, f := rp.actor("x"), fp.actor("f")
		localFollows(t, h, s.token, "alice", x)
		followLocal(t, x, club)
		followLocal(t, f, club)
		followLocal(t, f, s.alice)

		mention := []map[string]any{{"type": "Mention", "href": s.alice, "name": "@alice@" + h.domain}}
		for i, p := range payloads {
			content := "<p>" + marker(i) + "</p>" + p.html
			pub := x.noteURI()
			mustAccept(t, p.name+" in a public note", x.send(inboxOf(s.alice), create(x, pub, content, s.toAlice(), map[string]any{"tag": mention})))
			dm := x.noteURI()
			mustAccept(t, p.name+" in a direct note", x.send(inboxOf(s.alice), create(x, dm, content, []string{s.alice}, map[string]any{"tag": mention, "cc": []string{}})))
			grp := x.noteURI()
			mustAccept(t, p.name+" in a note to the group", x.send(inboxOf(club), create(x, grp, content, []string{asPublic, club}, nil)))
			edited := x.noteURI()
			mustAccept(t, "a note to edit", x.send(inboxOf(s.alice), create(x, edited, "<p>plain</p>", s.toAlice(), nil)))
			upd := activity("Update", x, noteObject(x, edited, content, s.toAlice(),
				map[string]any{"updated": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}))
			mustAccept(t, p.name+" in an edit", x.send(inboxOf(s.alice), upd))
			boosted := x.noteURI()
			rp.put(strings.TrimPrefix(boosted, rp.base), http.StatusOK, "application/activity+json", noteObject(x, boosted, content, []string{asPublic}, nil))
			ann := activity("Announce", x, boosted)
			ann["to"] = []string{asPublic}
			mustAccept(t, p.name+" in a boosted note", x.send(inboxOf(s.alice), ann))
			for _, id := range []string{pub, dm, grp, edited, boosted} {
				if !h.stored(id) {
					t.Fatalf("%s: note %s was not stored: the payload reached no surface", p.name, id)
				}
			}
		}
		eventually(t, "the group's Announces at the remote follower", func() bool { return len(fp.received("Announce")) >= len(payloads) })

		q := url.QueryEscape
		var delivered surface
		delivered.name = "the group's Announces delivered to " + f.uri
		for _, a := range fp.received("Announce") {
			delivered.strings = stringsOf(a.activity, delivered.strings)
		}
		surfaces := []surface{
			{"GET /api/v1/posts?author=x", stringsOf(h.read("/api/v1/posts?limit=200&author="+q(x.uri), s.token), nil)},
			{"GET /api/v1/mentions?as=alice", stringsOf(h.read("/api/v1/mentions?limit=200&as=alice", s.token), nil)},
			{"GET /api/v1/direct?as=alice&with=x", stringsOf(h.read("/api/v1/direct?limit=200&as=alice&with="+q(x.uri), s.token), nil)},
			h.collection("/groups/club/outbox?page=true"),
			h.collection("/groups/club/followers?page=true"),
			h.collection("/users/alice/followers?page=true"),
			delivered,
		}
		// Where each payload must show (by its marker), so that no surface
		// passes for want of content.
		mustShow := map[string]bool{surfaces[0].name: true, surfaces[1].name: true, surfaces[2].name: true, surfaces[3].name: true, delivered.name: true}
		for i, p := range payloads {
			t.Run(p.name, func(t *testing.T) {
				for _, sf := range surfaces {
					seen := false
					for _, str := range sf.strings {
						if !strings.Contains(str, marker(i)) {
							continue
						}
						seen = true
						if why := unsafeMarkup(str); len(why) != 0 {
							t.Errorf("%s returns %q: %s", sf.name, str, strings.Join(why, "; "))
						}
					}
					if mustShow[sf.name] && !seen {
						t.Errorf("%s does not show the note carrying %q at all", sf.name, p.name)
					}
				}
			})
		}
		// Nothing unsafe anywhere, marked or not.
		for _, sf := range surfaces {
			for _, str := range sf.strings {
				if why := unsafeMarkup(str); len(why) != 0 && !strings.Contains(str, "hostile") {
					t.Errorf("%s returns %q: %s", sf.name, str, strings.Join(why, "; "))
				}
			}
		}
	})
}

// A persona's post written with markup is text: it comes out escaped in
// the client API, in its outbox and note document, and in the Create
// delivered to a remote follower.
func TestLocalPostMarkupComesOutEscaped(t *testing.T) {
	t.Parallel()
	eachStore(t, "local posts are plain text, escaped", func(t *testing.T, h *herald) {
		s := newScene(t, h)
		fp := s.peer()
		f := fp.actor("f")
		followLocal(t, f, s.alice)
		const written, escaped = `<script>alert(1)</script>`, `&lt;script&gt;alert(1)&lt;/script&gt;`
		status, out := h.call(http.MethodPost, "/api/v1/posts", s.token, map[string]any{"as": "alice", "content": written})
		if status != http.StatusCreated {
			t.Fatalf("alice's post: %d %v", status, out)
		}
		uri, _ := out["uri"].(string)
		eventually(t, "alice's Create at her follower", func() bool { return len(fp.received("Create")) > 0 })

		var contents []surface
		for _, p := range h.postsBy(s.token, s.alice) {
			contents = append(contents, surface{"GET /api/v1/posts?author=alice", []string{fmt.Sprint(p["content"])}})
		}
		outbox, _ := h.read("/users/alice/outbox?page=true", "").(map[string]any)
		for _, it := range asSlice(outbox["orderedItems"]) {
			obj, _ := it.(map[string]any)["object"].(map[string]any)
			contents = append(contents, surface{"GET /users/alice/outbox", []string{fmt.Sprint(obj["content"])}})
		}
		noteDoc, _ := h.read(strings.TrimPrefix(uri, h.base), "").(map[string]any)
		contents = append(contents, surface{"GET " + uri, []string{fmt.Sprint(noteDoc["content"])}})
		for _, c := range fp.received("Create") {
			obj, _ := c.activity["object"].(map[string]any)
			contents = append(contents, surface{"the Create delivered to " + f.uri, []string{fmt.Sprint(obj["content"])}})
		}
		if len(contents) < 4 {
			t.Fatalf("alice's post shows on %d surfaces, want 4: %v", len(contents), contents)
		}
		for _, c := range contents {
			got := c.strings[0]
			if why := unsafeMarkup(got); len(why) != 0 || !strings.Contains(got, escaped) {
				t.Errorf("%s: content %q, want the text escaped (%s) and nothing unsafe (%v)", c.name, got, escaped, why)
			}
		}
	})
}
