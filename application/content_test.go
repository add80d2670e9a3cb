package application_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// gtsPhoto is a note as GoToSocial sends a photo posted without a caption:
// an Image attachment with alt text, blurhash and focal point, a content
// warning, a hashtag, a custom emoji, its language and its page.
func gtsPhoto(id string, attachments string) string {
	return `{"@context":["https://www.w3.org/ns/activitystreams",{"blurhash":"toot:blurhash","toot":"http://joinmastodon.org/ns#"}],
"id":"` + id + `/activity","type":"Create","actor":"` + bob + `","to":["` + application.ASPublic + `"],
"object":{"id":"` + id + `","type":"Note","attributedTo":"` + bob + `","to":["` + application.ASPublic + `"],
 "summary":"cw: <b>cats</b>","sensitive":true,"contentMap":{"en":""},
 "url":[{"type":"Link","href":"javascript:alert(1)"},{"type":"Link","mediaType":"text/html","href":"https://remote.example/@bob/1"}],
 "attachment":` + attachments + `,
 "tag":[{"type":"Hashtag","href":"https://remote.example/tags/Cats","name":"#Cats"},
        {"type":"Hashtag","name":"#<script>"},
        {"type":"Emoji","id":"https://remote.example/emoji/1","name":":blobcat:","icon":{"type":"Image","mediaType":"image/png","url":"https://remote.example/e/blobcat.png"}},
        {"type":"Emoji","name":":evil<img>:","icon":{"url":"https://remote.example/e/x.png"}},
        {"type":"Emoji","name":":js:","icon":{"url":"javascript:alert(1)"}}]}}`
}

const photoAttachment = `[{"type":"Image","mediaType":"image/jpeg","url":"https://remote.example/media/1.jpg",
  "name":"a cat <script>alert(1)</script>asleep","blurhash":"LEHV6nWB2yk8pyo0adR*.7kCMdnj","width":640,"height":480,"focalPoint":[-0.5,0.5]},
 {"type":"Document","url":"javascript:alert(1)","name":"dropped"}]`

// A note with media and no text is stored (GoToSocial and Mastodon treat a
// 4xx as final: it used to be refused), with what it carries, its strings
// clean and its URLs http(s) only.
func TestInboxKeepsWhatANoteCarries(t *testing.T) {
	t.Parallel()
	b := setupFollowing(t)
	ctx := t.Context()
	const obj = "https://remote.example/users/bob/statuses/photo"
	if _, err := b.deliver("", bob, gtsPhoto(obj, photoAttachment)); err != nil {
		t.Fatalf("a photo without text: %v", err)
	}
	p, err := b.fed.Collections.PostsBy(ctx, bob, time.Time{}, 10)
	if err != nil || len(p) != 1 {
		t.Fatalf("posts: %+v %v", p, err)
	}
	e := p[0].Extras
	want := domain.Attachment{Kind: domain.MediaImage, MediaType: "image/jpeg", URL: "https://remote.example/media/1.jpg", Name: "a cat asleep",
		Blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", Width: 640, Height: 480, Focal: &[2]float64{-0.5, 0.5}}
	got := e.Attachments
	if len(got) != 1 || got[0].Focal == nil || *got[0].Focal != *want.Focal {
		t.Fatalf("attachments %+v, want only %+v", got, want)
	}
	got[0].Focal, want.Focal = nil, nil
	if got[0] != want {
		t.Fatalf("attachments %+v, want only %+v", e.Attachments, want)
	}
	if e.Summary != "cw: cats" || !e.Sensitive || e.Language != "en" || e.URL != "https://remote.example/@bob/1" {
		t.Fatalf("summary %q sensitive %v language %q url %q", e.Summary, e.Sensitive, e.Language, e.URL)
	}
	if !slices.Equal(e.Hashtags, []string{"cats"}) {
		t.Fatalf("hashtags %v", e.Hashtags)
	}
	if len(e.Emojis) != 1 || e.Emojis[0] != (domain.Emoji{Shortcode: "blobcat", IconURL: "https://remote.example/e/blobcat.png", MediaType: "image/png"}) {
		t.Fatalf("emojis %+v", e.Emojis)
	}
	tagged, err := b.fed.Collections.Tagged(ctx, "cats", time.Time{}, 10)
	if err != nil || len(tagged) != 1 || tagged[0].ObjectURI != obj {
		t.Fatalf("#cats: %+v %v", tagged, err)
	}
}

// A note carrying more than SPEC §12 keeps is stored without the excess,
// never refused for it.
func TestInboxKeepsANoteOverTheLimitsWithoutTheExcess(t *testing.T) {
	t.Parallel()
	b := setupFollowing(t)
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf(`{"type":"Image","url":"https://remote.example/m/%d.png","name":%q}`, i, strings.Repeat("é", 3000)))
	}
	const obj = "https://remote.example/users/bob/statuses/many"
	if _, err := b.deliver("", bob, gtsPhoto(obj, "["+strings.Join(many, ",")+"]")); err != nil {
		t.Fatalf("40 attachments: %v", err)
	}
	p, err := b.content.PostByObjectURI(t.Context(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Attachments) != domain.MaxAttachments || len([]rune(p.Attachments[0].Name)) != domain.MaxAltTextChars {
		t.Fatalf("%d attachments kept, the first's alt text %d characters", len(p.Attachments), len([]rune(p.Attachments[0].Name)))
	}
}

// A remote Question keeps its options and counts; its author's
// Update{Question} sets them, and a late one does not reopen it.
func TestInboxQuestionAndItsUpdates(t *testing.T) {
	t.Parallel()
	b := setupFollowing(t)
	ctx := t.Context()
	const obj = "https://remote.example/users/bob/statuses/q"
	opts := func(a, c int) string {
		return fmt.Sprintf(`[{"type":"Note","name":"tea","replies":{"type":"Collection","totalItems":%d}},{"type":"Note","name":"coffee","replies":{"totalItems":%d}}]`, a, c)
	}
	mustDeliver(t, b, bob, question(obj, opts(1, 0), `,"votersCount":1`))
	update := func(a, c int, extra string) {
		t.Helper()
		act := strings.Replace(question(obj, opts(a, c), extra), `"type":"Create"`, `"type":"Update"`, 1)
		act = strings.Replace(act, obj+"/activity", fmt.Sprintf("%s/update/%d%d", obj, a, c), 1)
		mustDeliver(t, b, bob, act)
	}
	poll := func() domain.Poll {
		t.Helper()
		p, err := b.content.PostByObjectURI(ctx, obj)
		if err != nil || p.Poll == nil {
			t.Fatalf("%+v %v", p, err)
		}
		return *p.Poll
	}
	if p := poll(); p.Multiple || len(p.Options) != 2 || p.Options[0] != (domain.PollOption{Name: "tea", Votes: 1}) || p.Voters != 1 {
		t.Fatalf("poll %+v", p)
	}
	update(3, 2, `,"votersCount":5`)
	if p := poll(); p.Options[0].Votes != 3 || p.Options[1].Votes != 2 || p.Voters != 5 || !p.Closed.IsZero() {
		t.Fatalf("after the Update: %+v", p)
	}
	update(4, 2, `,"votersCount":6,"closed":"2026-06-02T12:00:00Z"`)
	update(3, 2, `,"votersCount":5`) // late
	if p := poll(); p.Options[0].Votes != 4 || p.Voters != 6 || p.Closed.IsZero() {
		t.Fatalf("a late Update reopened the poll or changed its final counts: %+v", p)
	}
}

// publishPoll publishes alice's poll and returns its URI.
func publishPoll(t *testing.T, b *fedBundle, multiple bool) string {
	t.Helper()
	res, err := b.app.Publish.Handle(t.Context(), application.Publish{UserID: b.userID, As: "alice", Content: "which? #Drinks",
		Poll: &application.NewPoll{Options: []string{"tea", "coffee", "water"}, Multiple: multiple, Duration: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	return res.ObjectURI
}

// A poll written here goes out as a Question; remote votes count once per
// voter (and option), and its followers hear of the counts once per pass,
// then of its close once.
func TestLocalPollVotesAndUpdates(t *testing.T) {
	t.Parallel()
	b := setupFollowed(t)
	ctx := t.Context()
	uri := publishPoll(t, b, false)
	created := lastPayload(t, b, "Create")
	obj := created["object"].(map[string]any)
	if obj["type"] != "Question" || obj["endTime"] != "2026-06-01T13:00:00Z" || len(obj["oneOf"].([]any)) != 3 || obj["anyOf"] != nil {
		t.Fatalf("the Create's object: %v", obj)
	}
	if ctxs, ok := created["@context"].([]any); !ok || len(ctxs) != 2 {
		t.Fatalf("the Create's context names no extension: %v", created["@context"])
	}
	if tags := fmt.Sprint(obj["tag"]); !strings.Contains(tags, "Hashtag") || !strings.Contains(tags, "https://local.example/tags/drinks") {
		t.Fatalf("tags %s", tags)
	}
	for i, tt := range []struct {
		voter string
		names []string
		dup   bool
	}{
		{bob, []string{"coffee"}, false},
		{bob, []string{"coffee"}, true}, // redelivered
		{bob, []string{"tea"}, true},    // a second choice in a single-choice poll
		{carol, []string{"tea", "coffee"}, false},
		{carol, []string{"nope"}, false},
	} {
		res, err := b.deliver("", tt.voter, vote(tt.voter, uri, tt.names...))
		if err != nil || (res.Duplicate != tt.dup && !res.Ignored) {
			t.Fatalf("vote %d: %+v %v", i, res, err)
		}
	}
	p, err := b.content.PostByObjectURI(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{p.Poll.Options[0].Votes, p.Poll.Options[1].Votes, p.Poll.Options[2].Votes}; !slices.Equal(got, []int{1, 1, 0}) || p.Poll.Voters != 2 {
		t.Fatalf("counts %v voters %d", got, p.Poll.Voters)
	}
	if _, err := b.content.PostByObjectURI(ctx, bob+"#votes/0"); err == nil {
		t.Fatal("a vote was stored as a post")
	}
	before := len(b.allJobs())
	sent, err := b.fed.Polls.Tick(ctx)
	if err != nil || sent != 1 {
		t.Fatalf("first pass: %d sent, %v", sent, err)
	}
	upd := lastPayload(t, b, "Update")
	uo := upd["object"].(map[string]any)
	if uo["type"] != "Question" || uo["votersCount"] != float64(2) || uo["closed"] != nil || len(b.allJobs()) == before {
		t.Fatalf("the Update: %v", upd)
	}
	if sent, _ := b.fed.Polls.Tick(ctx); sent != 0 {
		t.Fatalf("a pass without new votes sent %d", sent)
	}
	b.clock.Advance(2 * time.Hour)
	if res, _ := b.deliver("", dave, vote(dave, uri, "water")); !res.Ignored {
		t.Fatalf("a vote after the end: %+v", res)
	}
	if sent, err := b.fed.Polls.Tick(ctx); err != nil || sent != 1 {
		t.Fatalf("closing pass: %d sent, %v", sent, err)
	}
	closed := lastPayload(t, b, "Update")["object"].(map[string]any)
	if closed["closed"] == nil || closed["votersCount"] != float64(2) {
		t.Fatalf("the close: %v", closed)
	}
	if sent, _ := b.fed.Polls.Tick(ctx); sent != 0 {
		t.Fatalf("a closed poll told again: %d", sent)
	}
}

// A multiple-choice vote may come as one Create with a Note per option
// (GoToSocial's); each option counts once.
func TestMultipleChoiceVoteInOneCreate(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	uri := publishPoll(t, b, true)
	mustDeliver(t, b, bob, vote(bob, uri, "tea", "water", "tea"))
	p, _ := b.content.PostByObjectURI(t.Context(), uri)
	if got := []int{p.Poll.Options[0].Votes, p.Poll.Options[1].Votes, p.Poll.Options[2].Votes}; !slices.Equal(got, []int{1, 0, 1}) || p.Poll.Voters != 1 {
		t.Fatalf("counts %v voters %d", got, p.Poll.Voters)
	}
}

// lastPayload is the payload of the last job of an activity type.
func lastPayload(t *testing.T, b *fedBundle, typ string) map[string]any {
	t.Helper()
	var last map[string]any
	for _, j := range b.allJobs() {
		if p := payload(t, j); p["type"] == typ {
			last = p
		}
	}
	if last == nil {
		t.Fatalf("no %s sent", typ)
	}
	return last
}

// A persona votes in a remote poll: a Create{Note} per option, without
// content, to the poll's author; a second vote sends nothing.
func TestPersonaVotesInARemotePoll(t *testing.T) {
	t.Parallel()
	b := setupFollowing(t)
	ctx := t.Context()
	const obj = "https://remote.example/users/bob/statuses/q"
	mustDeliver(t, b, bob, question(obj, `[{"type":"Note","name":"tea"},{"type":"Note","name":"coffee"}]`, ""))
	res, err := b.fed.Vote.Handle(ctx, application.Vote{UserID: b.userID, As: "alice", Poll: obj, Indexes: []int{1}})
	if err != nil || !res.Created || res.Queued != 1 || !slices.Equal(res.Choices, []string{"coffee"}) {
		t.Fatalf("vote: %+v %v", res, err)
	}
	c := lastPayload(t, b, "Create")
	n := c["object"].(map[string]any)
	if n["name"] != "coffee" || n["inReplyTo"] != obj || n["attributedTo"] != alice || n["content"] != nil {
		t.Fatalf("the vote: %v", c)
	}
	again, err := b.fed.Vote.Handle(ctx, application.Vote{UserID: b.userID, As: "alice", Poll: obj, Choices: []string{"coffee"}})
	if err != nil || again.Created || again.Queued != 0 {
		t.Fatalf("a second vote: %+v %v", again, err)
	}
	for _, bad := range []application.Vote{
		{Poll: obj, Choices: []string{"tea", "coffee"}}, // single choice
		{Poll: obj, Choices: []string{"milk"}},
		{Poll: obj, Indexes: []int{5}},
	} {
		bad.UserID, bad.As = b.userID, "alice"
		if _, err := b.fed.Vote.Handle(ctx, bad); !errors.Is(err, domain.ErrInvalidInput) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
}

// What a post written here carries goes out in its Create as Mastodon
// writes it; what breaks a limit of SPEC §12 is refused, naming it.
func TestPublishCarriesExtras(t *testing.T) {
	t.Parallel()
	b := setupFollowed(t)
	ctx := t.Context()
	res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Summary: "food", Sensitive: true, Language: "de",
		Media: []domain.Attachment{{URL: "https://app.example/m/1.png", MediaType: "image/png", Name: "ein Teller", Focal: &[2]float64{0, 1}}}})
	if err != nil {
		t.Fatalf("media without text: %v", err)
	}
	obj := lastPayload(t, b, "Create")["object"].(map[string]any)
	att := obj["attachment"].([]any)[0].(map[string]any)
	if obj["summary"] != "food" || obj["sensitive"] != true || obj["contentMap"] == nil || att["type"] != "Image" || att["name"] != "ein Teller" ||
		fmt.Sprint(att["focalPoint"]) != "[0 1]" {
		t.Fatalf("the note: %v", obj)
	}
	p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
	if err != nil || p.Language != "de" || len(p.Attachments) != 1 {
		t.Fatalf("stored %+v %v", p, err)
	}
	tooMany := make([]domain.Attachment, domain.MaxAttachments+1)
	for i := range tooMany {
		tooMany[i] = domain.Attachment{URL: "https://app.example/m.png"}
	}
	for name, cmd := range map[string]application.Publish{
		"17 media":          {Content: "x", Media: tooMany},
		"long alt text":     {Content: "x", Media: []domain.Attachment{{URL: "https://app.example/m.png", Name: strings.Repeat("a", domain.MaxAltTextChars+1)}}},
		"javascript: media": {Content: "x", Media: []domain.Attachment{{URL: "javascript:alert(1)"}}},
		"bad language":      {Content: "x", Language: "english!"},
		"one option":        {Content: "x", Poll: &application.NewPoll{Options: []string{"a"}, Duration: time.Hour}},
		"short poll":        {Content: "x", Poll: &application.NewPoll{Options: []string{"a", "b"}, Duration: time.Second}},
		"direct poll":       {Content: "x", Visibility: domain.VisibilityDirect, To: []string{bob}, Poll: &application.NewPoll{Options: []string{"a", "b"}, Duration: time.Hour}},
		"nothing":           {},
	} {
		cmd.UserID, cmd.As = b.userID, "alice"
		if _, err := b.app.Publish.Handle(ctx, cmd); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A hashtag written in a post's text is linked and tagged; an edit
// retags the post.
func TestPublishedHashtags(t *testing.T) {
	t.Parallel()
	b := setupFollowed(t)
	ctx := t.Context()
	res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "#Go and #café, not https://x.example/#frag or #123"})
	p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
	if err != nil || !slices.Equal(p.Hashtags, []string{"go", "café"}) {
		t.Fatalf("hashtags %v %v", p.Hashtags, err)
	}
	if !strings.Contains(p.Content, `<a href="https://local.example/tags/go" class="mention hashtag" rel="nofollow noreferrer noopener" target="_blank">#<span>Go</span></a>`) {
		t.Fatalf("content %s", p.Content)
	}
	if _, err := b.fed.OwnPosts.Edit(ctx, application.EditPost{UserID: b.userID, ID: res.ID, Content: "now #tea"}); err != nil {
		t.Fatal(err)
	}
	for tag, n := range map[string]int{"go": 0, "tea": 1} {
		if got, _ := b.fed.Collections.Tagged(ctx, tag, time.Time{}, 10); len(got) != n {
			t.Fatalf("#%s lists %d after the edit", tag, len(got))
		}
	}
	upd := lastPayload(t, b, "Update")["object"].(map[string]any)
	if b, _ := json.Marshal(upd["tag"]); !strings.Contains(string(b), "#tea") {
		t.Fatalf("the Update's tags: %s", b)
	}
}
