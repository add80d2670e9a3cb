package application_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func TestPublishFansOutToFollowerInboxes(t *testing.T) {
	t.Parallel()
	b, s := newAppWithAccount(t, "alice")
	ctx := t.Context()
	alice := b.app.URLs.Persona("alice")
	// 2,500 followers on 90 servers, a third of them with a shared inbox.
	want := seedFollowers(t, b, alice, 2500)
	pending, _ := domain.NewFollower("https://p.example/users/p", alice, "", domain.FollowPending, t0)
	_, _ = b.follows.Add(ctx, pending)

	res := publish(t, b.app.Publish, application.Publish{UserID: s.User.ID, As: "alice", Content: "hello fediverse", Visibility: domain.VisibilityPublic})
	wantInboxes := len(want) // one shared inbox per sharing server (30), one per actor elsewhere (1,660)
	if res.Inboxes != wantInboxes || res.Queued != wantInboxes || res.AlreadyQueued != 0 {
		t.Fatalf("published %+v, want %d inboxes", res, wantInboxes)
	}
	c, _ := b.jobs.Counts(ctx)
	if c[domain.JobQueued] != wantInboxes {
		t.Fatalf("queued %d", c[domain.JobQueued])
	}
	p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
	if err != nil || p.AuthorURI != alice || !p.Local {
		t.Fatalf("post %+v %v", p, err)
	}
	jobs, _ := b.jobs.List(ctx, ports.JobFilter{Host: "r000.example"})
	if len(jobs) != 1 || jobs[0].Inbox != "https://r000.example/inbox" || jobs[0].ActivityID != res.ActivityID ||
		jobs[0].SenderID != s.Avatar.ID || jobs[0].KeyID != alice+"#main-key" || !strings.Contains(string(jobs[0].Payload), `"type":"Create"`) {
		t.Fatalf("shared-inbox job %+v", jobs)
	}
}

func TestPublishChecksOwnershipAndInput(t *testing.T) {
	t.Parallel()
	b, a := newAppWithAccount(t, "alice")
	ctx := t.Context()
	m := signUp(t, b.app.SignUp, "mallory")
	tests := []struct {
		name string
		cmd  application.Publish
		want error
	}{
		{"someone else's persona", application.Publish{UserID: m.User.ID, As: "alice", Content: "x"}, domain.ErrForbidden},
		{"unknown persona", application.Publish{UserID: a.User.ID, As: "nobody", Content: "x"}, domain.ErrInvalidInput},
		{"empty content", application.Publish{UserID: a.User.ID, As: "alice", Content: " "}, domain.ErrInvalidInput},
		{"bad visibility", application.Publish{UserID: a.User.ID, As: "alice", Content: "x", Visibility: "secret"}, domain.ErrInvalidInput},
		{"direct without recipients", application.Publish{UserID: a.User.ID, As: "alice", Content: "x", Visibility: domain.VisibilityDirect}, domain.ErrInvalidInput},
		{"direct to an unknown actor", application.Publish{UserID: a.User.ID, As: "alice", Content: "x", Visibility: domain.VisibilityDirect, To: []string{"https://r.example/users/ghost"}}, domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := b.app.Publish.Handle(ctx, tt.cmd); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if posts, _ := b.content.PostsByAuthor(ctx, b.app.URLs.Persona("alice"), t0.AddDate(1, 0, 0), 10); len(posts) != 0 {
		t.Fatalf("a refused publish stored %d posts", len(posts))
	}
}

func TestPublishDirect(t *testing.T) {
	t.Parallel()
	b, a := newAppWithAccount(t, "alice")
	ctx := t.Context()
	bob := domain.ForeignAvatar{ActorURI: "https://r.example/users/bob", Inbox: "https://r.example/users/bob/inbox", SharedInbox: "https://r.example/inbox"}
	_ = b.content.Upsert(ctx, bob)
	res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: a.User.ID, As: "alice", Content: "psst", Visibility: domain.VisibilityDirect, To: []string{bob.ActorURI}})
	if err != nil || res.Queued != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	dm, err := b.content.DmByObjectURI(ctx, res.ObjectURI)
	if err != nil || dm.ParticipantsKey != domain.ParticipantsKey([]string{bob.ActorURI, b.app.URLs.Persona("alice")}) {
		t.Fatalf("dm %+v %v", dm, err)
	}
	jobs, _ := b.jobs.List(ctx, ports.JobFilter{})
	if len(jobs) != 1 || jobs[0].Inbox != "https://r.example/inbox" || strings.Contains(string(jobs[0].Payload), "#Public") {
		t.Fatalf("dm job %+v", jobs)
	}
}

// A note carries a Mention per addressed remote actor, direct or public:
// GoToSocial drops a status that neither comes from someone its account
// follows nor mentions it, even after answering 202.
func TestPublishMentionsItsRecipients(t *testing.T) {
	t.Parallel()
	for _, vis := range []domain.Visibility{domain.VisibilityDirect, domain.VisibilityPublic} {
		t.Run(string(vis), func(t *testing.T) {
			t.Parallel()
			b, a := newAppWithAccount(t, "alice")
			ctx := t.Context()
			bob := domain.ForeignAvatar{ActorURI: "https://r.example/users/bob", Inbox: "https://r.example/users/bob/inbox", PreferredUsername: "bob", Host: "r.example"}
			cat := domain.ForeignAvatar{ActorURI: "https://s.example/users/cat", Inbox: "https://s.example/users/cat/inbox", PreferredUsername: "cat", Host: "s.example"}
			_ = b.content.Upsert(ctx, bob)
			_ = b.content.Upsert(ctx, cat)
			res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: a.User.ID, As: "alice", Content: "hi", Visibility: vis,
				To: []string{bob.ActorURI, cat.ActorURI, bob.ActorURI}})
			if err != nil || res.Queued != 2 {
				t.Fatalf("%+v %v", res, err)
			}
			jobs, _ := b.jobs.List(ctx, ports.JobFilter{})
			for _, j := range jobs {
				var act struct {
					Object struct {
						Tag []application.Tag `json:"tag"`
					} `json:"object"`
				}
				if err := json.Unmarshal(j.Payload, &act); err != nil {
					t.Fatal(err)
				}
				want := []application.Tag{{Type: "Mention", Href: bob.ActorURI, Name: "@bob@r.example"}, {Type: "Mention", Href: cat.ActorURI, Name: "@cat@s.example"}}
				if !slices.Equal(act.Object.Tag, want) {
					t.Fatalf("tags %+v, want %+v", act.Object.Tag, want)
				}
			}
		})
	}
}

// A post without "as" is the account's only persona's; an account with
// several must say which, and the refusal names them.
func TestPublishWithoutAsTakesTheOnlyPersona(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		personas []string // created besides alice, the sign-up's persona
		as       string
		want     string // the author persona, "" for a refusal
		wantErr  []string
	}{
		{name: "only persona", want: "alice"},
		{name: "only persona, blank as", as: "  ", want: "alice"},
		{name: "named", personas: []string{"zed"}, as: "zed", want: "zed"},
		{name: "several, none named", personas: []string{"zed"}, wantErr: []string{`"as" is missing`, "alice, zed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			ctx := t.Context()
			for _, n := range tt.personas {
				b.persona(n)
			}
			res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: tt.as, Content: "hello"})
			if tt.want == "" {
				if !errors.Is(err, domain.ErrInvalidInput) {
					t.Fatalf("err %v, want invalid input", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err %q does not say %q", err, w)
					}
				}
				if js := b.allJobs(); len(js) != 0 {
					t.Fatalf("a refused post queued %d jobs", len(js))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
			if err != nil || p.AuthorURI != "https://local.example/users/"+tt.want {
				t.Fatalf("post by %q (%v), want %s", p.AuthorURI, err, tt.want)
			}
		})
	}
}

// An account with no persona gets a clear refusal, never another
// account's persona.
func TestPublishWithoutAsNeedsAPersonaOfTheAccount(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	_, err := b.app.Publish.Handle(t.Context(), application.Publish{UserID: "someone-else", Content: "hello"})
	if !errors.Is(err, domain.ErrInvalidInput) || !strings.Contains(err.Error(), "no persona") {
		t.Fatalf("err %v, want invalid input saying the account has no persona", err)
	}
}

// A local post is written as plain text: Herald stores and sends its HTML
// rendering, markup in the text escaped, links and the @-mentions of the
// actors it addresses linked. Editing renders the new text the same way.
func TestPublishRendersPlainText(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.signer(bob)
	zed, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: b.userID, Name: "zed"})
	if err != nil {
		t.Fatal(err)
	}
	const rel = ` rel="nofollow noreferrer noopener" target="_blank"`
	bobLink := `<span class="h-card"><a href="` + bob + `" class="u-url mention"` + rel + `>@<span>bob</span></a></span>`
	zedLink := `<span class="h-card"><a href="` + local + `/users/zed" class="u-url mention"` + rel + `>@<span>zed</span></a></span>`
	sent := func(activity, object string) map[string]any {
		t.Helper()
		for _, j := range b.allJobs() {
			if m := payload(t, j); m["type"] == activity {
				if o, _ := m["object"].(map[string]any); o["id"] == object {
					return o
				}
			}
		}
		t.Fatalf("no %s of %s queued", activity, object)
		return nil
	}

	text := "hi @bob@remote.example and @zed <b>not bold</b>\n\nsee https://e.example/x.\n@carol@remote.example"
	want := `<p>hi ` + bobLink + ` and ` + zedLink + ` &lt;b&gt;not bold&lt;/b&gt;</p><p>see <a href="https://e.example/x"` + rel +
		`>https://e.example/x</a>.<br>@carol@remote.example</p>`
	res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: text,
		To: []string{bob, local + "/users/" + zed.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := b.content.PostByObjectURI(ctx, res.ObjectURI); err != nil || p.Content != want {
		t.Fatalf("stored %q %v\nwant %q", p.Content, err, want)
	}
	if got := sent("Create", res.ObjectURI)["content"]; got != want {
		t.Fatalf("sent %q", got)
	}

	edited, err := b.fed.OwnPosts.Edit(ctx, application.EditPost{UserID: b.userID, ID: res.ID, Content: "bye @bob@remote.example & @zed"})
	if err != nil {
		t.Fatal(err)
	}
	wantEdit := `<p>bye ` + bobLink + ` &amp; ` + zedLink + `</p>`
	if p, _ := b.content.PostByObjectURI(ctx, res.ObjectURI); p.Content != wantEdit || edited.Content != wantEdit {
		t.Fatalf("after the edit: stored %q, answered %q\nwant %q", p.Content, edited.Content, wantEdit)
	}
	if got := sent("Update", res.ObjectURI)["content"]; got != wantEdit {
		t.Fatalf("Update sent %q", got)
	}

	dm, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "@bob@remote.example <i>psst</i>",
		Visibility: domain.VisibilityDirect, To: []string{bob}})
	if err != nil {
		t.Fatal(err)
	}
	wantDm := `<p>` + bobLink + ` &lt;i&gt;psst&lt;/i&gt;</p>`
	if d, err := b.content.DmByObjectURI(ctx, dm.ObjectURI); err != nil || d.Content != wantDm {
		t.Fatalf("direct post stored %q %v", d.Content, err)
	}
	if got := sent("Create", dm.ObjectURI)["content"]; got != wantDm {
		t.Fatalf("direct post sent %q", got)
	}
}

// A post addressed to a local group is stored with the group and
// announced by the group, signed with its key, to the group's followers.
func TestPublishToALocalGroupIsAnnounced(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	for i, f := range []string{carol, dave} {
		mustDeliver(t, b, f, follow(fmt.Sprintf("%s/f/%d", f, i), f, club))
	}
	before := len(b.allJobs())
	res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "hello club", To: []string{club}})
	p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
	if err != nil || p.GroupURI != club {
		t.Fatalf("post %+v %v", p, err)
	}
	group, _ := b.fed.Actors.ByURI(ctx, club)
	inboxes := map[string]bool{}
	for _, j := range b.allJobs()[before:] {
		pl := payload(t, j)
		if pl["type"] != "Announce" || pl["actor"] != club || j.SenderID != group.ID {
			t.Fatalf("job %s from %s", j.Payload, j.SenderID)
		}
		inboxes[j.Inbox] = true
	}
	if len(inboxes) != 2 || !inboxes[shared] || !inboxes[dave+"/inbox"] {
		t.Fatalf("announced to %v", inboxes)
	}
	// A group of ours that does not exist is refused before anything is stored.
	_, err = b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "x", To: []string{local + "/groups/nope"}})
	if !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("err %v", err)
	}
}

// A reply to a remote note we hold carries inReplyTo, addresses and
// mentions the note's author and is delivered to it.
func TestPublishReplyToARemoteNote(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	b.signer(dave)
	b.fetcher.set(daveNote, remoteNoteDoc(daveNote, dave, "hi", application.ASPublic))
	if _, err := b.fed.Boost.Handle(ctx, application.Boost{UserID: b.userID, As: "alice", Object: daveNote}); err != nil {
		t.Fatal(err) // holds the note here
	}
	res := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "<p>a reply</p>", InReplyTo: daveNote})
	p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
	if err != nil || p.InReplyTo != daveNote {
		t.Fatalf("stored %+v %v", p, err)
	}
	var create map[string]any
	for _, j := range b.allJobs() {
		if m := payload(t, j); m["type"] == "Create" {
			if j.Inbox != dave+"/inbox" {
				t.Fatalf("create to %s", j.Inbox)
			}
			create = m
		}
	}
	n, _ := create["object"].(map[string]any)
	if n == nil || n["inReplyTo"] != daveNote || !strings.Contains(fmt.Sprint(n["cc"]), dave) || !strings.Contains(fmt.Sprint(n["tag"]), dave) {
		t.Fatalf("reply sent as %v", create)
	}
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "x", InReplyTo: "not a uri"}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("reply to a non-URI: %v", err)
	}
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: "alice", Content: "x", Visibility: domain.VisibilityDirect, To: []string{dave}, InReplyTo: daveNote}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("direct reply: %v", err)
	}
}
