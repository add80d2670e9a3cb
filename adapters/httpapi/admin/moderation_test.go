package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// raw sends a body with a content type and returns the status, the body
// and the headers.
func (b *bundle) raw(t *testing.T, method, path, contentType, body string) (int, string, http.Header) {
	t.Helper()
	code, out, h := b.send(t, method, path, "Bearer "+token, contentType, strings.NewReader(body))
	return code, string(out), h
}

func TestDomainBlocksAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	auth := "Bearer " + token
	b.enqueue(t, "https://spam.example/inbox")
	b.enqueue(t, "https://a.spam.example/inbox")
	b.enqueue(t, "https://fine.example/inbox")

	b.expect(t, []apiCall{
		{"malformed domain", "POST", "/admin/api/domain-blocks", `{"domain":"https://spam.example/x","severity":"suspend"}`, 422},
		{"malformed severity", "POST", "/admin/api/domain-blocks", `{"domain":"spam.example","severity":"noop"}`, 422},
		{"no severity", "POST", "/admin/api/domain-blocks", `{"domain":"spam.example"}`, 422},
		{"malformed JSON", "POST", "/admin/api/domain-blocks", `{"domain":`, 400},
		{"empty body", "POST", "/admin/api/domain-blocks", ``, 400},
		{"oversized", "POST", "/admin/api/domain-blocks", `{"domain":"spam.example","severity":"suspend","reason":"` + strings.Repeat("r", 20<<10) + `"}`, 413},
		{"update of an unblocked domain", "PUT", "/admin/api/domain-blocks/spam.example", `{"severity":"suspend"}`, 404},
		{"lift of an unblocked domain", "DELETE", "/admin/api/domain-blocks/spam.example", ``, 404},
		{"lift of a malformed domain", "DELETE", "/admin/api/domain-blocks/a%20b", ``, 422},
	})

	code, body, _ := b.call(t, "POST", "/admin/api/domain-blocks", auth,
		`{"domain":"Spam.Example","severity":"suspend","reason":"spam wave","public_comment":"spam"}`)
	blk, _ := body["block"].(map[string]any)
	if code != 201 || blk["domain"] != "spam.example" || blk["severity"] != "suspend" || blk["reason"] != "spam wave" ||
		blk["public_comment"] != "spam" || body["jobs_ended"] != 2.0 || body["follows_removed"] != 0.0 {
		t.Fatalf("block %d %v", code, body)
	}
	if c, _ := b.jobs.Counts(context.Background()); c[domain.JobQueued] != 1 || c[domain.JobDead] != 2 {
		t.Fatalf("the suspension did not end the domain's jobs: %v", c)
	}
	if code, body, _ := b.call(t, "POST", "/admin/api/domain-blocks", auth, `{"domain":"spam.example","severity":"silence"}`); code != 409 {
		t.Fatalf("second block %d %v", code, body)
	}
	code, body, _ = b.call(t, "PUT", "/admin/api/domain-blocks/SPAM.example", auth, `{"severity":"silence","public_comment":""}`)
	blk, _ = body["block"].(map[string]any)
	if code != 200 || blk["severity"] != "silence" || blk["public_comment"] != "" || blk["reason"] != "spam wave" {
		t.Fatalf("update %d %v", code, body)
	}
	if code, body, _ := b.call(t, "PUT", "/admin/api/domain-blocks/spam.example", auth, `{"severity":"ban"}`); code != 422 {
		t.Fatalf("update to a bad severity %d %v", code, body)
	}
	if code, body, _ := b.call(t, "POST", "/admin/api/domain-blocks", auth, `{"domain":"loud.example","severity":"silence"}`); code != 201 {
		t.Fatalf("block %d %v", code, body)
	}
	code, body, _ = b.call(t, "GET", "/admin/api/domain-blocks", auth, "")
	list, _ := body["domain_blocks"].([]any)
	if code != 200 || body["mode"] != "blocklist" || len(list) != 2 || list[0].(map[string]any)["domain"] != "loud.example" {
		t.Fatalf("list %d %v", code, body)
	}
	if code, _, _ := b.call(t, "DELETE", "/admin/api/domain-blocks/spam.example", auth, ""); code != 204 {
		t.Fatalf("lift %d", code)
	}
	if bs, _ := b.moderation.DomainBlocks(context.Background()); len(bs) != 1 || bs[0].Domain != "loud.example" {
		t.Fatalf("after the lift %+v", bs)
	}
}

const shared = "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n" +
	"spam.example,suspend,false,false,spam,false\n" +
	"loud.example,silence,false,false,,false\n" +
	"media.example,noop,true,false,,false\n" +
	"not a domain,suspend,false,false,,false\n"

func TestDomainBlocksImportAndExportAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	ctx := context.Background()
	if code, body, _ := b.call(t, "POST", "/admin/api/domain-blocks", "Bearer "+token, `{"domain":"loud.example","severity":"silence"}`); code != 201 {
		t.Fatalf("block %d %v", code, body)
	}

	for _, tt := range []struct {
		name, path, contentType, body string
		want                          int
	}{
		{"JSON is not a list", "/admin/api/domain-blocks/import", "application/json", `{}`, 415},
		{"no header", "/admin/api/domain-blocks/import", "text/csv", "spam.example,suspend\n", 422},
		{"not CSV", "/admin/api/domain-blocks/import", "text/csv", "#domain\n\"spam.example\n", 422},
		{"dry_run not a bool", "/admin/api/domain-blocks/import?dry_run=maybe", "text/csv", shared, 422},
		{"oversized", "/admin/api/domain-blocks/import", "text/csv", "#domain\n" + strings.Repeat("a", 8<<20), 413},
	} {
		if code, body, _ := b.raw(t, "POST", tt.path, tt.contentType, tt.body); code != tt.want || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s, want %d", tt.name, code, body, tt.want)
		}
	}

	code, out, _ := b.raw(t, "POST", "/admin/api/domain-blocks/import?dry_run=1", "text/csv; charset=utf-8", shared)
	for _, want := range []string{`"dry_run":true`, `"added":[{"line":2,"block":{"domain":"spam.example","severity":"suspend"`,
		`"unchanged":[{"line":3,`, `"skipped":[{"line":4,"domain":"media.example","why":"severity noop`,
		`"invalid":[{"line":5,"domain":"not a domain","why":`, `"changed":[]`} {
		if code != 200 || !strings.Contains(out, want) {
			t.Errorf("dry run %d lacks %s:\n%s", code, want, out)
		}
	}
	if bs, _ := b.moderation.DomainBlocks(ctx); len(bs) != 1 {
		t.Fatalf("the dry run blocked: %+v", bs)
	}
	code, out, _ = b.raw(t, "POST", "/admin/api/domain-blocks/import", "", shared)
	if code != 200 || !strings.Contains(out, `"dry_run":false`) || !strings.Contains(out, `"added":[{"line":2`) {
		t.Fatalf("import %d %s", code, out)
	}
	if bs, _ := b.moderation.DomainBlocks(ctx); len(bs) != 2 {
		t.Fatalf("after the import %+v", bs)
	}

	code, csv, hdr := b.raw(t, "GET", "/admin/api/domain-blocks/export", "", "")
	want := "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n" +
		"loud.example,silence,false,false,,false\nspam.example,suspend,false,false,spam,false\n"
	if code != 200 || csv != want || !strings.HasPrefix(hdr.Get("Content-Type"), "text/csv") ||
		!strings.Contains(hdr.Get("Content-Disposition"), "domain_blocks.csv") {
		t.Fatalf("export %d %q %v", code, csv, hdr)
	}
}

func TestDomainAllowsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, token, modes{domain.FederationAllowlist, domain.RegistrationsOpen})
	auth := "Bearer " + token
	code, body, _ := b.call(t, "POST", "/admin/api/domain-allows", auth, `{"domain":"Friends.Example"}`)
	if code != 201 || body["domain"] != "friends.example" {
		t.Fatalf("allow %d %v", code, body)
	}
	b.expect(t, []apiCall{
		{"twice", "POST", "/admin/api/domain-allows", `{"domain":"friends.example"}`, 409},
		{"malformed", "POST", "/admin/api/domain-allows", `{"domain":"*.friends.example"}`, 422},
		{"unknown", "DELETE", "/admin/api/domain-allows/other.example", "", 404},
		{"no PUT", "PUT", "/admin/api/domain-allows/friends.example", `{}`, 405},
	})
	code, body, _ = b.call(t, "GET", "/admin/api/domain-allows", auth, "")
	if list, _ := body["domain_allows"].([]any); code != 200 || body["mode"] != "allowlist" || len(list) != 1 {
		t.Fatalf("list %d %v", code, body)
	}
	if code, _, _ := b.call(t, "DELETE", "/admin/api/domain-allows/friends.example", auth, ""); code != 204 {
		t.Fatalf("remove %d", code)
	}
	if as, _ := b.moderation.DomainAllows(context.Background()); len(as) != 0 {
		t.Fatalf("after the removal %+v", as)
	}
}

func TestRegistrationsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	auth := "Bearer " + token
	ctx := context.Background()
	var ids []string
	for _, name := range []string{"alice", "mallory"} {
		s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: name, Password: "correct horse", Reason: "I am " + name})
		if err != nil || s.Token != "" {
			t.Fatal(s, err)
		}
		ids = append(ids, s.User.ID)
	}
	code, body, _ := b.call(t, "GET", "/admin/api/registrations", auth, "")
	list, _ := body["registrations"].([]any)
	if code != 200 || body["mode"] != "approval" || len(list) != 2 {
		t.Fatalf("list %d %v", code, body)
	}
	if first := list[0].(map[string]any); first["username"] != "alice" || first["reason"] != "I am alice" || first["status"] != "pending" || first["id"] != ids[0] {
		t.Fatalf("first %v", first)
	}
	code, body, _ = b.call(t, "POST", "/admin/api/registrations/"+ids[0]+"/approve", auth, "")
	if code != 200 || body["status"] != "active" || body["username"] != "alice" {
		t.Fatalf("approve %d %v", code, body)
	}
	code, body, _ = b.call(t, "POST", "/admin/api/registrations/"+ids[1]+"/reject", auth, "")
	if code != 200 || body["username"] != "mallory" || fmt.Sprint(body["released"]) != "[mallory]" {
		t.Fatalf("reject %d %v", code, body)
	}
	if _, err := b.names.Get(ctx, "mallory"); err == nil {
		t.Fatal("the rejected name is still held")
	}
	b.expect(t, []apiCall{
		{"approve twice", "POST", "/admin/api/registrations/" + ids[0] + "/approve", "", 422},
		{"reject an active account", "POST", "/admin/api/registrations/" + ids[0] + "/reject", "", 422},
		{"reject twice", "POST", "/admin/api/registrations/" + ids[1] + "/reject", "", 404},
		{"unknown", "POST", "/admin/api/registrations/nobody/approve", "", 404},
	})
	if code, body, _ := b.call(t, "GET", "/admin/api/registrations?limit=0", auth, ""); code != 422 {
		t.Fatalf("limit=0: %d %v", code, body)
	}
	if _, body, _ := b.call(t, "GET", "/admin/api/registrations", auth, ""); len(body["registrations"].([]any)) != 0 {
		t.Fatalf("still pending %v", body)
	}
}

// report stores a report of a remote server about alice, i minutes in.
func (b *bundle) report(t *testing.T, id string, i int, comment string) domain.Report {
	t.Helper()
	r, err := domain.NewReport(id, "https://remote.example/flags/"+id, "https://remote.example/actor",
		[]string{"https://local.example/users/alice"}, []string{"https://local.example/users/alice/statuses/1"}, comment, t0.Add(time.Duration(i)*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.reports.AddReport(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReportsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	auth := "Bearer " + token
	for i, id := range []string{"r1", "r2", "r3"} {
		b.report(t, id, i, "spam from "+id)
	}
	code, body, _ := b.call(t, "POST", "/admin/api/reports/r2/resolve", auth, `{"note":"silenced remote.example"}`)
	if code != 200 || body["open"] != false || body["resolution"] != "silenced remote.example" || body["resolved_at"] == nil {
		t.Fatalf("resolve %d %v", code, body)
	}
	if code, body, _ := b.call(t, "POST", "/admin/api/reports/r3/resolve", auth, ``); code != 200 || body["open"] != false {
		t.Fatalf("resolve without a note %d %v", code, body)
	}
	ids := func(body map[string]any) string {
		var out []string
		for _, r := range body["reports"].([]any) {
			out = append(out, r.(map[string]any)["id"].(string))
		}
		return strings.Join(out, ",")
	}
	if code, body, _ := b.call(t, "GET", "/admin/api/reports", auth, ""); code != 200 || ids(body) != "r1" {
		t.Fatalf("open %d %v", code, body)
	}
	if code, body, _ := b.call(t, "GET", "/admin/api/reports?state=all", auth, ""); code != 200 || ids(body) != "r3,r2,r1" {
		t.Fatalf("all %d %v", code, body)
	}
	code, body, _ = b.call(t, "GET", "/admin/api/reports/r1", auth, "")
	if code != 200 || body["reporter"] != "https://remote.example/actor" || body["comment"] != "spam from r1" ||
		fmt.Sprint(body["targets"]) != "[https://local.example/users/alice]" || body["open"] != true {
		t.Fatalf("get %d %v", code, body)
	}
	b.expect(t, []apiCall{
		{"bad state", "GET", "/admin/api/reports?state=closed", "", 422},
		{"bad limit", "GET", "/admin/api/reports?limit=x", "", 422},
		{"unknown", "GET", "/admin/api/reports/nope", "", 404},
		{"resolve unknown", "POST", "/admin/api/reports/nope/resolve", `{"note":"x"}`, 404},
		{"note too long", "POST", "/admin/api/reports/r1/resolve", `{"note":"` + strings.Repeat("n", domain.MaxReasonLength+1) + `"}`, 422},
		{"note not a string", "POST", "/admin/api/reports/r1/resolve", `{"note":1}`, 400},
	})
}
