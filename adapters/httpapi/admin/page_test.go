package admin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

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
