package admin_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

type browser struct {
	t *testing.T
	c *http.Client
	b *bundle
}

func newBrowser(t *testing.T, b *bundle) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, b: b, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (br *browser) do(method, path string, form url.Values, header map[string]string) (int, string, http.Header) {
	br.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, br.b.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := br.c.Do(req)
	if err != nil {
		br.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (br *browser) signIn() string {
	br.t.Helper()
	code, _, hdr := br.do("POST", "/admin/login", url.Values{"token": {token}}, nil)
	if code != 303 || hdr.Get("Location") != "/admin" {
		br.t.Fatalf("sign in: %d", code)
	}
	setCookie := hdr.Get("Set-Cookie")
	for _, want := range []string{"herald_admin=", "HttpOnly", "SameSite=Strict", "Path=/admin"} {
		if !strings.Contains(setCookie, want) {
			br.t.Fatalf("cookie %q lacks %s", setCookie, want)
		}
	}
	if strings.Contains(setCookie, token) {
		br.t.Fatal("the cookie holds the admin token itself")
	}
	code, page, _ := br.do("GET", "/admin", nil, nil)
	if code != 200 {
		br.t.Fatalf("dashboard %d", code)
	}
	m := csrfRe.FindStringSubmatch(page)
	if m == nil {
		br.t.Fatal("no CSRF token on the page")
	}
	return m[1]
}

func TestPageSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	br := newBrowser(t, b)
	code, page, _ := br.do("GET", "/admin", nil, nil)
	if code != 401 || !strings.Contains(page, `name="token"`) || strings.Contains(page, "Queue depth") {
		t.Fatalf("signed out: %d %s", code, page)
	}
	code, page, hdr := br.do("POST", "/admin/login", url.Values{"token": {"guess"}}, nil)
	if code != 401 || !strings.Contains(page, "not the admin token") || hdr.Get("Set-Cookie") != "" {
		t.Fatalf("wrong token: %d %s", code, page)
	}
	csrf := br.signIn()
	code, page, _ = br.do("GET", "/admin", nil, nil)
	if code != 200 || !strings.Contains(page, "Queue depth") || !strings.Contains(page, `http-equiv="refresh"`) {
		t.Fatalf("dashboard %d %s", code, page)
	}
	if code, _, _ := br.do("POST", "/admin/logout", url.Values{"csrf": {csrf}}, nil); code != 303 {
		t.Fatalf("sign out %d", code)
	}
	if code, _, _ := br.do("GET", "/admin", nil, nil); code != 401 {
		t.Fatalf("after sign out: %d", code)
	}
	// A forged cookie is no session.
	forged := newBrowser(t, b)
	if code, _, _ := forged.do("GET", "/admin", nil, map[string]string{"Cookie": "herald_admin=" + token}); code != 401 {
		t.Fatalf("the raw token as cookie was accepted: %d", code)
	}
}

func TestPageShowsTheQueue(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	b.kill(t, "https://gone.example/inbox", "410 Gone: <script>alert(1)</script>")
	b.enqueue(t, "https://a.example/inbox")
	b.quarantine(t, "down.example")
	b.fanOut(t, 1000, 4, 2) // 4 jobs more: 1 queued, 2 succeeded, 1 dead
	br := newBrowser(t, b)
	br.signIn()
	_, page, hdr := br.do("GET", "/admin", nil, nil)
	for _, want := range []string{
		`data-fanout="https://local.example/users/a/activities/big"`, `<td class="n">1000</td><td class="n">4</td><td class="n">2 <small>(50.0%)</small></td><td class="n">1</td><td class="n">1</td>`,
		"enqueueing",
		`id="state-queued"><b>2</b>`, `id="state-dead"><b>2</b>`, `data-host="down.example"`,
		"/admin/instances/down.example/lift", "https://gone.example/inbox", "410 Gone: &lt;script&gt;",
		"/admin/hosts/gone.example/retry-dead",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("an error text was not escaped")
	}
	if !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") || hdr.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers %v", hdr)
	}
}

func TestPageLiftIsProtected(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	b.quarantine(t, "down.example")
	quarantined := func() bool {
		r, _ := b.instances.Get(context.Background(), "down.example")
		return r.Quarantined(b.clock.Now())
	}
	br := newBrowser(t, b)
	csrf := br.signIn()

	anon := newBrowser(t, b)
	if code, _, _ := anon.do("POST", "/admin/instances/down.example/lift", url.Values{"csrf": {csrf}}, nil); code != 401 {
		t.Fatalf("without a session: %d", code)
	}
	if code, _, _ := br.do("POST", "/admin/instances/down.example/lift", url.Values{}, nil); code != 403 {
		t.Fatalf("without the CSRF token: %d", code)
	}
	if code, _, _ := br.do("POST", "/admin/instances/down.example/lift", url.Values{"csrf": {"00" + csrf[2:]}}, nil); code != 403 {
		t.Fatalf("with a wrong CSRF token: %d", code)
	}
	if code, _, _ := br.do("POST", "/admin/instances/down.example/lift", url.Values{"csrf": {csrf}},
		map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}); code != 403 {
		t.Fatalf("cross-site: %d", code)
	}
	if !quarantined() {
		t.Fatal("a refused post lifted the quarantine")
	}
	code, _, hdr := br.do("POST", "/admin/instances/down.example/lift", url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if code != 303 || hdr.Get("Location") != "/admin" {
		t.Fatalf("lift: %d", code)
	}
	if quarantined() {
		t.Fatal("not lifted")
	}
	_, page, _ := br.do("GET", "/admin", nil, nil)
	if !strings.Contains(page, "Lifted the quarantine of down.example") || strings.Contains(page, `data-host="down.example"`) {
		t.Fatalf("page after lift: %s", page)
	}
	// The notice shows once.
	if _, page, _ := br.do("GET", "/admin", nil, nil); strings.Contains(page, "Lifted the quarantine") {
		t.Fatal("the notice stayed")
	}
	// Lifting a host never seen says so rather than failing.
	br.do("POST", "/admin/instances/never.example/lift", url.Values{"csrf": {csrf}}, nil)
	if _, page, _ := br.do("GET", "/admin", nil, nil); !strings.Contains(page, "Could not lift never.example: not found") {
		t.Fatalf("no error notice: %s", page)
	}
}

func TestPageRetryDead(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	b.kill(t, "https://gone.example/inbox", "500")
	br := newBrowser(t, b)
	csrf := br.signIn()
	if code, _, _ := br.do("POST", "/admin/hosts/gone.example/retry-dead", url.Values{"csrf": {csrf}}, nil); code != 303 {
		t.Fatalf("retry %d", code)
	}
	if c, _ := b.jobs.Counts(context.Background()); c[domain.JobDead] != 0 || c[domain.JobQueued] != 1 {
		t.Fatalf("counts %v", c)
	}
}

func TestPageCapsTheQuarantinedHosts(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	for i := range 25 {
		b.quarantine(t, fmt.Sprintf("h%02d.example", i))
	}
	br := newBrowser(t, b)
	br.signIn()
	_, page, _ := br.do("GET", "/admin", nil, nil)
	if n := strings.Count(page, `<tr data-host="`); n != 20 {
		t.Fatalf("%d quarantined hosts listed, want 20", n)
	}
	if !strings.Contains(page, "Quarantined hosts (25)") || !strings.Contains(page, "and 5 more") {
		t.Fatal("the page does not say how many more hosts are quarantined")
	}
}

func TestModerationPage(t *testing.T) {
	t.Parallel()
	b := setup(t, token, modes{domain.FederationAllowlist, domain.RegistrationsApproval})
	ctx := context.Background()
	if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse", Reason: "<b>let me in</b>"}); err != nil {
		t.Fatal(err)
	}
	b.report(t, "r1", 0, "<script>alert(1)</script> spam")
	for i := range 105 {
		if err := b.moderation.AddDomainBlock(ctx, domain.DomainBlock{Domain: fmt.Sprintf("b%03d.example", i), Severity: domain.SeveritySilence, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.moderation.AddDomainAllow(ctx, domain.DomainAllow{Domain: "friends.example", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	anon := newBrowser(t, b)
	if code, page, _ := anon.do("GET", "/admin/moderation", nil, nil); code != 401 || strings.Contains(page, "Domain blocks") {
		t.Fatalf("signed out: %d", code)
	}
	if code, _, _ := anon.do("GET", "/admin/domain-blocks.csv", nil, nil); code != 401 {
		t.Fatalf("the list without a session: %d", code)
	}
	br := newBrowser(t, b)
	br.signIn()
	code, page, hdr := br.do("GET", "/admin/moderation", nil, nil)
	if code != 200 || strings.Contains(page, `http-equiv="refresh"`) {
		t.Fatalf("moderation page %d (it must not reload itself: an operator types into its forms)", code)
	}
	for _, want := range []string{"Domain blocks (105)", "blocks 1–50 of 105", `href="/admin/moderation?from=50#blocks"`, `data-block="b000.example"`, "/admin/domain-blocks/b000.example/lift",
		`data-allow="friends.example"`, `data-report="r1"`, "&lt;script&gt;alert(1)&lt;/script&gt; spam", "/admin/reports/r1/resolve",
		`data-registration="alice"`, "&lt;b&gt;let me in&lt;/b&gt;", `id="mode">allowlist`, `id="registrations">approval`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<tr data-block="); n != 50 {
		t.Errorf("%d blocks listed, want 50", n)
	}
	// The last page; a page past the end is the last one.
	for _, from := range []string{"100", "1000"} {
		_, last, _ := br.do("GET", "/admin/moderation?from="+from, nil, nil)
		if n := strings.Count(last, "<tr data-block="); n != 5 || !strings.Contains(last, `data-block="b104.example"`) ||
			!strings.Contains(last, `href="/admin/moderation?from=50#blocks"`) || strings.Contains(last, `id="blocks-next"`) {
			t.Errorf("from=%s: %d blocks", from, n)
		}
	}
	if strings.Contains(page, "<script>") || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Error("the page is not escaped or not locked down")
	}
	code, csv, hdr := br.do("GET", "/admin/domain-blocks.csv", nil, nil)
	if code != 200 || !strings.HasPrefix(csv, "#domain,#severity,") || strings.Count(csv, "\n") != 106 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/csv") {
		t.Fatalf("the list as CSV: %d %v %.200s", code, hdr, csv)
	}
	// In blocklist mode the allows are not shown: they do nothing.
	bl := setup(t, token)
	br = newBrowser(t, bl)
	br.signIn()
	if _, page, _ := br.do("GET", "/admin/moderation", nil, nil); strings.Contains(page, `id="allows"`) || !strings.Contains(page, "No domain is blocked") {
		t.Fatal("allows shown in blocklist mode")
	}
}

func TestModerationPageActions(t *testing.T) {
	t.Parallel()
	b := setup(t, token, modes{domain.FederationAllowlist, domain.RegistrationsApproval})
	ctx := context.Background()
	b.enqueue(t, "https://spam.example/inbox")
	b.report(t, "r1", 0, "spam")
	var ids []string
	for _, name := range []string{"alice", "mallory"} {
		s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: name, Password: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.User.ID)
	}
	br := newBrowser(t, b)
	csrf := br.signIn()
	post := func(path string, form url.Values) string {
		t.Helper()
		form.Set("csrf", csrf)
		code, _, hdr := br.do("POST", path, form, nil)
		if code != 303 || hdr.Get("Location") != "/admin/moderation" {
			t.Fatalf("%s: %d to %q", path, code, hdr.Get("Location"))
		}
		_, page, _ := br.do("GET", "/admin/moderation", nil, nil)
		m := regexp.MustCompile(`id="flash">([^<]*)<`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("%s: no notice", path)
		}
		return html.UnescapeString(m[1])
	}

	// A form without the CSRF token changes nothing.
	if code, _, _ := br.do("POST", "/admin/domain-blocks", url.Values{"domain": {"spam.example"}, "severity": {"suspend"}}, nil); code != 403 {
		t.Fatalf("block without the CSRF token: %d", code)
	}
	if bs, _ := b.moderation.DomainBlocks(ctx); len(bs) != 0 {
		t.Fatal("a refused form blocked a domain")
	}
	for _, tt := range []struct {
		path string
		form url.Values
		says string
	}{
		{"/admin/domain-blocks", url.Values{"domain": {"Spam.Example"}, "severity": {"suspend"}, "reason": {"spam wave"}}, "Blocked spam.example (suspend). 1 queued deliveries ended"},
		{"/admin/domain-blocks", url.Values{"domain": {"spam.example"}, "severity": {"silence"}}, "Could not block spam.example: already exists"},
		{"/admin/domain-blocks", url.Values{"domain": {"not a domain"}, "severity": {"silence"}}, "Could not block not a domain: invalid input"},
		{"/admin/domain-blocks/spam.example/lift", url.Values{}, "Lifted the block of spam.example"},
		{"/admin/domain-blocks/spam.example/lift", url.Values{}, "Could not lift the block of spam.example: not found"},
		{"/admin/domain-allows", url.Values{"domain": {"friends.example"}}, "Allowed friends.example."},
		{"/admin/domain-allows/friends.example/remove", url.Values{}, "friends.example is no longer allowed."},
		{"/admin/reports/r1/resolve", url.Values{"note": {"silenced them"}}, "Resolved report r1."},
		{"/admin/registrations/" + ids[0] + "/approve", url.Values{}, "Approved alice"},
		{"/admin/registrations/" + ids[1] + "/reject", url.Values{}, "Rejected mallory: the account is deleted and mallory free again."},
		{"/admin/registrations/" + ids[1] + "/reject", url.Values{}, "Could not reject " + ids[1] + ": not found"},
	} {
		if got := post(tt.path, tt.form); !strings.Contains(got, tt.says) {
			t.Errorf("%s: notice %q, want %q", tt.path, got, tt.says)
		}
	}
	if c, _ := b.jobs.Counts(ctx); c[domain.JobDead] != 1 {
		t.Fatalf("the suspension from the page did not end the job: %v", c)
	}
	if r, _ := b.reports.Report(ctx, "r1"); r.Open() || r.Resolution != "silenced them" {
		t.Fatalf("report %+v", r)
	}
	if u, err := b.accounts.UserByID(ctx, ids[0]); err != nil || !u.Active() {
		t.Fatalf("alice %+v %v", u, err)
	}
}
