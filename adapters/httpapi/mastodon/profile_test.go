package mastodon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// update_credentials changes the display name and bio (note): the
// account entity answers the display name, the note as HTML and
// source.note as written; over Mastodon's limits (30, 500) is 422 naming
// the limit, and nothing changes; a form and a JSON body alike.
func TestUpdateCredentialsProfile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		body        any
		status      int
		wantDisplay string
		wantNote    string // the entity's note, HTML
		wantSource  string // source.note, as written
		wantError   string
	}{
		{name: "display name and note", body: url.Values{"display_name": {"Alice A."}, "note": {"Hi!\nI post <b>things</b>."}},
			status: 200, wantDisplay: "Alice A.", wantNote: "<p>Hi!<br>I post &lt;b&gt;things&lt;/b&gt;.</p>", wantSource: "Hi!\nI post <b>things</b>."},
		{name: "JSON body", body: `{"display_name":"Alice J.","note":"from json"}`,
			status: 200, wantDisplay: "Alice J.", wantNote: "<p>from json</p>", wantSource: "from json"},
		{name: "hostile note", body: url.Values{"note": {`<script>alert(1)</script>`}},
			status: 200, wantDisplay: "alice", wantNote: "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>", wantSource: `<script>alert(1)</script>`},
		{name: "hostile display name", body: url.Values{"display_name": {`<img src=x onerror=alert(1)>Al`}},
			status: 200, wantDisplay: "Al"},
		{name: "display name too long", body: url.Values{"display_name": {strings.Repeat("a", 31)}},
			status: http.StatusUnprocessableEntity, wantError: "limit is 30"},
		{name: "note too long", body: url.Values{"note": {strings.Repeat("a", 501)}},
			status: http.StatusUnprocessableEntity, wantError: "limit is 500"},
		{name: "locked alone leaves the profile", body: url.Values{"locked": {"true"}},
			status: 200, wantDisplay: "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := setup(t)
			tok := s.login(t, "alice", "alice", "read write")
			r := s.do(t, http.MethodPatch, "/api/v1/accounts/update_credentials", tok, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.wantError != "" {
				if e, _ := r.object(t)["error"].(string); !strings.Contains(e, tc.wantError) {
					t.Fatalf("error %q, want it to name %q", e, tc.wantError)
				}
				if a, err := s.fed.Actors.ByURI(t.Context(), "https://local.example/users/alice"); err != nil || a.DisplayName != "" || a.Summary != "" {
					t.Fatalf("a refused update changed alice: %+v %v", a, err)
				}
				return
			}
			// What update_credentials answers is what verify_credentials
			// reads back.
			for _, got := range []map[string]any{r.object(t), s.do(t, http.MethodGet, "/api/v1/accounts/verify_credentials", tok, nil).object(t)} {
				src, _ := got["source"].(map[string]any)
				if got["display_name"] != tc.wantDisplay || got["note"] != tc.wantNote || src["note"] != tc.wantSource {
					t.Fatalf("account %v %q %q, source.note %q; want %q %q %q", got["id"], got["display_name"], got["note"], src["note"], tc.wantDisplay, tc.wantNote, tc.wantSource)
				}
			}
			// The public entity shows the note as HTML, without source.
			pub := s.do(t, http.MethodGet, "/api/v1/accounts/lookup?acct=alice", "", nil).object(t)
			if pub["note"] != tc.wantNote || pub["source"] != nil {
				t.Fatalf("lookup: note %q, source %v", pub["note"], pub["source"])
			}
		})
	}
}
