package application_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func ptr(s string) *string { return &s }

// TestUpdateProfile: a persona's display name and bio change within
// Mastodon's limits (30 and 500 characters; longer is ErrInvalidInput
// naming the limit, nothing written); the bio is kept as written and shown
// as sanitized HTML, so hostile markup is text, never markup; a display
// name loses its markup; a nil field stays, an empty one clears.
func TestUpdateProfile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		display, note     *string
		wantErr           string // in the error; ErrInvalidInput then
		wantDisplay       string // as stored
		wantNote          string // as stored
		wantSummary       string // the actor document's summary
		wantSummaryAbsent []string
	}{
		{name: "both", display: ptr("  Alice Liddell "), note: ptr("Down the\nrabbit hole.\r\n\r\nhttps://example.com/x"),
			wantDisplay: "Alice Liddell", wantNote: "Down the\nrabbit hole.\n\nhttps://example.com/x",
			wantSummary: `<p>Down the<br>rabbit hole.</p><p><a href="https://example.com/x" rel="nofollow noreferrer noopener" target="_blank">https://example.com/x</a></p>`},
		{name: "hostile bio is text", note: ptr(`<script>alert(1)</script><img src=x onerror=alert(2)> & "q"`),
			wantNote:          `<script>alert(1)</script><img src=x onerror=alert(2)> & "q"`,
			wantSummary:       `<p>&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &amp; &#34;q&#34;</p>`,
			wantSummaryAbsent: []string{"<script", "<img"}},
		{name: "hostile display name loses its markup", display: ptr(`<script>alert(1)</script>Eve <b>bold</b>`), wantDisplay: "Eve bold"},
		{name: "display name on one line", display: ptr("two\nlines\x00"), wantDisplay: "two lines"},
		{name: "display name at the limit", display: ptr(strings.Repeat("é", 30)), wantDisplay: strings.Repeat("é", 30)},
		{name: "display name over the limit", display: ptr(strings.Repeat("é", 31)), wantErr: "limit is 30"},
		{name: "bio at the limit", note: ptr(strings.Repeat("✨", 500)), wantNote: strings.Repeat("✨", 500), wantSummary: "<p>" + strings.Repeat("✨", 500) + "</p>"},
		{name: "bio over the limit", note: ptr(strings.Repeat("a", 501)), wantErr: "limit is 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			ctx := t.Context()
			res, err := b.fed.UpdateProfile.Handle(ctx, application.UpdateProfile{UserID: b.userID, Persona: "alice", DisplayName: tc.display, Note: tc.note})
			stored, _ := b.accounts.AvatarByName(ctx, "alice")
			if tc.wantErr != "" {
				if !errors.Is(err, domain.ErrInvalidInput) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want ErrInvalidInput naming %q", err, tc.wantErr)
				}
				if stored.DisplayName != "" || stored.Note != "" || len(b.allJobs()) != 0 {
					t.Fatalf("a refused change was written or sent: %+v", stored)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || stored.DisplayName != tc.wantDisplay || stored.Note != tc.wantNote {
				t.Fatalf("stored %q %q (changed %v), want %q %q", stored.DisplayName, stored.Note, res.Changed, tc.wantDisplay, tc.wantNote)
			}
			a, err := b.fed.Actors.ByURI(ctx, alice)
			if err != nil {
				t.Fatal(err)
			}
			doc := b.app.URLs.Document(a)
			wantName := tc.wantDisplay
			if wantName == "" {
				wantName = "alice"
			}
			if doc.Name != wantName || doc.Summary != tc.wantSummary {
				t.Fatalf("document name %q summary %q, want %q %q", doc.Name, doc.Summary, wantName, tc.wantSummary)
			}
			for _, bad := range tc.wantSummaryAbsent {
				if strings.Contains(doc.Summary, bad) {
					t.Fatalf("summary carries %q: %s", bad, doc.Summary)
				}
			}
		})
	}
}

// TestUpdateProfileTellsFollowers: a change sends one Update{Person}
// with the new name and summary to the followers; the same profile again
// writes and sends nothing; a nil field keeps its value, an empty one
// clears it; another account's persona is ErrForbidden.
func TestUpdateProfileTellsFollowers(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	ctx := t.Context()
	mustDeliver(t, b, bob, follow(bob+"/follow/1", bob, alice))
	res, err := b.fed.UpdateProfile.Handle(ctx, application.UpdateProfile{UserID: b.userID, Persona: "alice", DisplayName: ptr("Alice"), Note: ptr("a <b>bio</b>")})
	if err != nil || !res.Changed || res.Queued != 1 {
		t.Fatalf("update: %+v %v", res, err)
	}
	up := jobsOf(t, b, "Update")
	obj, _ := up[shared]["object"].(map[string]any)
	if len(up) != 1 || obj["type"] != "Person" || obj["name"] != "Alice" || obj["summary"] != "<p>a &lt;b&gt;bio&lt;/b&gt;</p>" {
		t.Fatalf("Update{Person} of the profile: %v", up)
	}
	before := len(b.allJobs())
	if again, err := b.fed.UpdateProfile.Handle(ctx, application.UpdateProfile{UserID: b.userID, Persona: "alice", DisplayName: ptr(" Alice "), Note: ptr("a <b>bio</b>")}); err != nil || again.Changed || again.Queued != 0 {
		t.Fatalf("the same profile again: %+v %v", again, err)
	}
	if len(b.allJobs()) != before {
		t.Fatal("the same profile again sent something")
	}
	res, err = b.fed.UpdateProfile.Handle(ctx, application.UpdateProfile{UserID: b.userID, Persona: "alice", Note: ptr("")})
	if err != nil || !res.Changed || res.Avatar.DisplayName != "Alice" || res.Avatar.Note != "" {
		t.Fatalf("clearing the bio alone: %+v %v", res, err)
	}
	if a, _ := b.fed.Actors.ByURI(ctx, alice); a.Summary != "" || b.app.URLs.Document(a).Name != "Alice" {
		t.Fatalf("after clearing the bio: %+v", a)
	}
	if _, err := b.fed.UpdateProfile.Handle(ctx, application.UpdateProfile{UserID: "someone-else", Persona: "alice", Note: ptr("mine")}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("another account's persona: %v, want ErrForbidden", err)
	}
	if _, err := b.fed.UpdateProfile.Handle(ctx, application.UpdateProfile{UserID: b.userID, Persona: "nobody", Note: ptr("x")}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("an unknown persona: %v, want ErrNotFound", err)
	}
}
