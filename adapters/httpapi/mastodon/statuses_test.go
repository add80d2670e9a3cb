package mastodon_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

const (
	stCarolURI = "https://remote.example/users/carol"
	stAliceURI = "https://local.example/users/alice"
	stBobURI   = "https://local.example/users/bob"
)

// stRemote caches the remote actor carol and stores a post of hers that
// carries everything a post can (SPEC §12), public unless vis says.
func (s *server) stRemote(t *testing.T, n string, vis domain.Visibility, e domain.Extras) domain.Post {
	t.Helper()
	ctx := context.Background()
	carol := domain.ForeignAvatar{ActorURI: stCarolURI, PublicKeyID: stCarolURI + "#main-key", PreferredUsername: "carol", Host: "remote.example",
		Inbox: stCarolURI + "/inbox", FetchedAt: s.clock.Now()}
	if err := s.content.Upsert(ctx, carol); err != nil {
		t.Fatal(err)
	}
	p, err := domain.NewRemoteNote("0190a000-0000-7000-8000-0000000000"+n, "https://remote.example/notes/"+n, stCarolURI, "<p>note "+n+"</p>", vis, s.clock.Now(), e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.content.CreatePost(ctx, p); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Minute)
	return p
}

func (s *server) stFollow(t *testing.T, follower, followed string) {
	t.Helper()
	f := domain.Follower{FollowerURI: follower, FollowedURI: followed, State: domain.FollowAccepted, CreatedAt: s.clock.Now()}
	if _, err := s.follows.Add(context.Background(), f); err != nil {
		t.Fatal(err)
	}
}

// A status carries its content warning, language, sensitivity and poll
// as a client sent them; what Herald cannot express is refused with 422.
func TestCreateStatusContent(t *testing.T) {
	t.Parallel()
	s := setup(t)
	tok := s.login(t, "alice", "alice", "read write")
	st := s.postStatus(t, tok, url.Values{"status": {"Which #Tea?"}, "spoiler_text": {"drinks"}, "sensitive": {"true"}, "language": {"en"},
		"poll[options][]": {"green", "black"}, "poll[expires_in]": {"3600"}, "poll[multiple]": {"true"}})
	if st["spoiler_text"] != "drinks" || st["sensitive"] != true || st["language"] != "en" || st["visibility"] != "public" {
		t.Fatalf("status %v", st)
	}
	poll, _ := st["poll"].(map[string]any)
	if poll == nil || poll["id"] != st["id"] || poll["multiple"] != true || poll["expired"] != false || poll["voted"] != false ||
		len(poll["options"].([]any)) != 2 || poll["options"].([]any)[1].(map[string]any)["title"] != "black" {
		t.Fatalf("poll %v", st["poll"])
	}
	if exp, _ := time.Parse(time.RFC3339, poll["expires_at"].(string)); !exp.Equal(s.clock.Now().Add(-time.Minute).Add(time.Hour)) {
		t.Fatalf("the poll expires at %v", poll["expires_at"])
	}
	tags := st["tags"].([]any)
	if len(tags) != 1 || tags[0].(map[string]any)["name"] != "tea" {
		t.Fatalf("tags %v", tags)
	}
	// JSON, as most clients send it.
	r := s.do(t, http.MethodPost, "/api/v1/statuses", tok, `{"status":"json","spoiler_text":"cw","poll":{"options":["a","b"],"expires_in":600}}`)
	if r.status != http.StatusOK || r.object(t)["spoiler_text"] != "cw" || r.object(t)["poll"] == nil {
		t.Fatalf("JSON status: %d %s", r.status, r.body)
	}
	// Direct: to the accounts the text mentions, read back by its author.
	dm := s.postStatus(t, tok, url.Values{"status": {"@bob psst"}, "visibility": {"direct"}})
	if dm["visibility"] != "direct" || len(dm["mentions"].([]any)) != 1 || dm["mentions"].([]any)[0].(map[string]any)["acct"] != "bob" {
		t.Fatalf("direct %v", dm)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/statuses/"+dm["id"].(string), tok, nil); r.status != http.StatusOK || r.object(t)["visibility"] != "direct" {
		t.Fatalf("the direct status, read by its author: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/statuses/"+dm["id"].(string), "", nil); r.status != http.StatusNotFound {
		t.Fatalf("the direct status, read without a token: %d %s", r.status, r.body)
	}
	// A public status addresses whom it mentions.
	if st := s.postStatus(t, tok, url.Values{"status": {"hello @bob"}}); len(st["mentions"].([]any)) != 1 {
		t.Fatalf("mentions %v", st["mentions"])
	}
	for _, c := range []struct {
		name string
		form url.Values
	}{
		{"unlisted", url.Values{"status": {"x"}, "visibility": {"unlisted"}}},
		{"direct to no one", url.Values{"status": {"x @nobody"}, "visibility": {"direct"}}},
		{"a poll without its duration", url.Values{"status": {"x"}, "poll[options][]": {"a", "b"}}},
		{"a poll of one option", url.Values{"status": {"x"}, "poll[options][]": {"a"}, "poll[expires_in]": {"600"}}},
		{"a poll too long", url.Values{"status": {"x"}, "poll[options][]": {"a", "b"}, "poll[expires_in]": {"99999999"}}},
		{"a language that is none", url.Values{"status": {"x"}, "language": {"not a tag"}}},
		{"media", url.Values{"status": {"x"}, "media_ids[]": {"1"}}},
		{"a content warning too long", url.Values{"status": {"x"}, "spoiler_text": {strings.Repeat("w", domain.MaxSummaryChars+1)}}},
	} {
		if r := s.do(t, http.MethodPost, "/api/v1/statuses", tok, c.form); r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
}

// Every read of a status is scoped to what the token's persona may see.
func TestStatusVisibility(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice, bob := s.login(t, "alice", "alice", "read write"), s.login(t, "bob", "bob", "read write")
	private := s.postStatus(t, alice, url.Values{"status": {"followers only"}, "visibility": {"private"}})["id"].(string)
	public := s.postStatus(t, alice, url.Values{"status": {"for all"}})["id"].(string)
	carolsPrivate := s.stRemote(t, "01", domain.VisibilityFollowers, domain.Extras{}).ID
	check := func(name, token, id string, want int) {
		t.Helper()
		if r := s.do(t, http.MethodGet, "/api/v1/statuses/"+id, token, nil); r.status != want {
			t.Errorf("%s: %d %s, want %d", name, r.status, r.body, want)
		}
	}
	for _, c := range []struct {
		name, token, id string
		want            int
	}{
		{"the author, its followers-only status", alice, private, 200},
		{"a stranger, a followers-only status", bob, private, 404},
		{"no token, a followers-only status", "", private, 404},
		{"no token, a public status", "", public, 200},
		{"a stranger, a remote followers-only status", bob, carolsPrivate, 404},
		{"an unknown id", bob, "no-such-status", 404},
	} {
		check(c.name, c.token, c.id, c.want)
	}
	s.stFollow(t, stBobURI, stAliceURI)
	s.stFollow(t, stBobURI, stCarolURI)
	check("a follower, a followers-only status", bob, private, 200)
	check("a follower, a remote followers-only status", bob, carolsPrivate, 200)
	// A block either way hides every status.
	b, _ := domain.NewActorBlock(stAliceURI, stBobURI, domain.BlockKindBlock, "", s.clock.Now())
	if _, err := s.blocks.AddBlock(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	check("blocked by the author, a public status", bob, public, 404)
	check("blocked by the author, a followers-only status", bob, private, 404)
	if r := s.do(t, http.MethodPost, "/api/v1/statuses/"+public+"/favourite", bob, nil); r.status != http.StatusNotFound {
		t.Errorf("favourite of a status of a blocker: %d %s", r.status, r.body)
	}
}

// A remote post reads as a status with its author's remote account and
// all it carries, and can be replied to.
func TestRemoteStatus(t *testing.T) {
	t.Parallel()
	s := setup(t)
	bob := s.login(t, "bob", "bob", "read write")
	focal := [2]float64{0.5, -0.25}
	p := s.stRemote(t, "02", domain.VisibilityPublic, domain.Extras{Summary: "spoilers", Sensitive: true, Language: "de", URL: "https://remote.example/@carol/2",
		Attachments: []domain.Attachment{{Kind: domain.MediaImage, MediaType: "image/png", URL: "https://remote.example/media/1.png", Name: "a cat", Width: 640, Height: 480, Focal: &focal}},
		Hashtags:    []string{"cats"}, Emojis: []domain.Emoji{{Shortcode: "blobcat", IconURL: "https://remote.example/emoji/blobcat.png"}},
		Poll: &domain.Poll{Options: []domain.PollOption{{Name: "yes", Votes: 3}, {Name: "no", Votes: 1}}, Voters: 4, EndTime: s.clock.Now().Add(-time.Hour)}})
	st := s.do(t, http.MethodGet, "/api/v1/statuses/"+p.ID, bob, nil).object(t)
	acct := st["account"].(map[string]any)
	if st["id"] != p.ID || st["uri"] != p.ObjectURI || st["url"] != "https://remote.example/@carol/2" || acct["acct"] != "carol@remote.example" {
		t.Fatalf("remote status %v", st)
	}
	if st["spoiler_text"] != "spoilers" || st["sensitive"] != true || st["language"] != "de" {
		t.Fatalf("content warning, language: %v", st)
	}
	media := st["media_attachments"].([]any)
	m0 := media[0].(map[string]any)
	meta := m0["meta"].(map[string]any)
	if len(media) != 1 || m0["type"] != "image" || m0["url"] != "https://remote.example/media/1.png" || m0["description"] != "a cat" ||
		meta["original"].(map[string]any)["width"] != float64(640) || meta["focus"].(map[string]any)["y"] != -0.25 {
		t.Fatalf("media %v", media)
	}
	if e := st["emojis"].([]any); len(e) != 1 || e[0].(map[string]any)["shortcode"] != "blobcat" {
		t.Fatalf("emojis %v", e)
	}
	poll := st["poll"].(map[string]any)
	if poll["expired"] != true || poll["votes_count"] != float64(4) || poll["voters_count"] != float64(4) {
		t.Fatalf("poll %v", poll)
	}
	reply := s.postStatus(t, bob, url.Values{"status": {"@carol@remote.example agreed"}, "in_reply_to_id": {p.ID}})
	if reply["in_reply_to_id"] != p.ID || reply["in_reply_to_account_id"] != acct["id"] {
		t.Fatalf("reply %v", reply)
	}
	if r := s.do(t, http.MethodPost, "/api/v1/statuses", bob, url.Values{"status": {"x"}, "in_reply_to_id": {"no-such-status"}}); r.status != http.StatusNotFound {
		t.Fatalf("a reply to no status: %d %s", r.status, r.body)
	}
}

// Favourite and reblog, and their undos, say so in the status and send
// their activities to a remote author.
func TestFavouriteAndReblog(t *testing.T) {
	t.Parallel()
	s := setup(t)
	bob := s.login(t, "bob", "bob", "read write")
	p := s.stRemote(t, "03", domain.VisibilityPublic, domain.Extras{})
	path := "/api/v1/statuses/" + p.ID
	for _, c := range []struct {
		action              string
		favourited, reblogs bool
		favourites          float64
	}{
		{"favourite", true, false, 1},
		{"favourite", true, false, 1}, // again: nothing changes
		{"reblog", true, true, 1},
		{"unfavourite", false, true, 0},
		{"unreblog", false, false, 0},
		{"unreblog", false, false, 0},
	} {
		r := s.do(t, http.MethodPost, path+"/"+c.action, bob, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.action, r.status, r.body)
		}
		st := r.object(t)
		if c.action == "reblog" {
			inner, _ := st["reblog"].(map[string]any)
			if inner == nil || inner["id"] != p.ID || st["account"].(map[string]any)["username"] != "bob" || st["id"] == p.ID {
				t.Fatalf("reblog %v", st)
			}
			st = inner
		}
		if st["favourited"] != c.favourited || st["reblogged"] != c.reblogs || st["favourites_count"] != c.favourites {
			t.Fatalf("after %s: favourited %v reblogged %v favourites %v", c.action, st["favourited"], st["reblogged"], st["favourites_count"])
		}
		got := s.do(t, http.MethodGet, path, bob, nil).object(t)
		if got["favourited"] != c.favourited || got["reblogged"] != c.reblogs {
			t.Fatalf("read after %s: %v", c.action, got)
		}
	}
	// The Like, the Announce and their Undos went to carol's inbox.
	jobs, err := s.jobs.List(context.Background(), ports.JobFilter{Host: "remote.example"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, j := range jobs {
		if j.Inbox == stCarolURI+"/inbox" {
			if !strings.Contains(string(j.Payload), `"object":"`+p.ObjectURI+`"`) && !strings.Contains(string(j.Payload), `"object":{`) {
				t.Errorf("a job to carol not of her note: %s", j.Payload)
			}
			for _, k := range []string{`"type":"Like"`, `"type":"Announce"`, `"type":"Undo"`} {
				if strings.Contains(string(j.Payload), k) {
					kinds[k]++
				}
			}
		}
	}
	if kinds[`"type":"Like"`] != 2 || kinds[`"type":"Announce"`] != 2 || kinds[`"type":"Undo"`] != 2 {
		t.Fatalf("to carol: %v (a Like and an Announce, each once alone and once in its Undo)", kinds)
	}
	private := s.stRemote(t, "04", domain.VisibilityFollowers, domain.Extras{})
	s.stFollow(t, stBobURI, stCarolURI)
	if r := s.do(t, http.MethodPost, "/api/v1/statuses/"+private.ID+"/reblog", bob, nil); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("reblog of a followers-only status: %d %s", r.status, r.body)
	}
	read := s.login(t, "bob", "bob", "read")
	if r := s.do(t, http.MethodPost, path+"/favourite", read, nil); r.status != http.StatusForbidden {
		t.Fatalf("favourite with a read token: %d %s", r.status, r.body)
	}
}

// The home timeline has the persona's own posts and boosts and those of
// whom it follows, newest first, paged by max_id and min_id with Link
// headers; the public and hashtag timelines have public posts.
func TestTimelines(t *testing.T) {
	t.Parallel()
	s := setup(t)
	bob, alice := s.login(t, "bob", "bob", "read write"), s.login(t, "alice", "alice", "read write")
	own := s.postStatus(t, bob, url.Values{"status": {"mine #news"}})["id"].(string)
	c1 := s.stRemote(t, "05", domain.VisibilityPublic, domain.Extras{Hashtags: []string{"news"}}).ID
	hidden := s.postStatus(t, alice, url.Values{"status": {"alice, not followed"}})["id"].(string)
	c2 := s.stRemote(t, "06", domain.VisibilityFollowers, domain.Extras{}).ID
	s.stFollow(t, stBobURI, stCarolURI)
	boost := s.do(t, http.MethodPost, "/api/v1/statuses/"+hidden+"/reblog", bob, nil).object(t)["id"].(string)
	s.clock.Advance(time.Minute)

	ids := func(r response) []string {
		t.Helper()
		if r.status != http.StatusOK {
			t.Fatalf("timeline: %d %s", r.status, r.body)
		}
		var out []string
		for _, st := range r.list(t) {
			out = append(out, st["id"].(string))
		}
		return out
	}
	same := func(what string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	// The boost is the newest; it wraps alice's post.
	same("home", ids(s.do(t, http.MethodGet, "/api/v1/timelines/home", bob, nil)), boost, c2, c1, own)
	first := s.do(t, http.MethodGet, "/api/v1/timelines/home?limit=2", bob, nil)
	same("home, a page of 2", ids(first), boost, c2)
	next, prev := stLinks(t, first.header.Get("Link"))
	same("home, the next page", ids(s.do(t, http.MethodGet, next, bob, nil)), c1, own)
	same("home, the previous page", ids(s.do(t, http.MethodGet, prev, bob, nil)))
	same("home, since c1", ids(s.do(t, http.MethodGet, "/api/v1/timelines/home?since_id="+c1, bob, nil)), boost, c2)
	same("home, 1 since own", ids(s.do(t, http.MethodGet, "/api/v1/timelines/home?limit=1&since_id="+own, bob, nil)), boost)
	same("home, 1 after own", ids(s.do(t, http.MethodGet, "/api/v1/timelines/home?limit=1&min_id="+own, bob, nil)), c1)
	same("home, 2 after own", ids(s.do(t, http.MethodGet, "/api/v1/timelines/home?limit=2&min_id="+own, bob, nil)), c2, c1)
	same("alice's home", ids(s.do(t, http.MethodGet, "/api/v1/timelines/home", alice, nil)), hidden)

	same("public", ids(s.do(t, http.MethodGet, "/api/v1/timelines/public", "", nil)), hidden, c1, own)
	same("public, local", ids(s.do(t, http.MethodGet, "/api/v1/timelines/public?local=true", "", nil)), hidden, own)
	same("public, remote", ids(s.do(t, http.MethodGet, "/api/v1/timelines/public?remote=true", bob, nil)), c1)
	same("tag", ids(s.do(t, http.MethodGet, "/api/v1/timelines/tag/News", "", nil)), c1, own)
	same("tag, local", ids(s.do(t, http.MethodGet, "/api/v1/timelines/tag/news?local=1", "", nil)), own)

	// Bob mutes carol: her posts leave his home timeline.
	m, _ := domain.NewActorBlock(stBobURI, stCarolURI, domain.BlockKindMute, "", s.clock.Now())
	if _, err := s.blocks.AddBlock(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	same("home, carol muted", ids(s.do(t, http.MethodGet, "/api/v1/timelines/home", bob, nil)), boost, own)
	writeOnly := s.login(t, "bob", "bob", "write")
	for _, path := range []string{"/api/v1/timelines/home", "/api/v1/timelines/public", "/api/v1/statuses/" + own, "/api/v1/statuses/" + own + "/context"} {
		if r := s.do(t, http.MethodGet, path, writeOnly, nil); r.status != http.StatusForbidden {
			t.Errorf("%s with a write-only token: %d %s", path, r.status, r.body)
		}
	}
	if r := s.do(t, http.MethodGet, "/api/v1/timelines/home", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("home without a token: %d", r.status)
	}
}

// stLinks reads a Link header's next and prev paths.
func stLinks(t *testing.T, h string) (next, prev string) {
	t.Helper()
	for _, part := range strings.Split(h, ",") {
		part = strings.TrimSpace(part)
		u, rel, ok := strings.Cut(part, ">; rel=")
		if !ok {
			t.Fatalf("Link %q", h)
		}
		parsed, err := url.Parse(strings.TrimPrefix(u, "<"))
		if err != nil {
			t.Fatal(err)
		}
		switch strings.Trim(rel, `"`) {
		case "next":
			next = parsed.RequestURI()
		case "prev":
			prev = parsed.RequestURI()
		}
	}
	if next == "" || prev == "" {
		t.Fatalf("Link %q lacks next or prev", h)
	}
	return next, prev
}

// A status's context is its thread as the viewer may see it; an edit
// changes the text only; a poll is read and voted in by its id; uploads
// are refused, saying why.
func TestContextEditPollsMedia(t *testing.T) {
	t.Parallel()
	s := setup(t)
	bob, alice := s.login(t, "bob", "bob", "read write"), s.login(t, "alice", "alice", "read write")
	root := s.stRemote(t, "07", domain.VisibilityPublic, domain.Extras{})
	first := s.postStatus(t, bob, url.Values{"status": {"first"}, "in_reply_to_id": {root.ID}})["id"].(string)
	second := s.postStatus(t, alice, url.Values{"status": {"second"}, "in_reply_to_id": {first}})["id"].(string)
	private := s.postStatus(t, alice, url.Values{"status": {"private"}, "in_reply_to_id": {first}, "visibility": {"private"}})["id"].(string)
	third := s.postStatus(t, bob, url.Values{"status": {"third"}, "in_reply_to_id": {root.ID}})["id"].(string)
	ids := func(l []any) (out []string) {
		for _, st := range l {
			out = append(out, st.(map[string]any)["id"].(string))
		}
		return out
	}
	for _, c := range []struct {
		name, token, id        string
		ancestors, descendants string
	}{
		{"bob, the root", bob, root.ID, "", strings.Join([]string{first, second, third}, " ")},
		{"alice, the root", alice, root.ID, "", strings.Join([]string{first, second, private, third}, " ")},
		{"bob, the second", bob, second, root.ID + " " + first, ""},
		{"no token, the first", "", first, root.ID, second},
	} {
		r := s.do(t, http.MethodGet, "/api/v1/statuses/"+c.id+"/context", c.token, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		o := r.object(t)
		if a, d := strings.Join(ids(o["ancestors"].([]any)), " "), strings.Join(ids(o["descendants"].([]any)), " "); a != c.ancestors || d != c.descendants {
			t.Errorf("%s: ancestors %q descendants %q, want %q %q", c.name, a, d, c.ancestors, c.descendants)
		}
	}

	// Edit.
	r := s.do(t, http.MethodPut, "/api/v1/statuses/"+first, bob, url.Values{"status": {"first, edited"}, "spoiler_text": {""}, "sensitive": {"false"}})
	if r.status != http.StatusOK || !strings.Contains(r.object(t)["content"].(string), "first, edited") || r.object(t)["edited_at"] == nil {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		name  string
		token string
		form  url.Values
		want  int
	}{
		{"a content warning", bob, url.Values{"status": {"x"}, "spoiler_text": {"cw"}}, http.StatusUnprocessableEntity},
		{"a poll", bob, url.Values{"status": {"x"}, "poll[options][]": {"a", "b"}, "poll[expires_in]": {"600"}}, http.StatusUnprocessableEntity},
		{"someone else's", alice, url.Values{"status": {"x"}}, http.StatusNotFound},
	} {
		if r := s.do(t, http.MethodPut, "/api/v1/statuses/"+first, c.token, c.form); r.status != c.want {
			t.Errorf("edit, %s: %d %s", c.name, r.status, r.body)
		}
	}

	// Polls.
	poll := s.postStatus(t, alice, url.Values{"status": {"tea?"}, "poll[options][]": {"yes", "no"}, "poll[expires_in]": {"600"}})["id"].(string)
	if r := s.do(t, http.MethodGet, "/api/v1/polls/"+poll, "", nil); r.status != http.StatusOK || r.object(t)["voted"] != nil {
		t.Fatalf("poll, no token: %d %s", r.status, r.body)
	}
	r = s.do(t, http.MethodPost, "/api/v1/polls/"+poll+"/votes", bob, url.Values{"choices[]": {"1"}})
	if r.status != http.StatusOK {
		t.Fatalf("vote: %d %s", r.status, r.body)
	}
	voted := r.object(t)
	if voted["voted"] != true || voted["votes_count"] != float64(1) || voted["own_votes"].([]any)[0] != float64(1) {
		t.Fatalf("after the vote: %v", voted)
	}
	for _, c := range []struct {
		name, id string
		choices  []string
		want     int
	}{
		{"again, a single-choice poll", poll, []string{"0"}, http.StatusUnprocessableEntity},
		{"no option of it", poll, []string{"7"}, http.StatusUnprocessableEntity},
		{"no choices", poll, nil, http.StatusUnprocessableEntity},
		{"a status without a poll", first, []string{"0"}, http.StatusUnprocessableEntity},
		{"no status", "no-such-status", []string{"0"}, http.StatusNotFound},
	} {
		if r := s.do(t, http.MethodPost, "/api/v1/polls/"+c.id+"/votes", bob, url.Values{"choices[]": c.choices}); r.status != c.want {
			t.Errorf("vote, %s: %d %s", c.name, r.status, r.body)
		}
	}
	if r := s.do(t, http.MethodGet, "/api/v1/polls/"+first, bob, nil); r.status != http.StatusNotFound {
		t.Errorf("the poll of a status without one: %d %s", r.status, r.body)
	}
	if r := s.do(t, http.MethodPost, "/api/v2/media", bob, url.Values{"description": {"a cat"}}); r.status != http.StatusUnprocessableEntity ||
		!strings.Contains(string(r.body), "does not store uploads") {
		t.Errorf("upload: %d %s", r.status, r.body)
	}
}
