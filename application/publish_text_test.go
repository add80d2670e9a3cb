package application_test

import (
	"context"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// A local post is written as plain text: Herald stores and sends its HTML
// rendering, markup in the text escaped, links and the @-mentions of the
// actors it addresses linked. Editing renders the new text the same way.
func TestPublishRendersPlainText(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := context.Background()
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
