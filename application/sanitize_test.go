package application_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// Hostile HTML and what the sanitizer leaves of it.
const (
	hostile   = `<p onclick="steal()">hi <script>alert(1)</script><a href="javascript:alert(2)">there</a><img src=x onerror=alert(3)></p>`
	sanitized = `<p>hi there</p>`
)

// noHostile fails when s holds anything of hostile the sanitizer removes.
func noHostile(t *testing.T, where, s string) {
	t.Helper()
	for _, bad := range []string{"<script", "onclick", "javascript:", "onerror", "<img"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s holds %q: %q", where, bad, s)
		}
	}
}

// Remote content is sanitized before it is stored, on every path that
// writes it: a public note, a direct note, an edit. The rows are read from
// the store underneath, not through the application.
func TestRemoteContentIsSanitizedOnArrival(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	stored := func(t *testing.T, b *fedBundle, obj string) string {
		t.Helper()
		if p, err := b.content.PostByObjectURI(ctx, obj); err == nil {
			return p.Content
		}
		dm, err := b.content.DmByObjectURI(ctx, obj)
		if err != nil {
			t.Fatalf("%s not stored: %v", obj, err)
		}
		return dm.Content
	}
	for _, tt := range []struct {
		name string
		to   []string
	}{{"public note", []string{application.ASPublic}}, {"direct note", []string{alice}}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFollowing(t)
			const obj = "https://remote.example/users/bob/statuses/x1"
			mustDeliver(t, b, bob, note(obj, bob, hostile, tt.to...))
			if got := stored(t, b, obj); got != sanitized {
				t.Fatalf("stored %q, want %q", got, sanitized)
			}
			edit := `{"type":"Update","actor":"` + bob + `","object":{"id":"` + obj + `","type":"Note","attributedTo":"` + bob +
				`","content":"<p>edited<script>alert(4)</script></p><iframe src=https://evil.example/></iframe>","updated":"2026-06-01T11:00:00Z"}}`
			mustDeliver(t, b, bob, edit)
			if got := stored(t, b, obj); got != "<p>edited</p>" {
				t.Fatalf("after the Update: %q", got)
			}
		})
	}
	// A note that was only a script is kept, empty, and answered as
	// accepted: a 4xx would be final for the sender, and the note exists.
	t.Run("only a script", func(t *testing.T) {
		t.Parallel()
		b := setupFollowing(t)
		const obj = "https://remote.example/users/bob/statuses/x2"
		if res, err := b.deliver("", bob, note(obj, bob, `<script>alert(1)</script>`, application.ASPublic)); err != nil || res.Ignored {
			t.Fatalf("%+v %v", res, err)
		}
		if got := stored(t, b, obj); got != "" {
			t.Fatalf("stored %q, want it empty", got)
		}
	})
}

// The Note a group announces carries the content as stored, not the
// sender's HTML.
func TestGroupAnnouncesTheSanitizedContent(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	mustDeliver(t, b, dave, follow(dave+"/f/1", dave, club))
	mustDeliver(t, b, bob, follow("https://remote.example/f/bob", bob, club))
	before := len(b.allJobs())
	const obj = "https://remote.example/users/bob/statuses/g1"
	mustDeliver(t, b, bob, note(obj, bob, hostile, application.ASPublic, club))
	announces := b.allJobs()[before:]
	if len(announces) == 0 {
		t.Fatal("nothing announced")
	}
	for _, j := range announces {
		pl := payload(t, j)
		o, _ := pl["object"].(map[string]any)
		if pl["type"] != "Announce" || o["content"] != sanitized {
			t.Fatalf("announce %s", j.Payload)
		}
	}
}

// Rows stored before Herald sanitized (written here straight into the
// store) come out sanitized whatever reads them: the client API's
// listings, the ActivityPub outbox of a persona and of a group, a note,
// mentions, direct threads.
func TestOldRowsAreSanitizedWhenRead(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	at := t0.Add(-time.Hour)
	put := func(p domain.Post, err error) domain.Post {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.content.CreatePost(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	remote := put(domain.NewRemotePost("old1", "https://remote.example/users/bob/statuses/old1", bob, hostile, domain.VisibilityPublic, at))
	mention, _ := domain.NewRemotePost("old2", "https://remote.example/users/bob/statuses/old2", bob, hostile, domain.VisibilityPublic, at)
	mention.Mentions = []string{alice}
	put(mention, nil)
	inGroup, _ := domain.NewRemotePost("old3", "https://remote.example/users/bob/statuses/old3", bob, hostile, domain.VisibilityPublic, at)
	inGroup.GroupURI = club
	put(inGroup, nil)
	own, _ := domain.NewPost("old4", alice+"/statuses/old4", alice, "x", domain.VisibilityPublic, at)
	own.Content, own.Local = hostile, true
	put(own, nil)
	dm, err := domain.NewRemoteDmPost("old5", "https://remote.example/users/bob/statuses/old5", bob, hostile, []string{alice}, at)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.content.CreateDm(ctx, dm); err != nil {
		t.Fatal(err)
	}

	var read []string // every content read, with where it was read
	feed, err := b.fed.Collections.PostsAndBoostsBy(ctx, bob, time.Time{}, 20)
	if err != nil || len(feed) != 3 {
		t.Fatalf("feed %d %v", len(feed), err)
	}
	for _, it := range feed {
		read = append(read, "GET /api/v1/posts: "+it.Post.Content)
	}
	mentions, err := b.fed.Mentions.Handle(ctx, application.Mentions{UserID: b.userID, As: "alice", Limit: 20})
	if err != nil || len(mentions) != 1 {
		t.Fatalf("mentions %d %v", len(mentions), err)
	}
	read = append(read, "GET /api/v1/mentions: "+mentions[0].Content)
	thread, err := b.fed.Direct.Handle(ctx, application.DirectThread{UserID: b.userID, As: "alice", With: []string{bob}, Limit: 20})
	if err != nil || len(thread) != 1 {
		t.Fatalf("thread %d %v", len(thread), err)
	}
	read = append(read, "GET /api/v1/direct: "+thread[0].Content)
	for _, uri := range []string{alice, club} {
		a, err := b.fed.Actors.ByURI(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		page, err := b.fed.Collections.Outbox(ctx, a, time.Time{})
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("outbox of %s: %d %v", uri, len(page.Items), err)
		}
		read = append(read, "outbox of "+uri+": "+page.Items[0].Object.(application.Note).Content)
	}
	n, err := b.fed.Collections.Note(ctx, own.ObjectURI)
	if err != nil {
		t.Fatal(err)
	}
	read = append(read, "note: "+n.Content)
	p, err := b.fed.Collections.PostsBy(ctx, bob, time.Time{}, 1)
	if err != nil || len(p) != 1 {
		t.Fatalf("posts by bob %d %v", len(p), err)
	}
	read = append(read, "posts by bob: "+p[0].Content)
	for _, r := range read {
		where, content, _ := strings.Cut(r, ": ")
		if content != sanitized {
			t.Errorf("%s: %q, want %q", where, content, sanitized)
		}
	}
	// The store underneath is left as it was: reading does not write.
	if raw, _ := b.content.PostByObjectURI(ctx, remote.ObjectURI); raw.Content != hostile {
		t.Errorf("the row changed: %q", raw.Content)
	}
}

// Without a sanitizer in its deps the application stores and shows no
// content at all, rather than serving it raw.
func TestNoSanitizerFailsClosed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := newApp(t, func(d *application.Deps) { d.HTML = nil })
	s := signUp(t, b.app.SignUp, "alice")
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: s.User.ID, As: "alice", Content: "hello"}); err == nil {
		t.Fatal("published without a sanitizer")
	}
	if posts, _ := b.content.PostsByAuthor(ctx, "https://local.example/users/alice", time.Time{}, 10); len(posts) != 0 {
		t.Fatalf("stored %+v", posts)
	}
	old, _ := domain.NewRemotePost("old1", "https://remote.example/users/bob/statuses/old1", bob, hostile, domain.VisibilityPublic, t0)
	if _, err := b.content.CreatePost(ctx, old); err != nil {
		t.Fatal(err)
	}
	fed := application.New(application.Deps{Posts: b.content, URLs: application.NewURLs("local.example")}).Federation
	if posts, err := fed.Collections.PostsBy(ctx, bob, time.Time{}, 10); err == nil {
		t.Fatalf("read without a sanitizer: %+v", posts)
	}
}
