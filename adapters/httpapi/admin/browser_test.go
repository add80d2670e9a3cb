package admin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// chromium finds Debian's chromium, or skips saying what stays unverified.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("UNVERIFIED: no chromium on this machine (apt-get install -y chromium; .ci/run does it): " +
		"the operator pages in a real browser (sign-in form, buttons, self-refresh, nothing overflowing its card) were not checked and docs/admin*.png were not rewritten")
	return ""
}

// pageWidth is the window the pages are checked at: a laptop's, where the
// fan-outs once ran under the next card.
const pageWidth = 1400

// tab is one headless Chromium tab with the helpers the tests use.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func openTab(t *testing.T) *tab {
	t.Helper()
	exe := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(pageWidth, 900),
	)
	t.Cleanup(cancelAlloc)
	c, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	return &tab{t: t, ctx: c}
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) signIn(base, wait string) {
	b.t.Helper()
	b.do("sign in", chromedp.Navigate(base+"/admin"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", token), chromedp.Click("#sign-in"), chromedp.WaitVisible(wait))
}

// overflowJS lists what breaks out of its card: a page wider than the
// window, a card whose content is wider than it, an element whose box
// leaves its card's, text that spills out of its table cell, two cards on
// top of each other; and a cut URI or text without its whole text on
// hover (title).
const overflowJS = `(() => {
  const bad = [], px = v => Math.round(v);
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth) bad.push("the page scrolls sideways: " + doc.scrollWidth + " > " + doc.clientWidth);
  const cards = [...document.querySelectorAll("main > section")];
  for (const card of cards) {
    const box = card.getBoundingClientRect();
    if (card.scrollWidth > card.clientWidth + 1) bad.push("#" + card.id + ": content " + card.scrollWidth + " px wide in a card of " + card.clientWidth);
    for (const el of card.querySelectorAll("*")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < box.left - 1 || r.right > box.right + 1)
        bad.push("#" + card.id + ": <" + el.tagName.toLowerCase() + "> spans " + px(r.left) + ".." + px(r.right) + ", its card " + px(box.left) + ".." + px(box.right));
      if (bad.length > 20) return bad;
    }
  }
  for (let i = 0; i < cards.length; i++) for (let j = i + 1; j < cards.length; j++) {
    const a = cards[i].getBoundingClientRect(), b = cards[j].getBoundingClientRect();
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) bad.push("#" + cards[i].id + " and #" + cards[j].id + " overlap");
  }
  for (const el of document.querySelectorAll("main td:not(.uri), main th"))
    if (el.scrollWidth > el.clientWidth + 1) bad.push("text spills out of its cell: " + el.textContent.slice(0, 60));
  for (const el of document.querySelectorAll("td.uri, .uri-line, .clamp"))
    if ((el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight) && el.title !== el.textContent) bad.push("cut without its full text on hover: " + el.textContent.slice(0, 60));
  return bad;
})()`

// cut counts the URIs shown cut (an ellipsis) in the page.
const cutJS = `[...document.querySelectorAll("td.uri, .uri-line")].filter(e => e.scrollWidth > e.clientWidth).length`

func (b *tab) checkFits(what string) {
	b.t.Helper()
	bad, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](overflowJS))
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	if len(bad) > 0 {
		b.t.Errorf("%s at %d px: %d things do not fit:\n%s", what, pageWidth, len(bad), strings.Join(bad, "\n"))
	}
	cut, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](cutJS))
	if err != nil || cut == 0 {
		b.t.Errorf("%s: no long URI is cut (%v): the test data is not the size it means to be", what, err)
	}
}

func (b *tab) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		b.t.Fatal("the screenshot is not a PNG")
	}
	// The pictures in docs/ change only when asked (make screenshots):
	// Chromium's rendering differs by a few bytes between machines, and a
	// test run must not leave the checkout changed.
	dir := b.t.TempDir()
	if os.Getenv("HERALD_UPDATE_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "..", "..", "docs")
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		b.t.Fatalf("write %s: %v", filepath.Join(dir, name), err)
	}
}

// long makes a name of n characters from prefix, as real ones get: a
// long host, a UUID path.
func long(prefix string, n int) string {
	const fill = "0196b2c4-7d3e-7a51-9f08-3c6e2d1b4a7f-"
	for len(prefix) < n {
		prefix += fill
	}
	return prefix[:n]
}

// demoSized fills the queue as two minutes of `herald demo` and more do:
// sixty fan-outs of long activity URIs, hosts with long names and long
// errors, quarantined and dead by the dozen.
func (b *bundle) demoSized(t *testing.T) {
	t.Helper()
	host := func(i int) string {
		return fmt.Sprintf("%s-%02d.example", long("instance-with-a-rather-long-name-", 48), i)
	}
	for i := range 30 {
		b.kill(t, fmt.Sprintf("https://%s/users/%s/inbox", host(i%6), long("follower-", 60)),
			fmt.Sprintf("Post \"https://%s/inbox\": dial tcp 203.0.113.%d:443: connect: connection refused (%s)", host(i%6), i, long("x", 80)))
	}
	for i := range 25 {
		if _, err := b.instances.Update(context.Background(), host(i), func(r *domain.RemoteInstance) {
			for range domain.BreakerThreshold {
				r.RecordFailure(b.clock.Now(), fmt.Sprintf("Post \"https://%s/inbox\": dial tcp 203.0.113.%d:443: connect: connection refused", host(i), i))
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	// A host of one long label (no hyphen to break at), failing with an
	// error of one long word.
	unbroken := strings.Repeat("abcdefghij", 6) + ".example"
	if _, err := b.instances.Update(context.Background(), unbroken, func(r *domain.RemoteInstance) {
		for range domain.BreakerThreshold + 5 {
			r.RecordFailure(b.clock.Now(), "tls:"+strings.Repeat("certificate_signed_by_unknown_authority/", 6))
		}
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		act := fmt.Sprintf("https://local.example/users/demo/activities/%s-%02d", long("", 120), i)
		b.fanOutOf(t, act, t0.Add(time.Duration(i)*time.Second), 71, 3, 1)
	}
}

// The operator page in headless Chromium: sign in with the token, see the
// queue and the quarantined host, click Lift, see the host gone and the
// notice; then the page refreshes itself and shows a new figure. It holds
// up with a queue of real size: every list is capped, nothing leaves its
// card at 1400 px, long URIs are cut with their full text on hover. The
// screenshot of the signed-in page goes to docs/admin.png (make screenshots). The store's
// clock is fake, so the page (and the picture) are the same every run.
func TestPageInChromium(t *testing.T) {
	t.Parallel()
	b := setup(t, token)
	br := openTab(t)
	b.kill(t, "https://gone.example/users/bob/inbox", "HTTP 410 Gone")
	b.kill(t, "https://gone.example/users/carol/inbox", "HTTP 410 Gone")
	b.demoSized(t)
	for _, inbox := range []string{"https://a.example/inbox", "https://b.example/users/dan/inbox", "https://b.example/users/eve/inbox"} {
		b.enqueue(t, inbox)
	}
	b.quarantine(t, "down.example")
	counts, _ := b.jobs.Counts(context.Background())

	br.signIn(b.URL, "#queue")
	if got, want := br.text("#state-queued"), fmt.Sprint(counts[domain.JobQueued]); !strings.HasPrefix(got, want) {
		t.Fatalf("queued shows %q, want %s", got, want)
	}
	if got, want := br.text("#state-dead"), fmt.Sprint(counts[domain.JobDead]); !strings.HasPrefix(got, want) {
		t.Fatalf("dead shows %q, want %s", got, want)
	}
	br.do("quarantined host", chromedp.WaitVisible(`tr[data-host="down.example"]`))
	if got := br.text("#failing"); !strings.Contains(got, "instance-with-a-rather-long-name") || !strings.Contains(got, "connection refused") {
		t.Fatalf("top failing hosts: %q", got)
	}
	if got := br.text("#dead"); !strings.Contains(got, "HTTP 410 Gone") {
		t.Fatalf("dead jobs: %q", got)
	}
	rows, err := chromedp.Run(br.ctx, chromedp.Evaluate[[]int](`["#fanouts tr[data-fanout]", "#quarantined tr[data-host]"].map(s => document.querySelectorAll(s).length)`))
	if err != nil || rows[0] != application.RecentFanOuts || rows[1] != 20 {
		t.Fatalf("rows of fan-outs and quarantined hosts: %v %v, want %d and 20", rows, err, application.RecentFanOuts)
	}
	if got := br.text("#quarantined-more"); !strings.Contains(got, "and 7 more") {
		t.Fatalf("the page does not say more hosts are quarantined: %q", got)
	}
	br.checkFits("the delivery page")
	br.screenshot("admin.png")

	br.do("lift", chromedp.Click(`tr[data-host="down.example"] button.lift`), chromedp.WaitVisible("#flash"))
	if got := br.text("#flash"); !strings.Contains(got, "Lifted the quarantine of down.example") {
		t.Fatalf("notice %q", got)
	}
	br.do("host gone from the list", chromedp.WaitNotPresent(`tr[data-host="down.example"]`))
	if r, _ := b.instances.Get(context.Background(), "down.example"); r.Quarantined(b.clock.Now()) {
		t.Fatal("the click did not lift the quarantine in the store")
	}

	// The page refreshes itself: a new job shows without anyone reloading.
	b.enqueue(t, "https://c.example/inbox")
	want := fmt.Sprint(counts[domain.JobQueued] + 1)
	deadline := time.Now().Add(15 * time.Second) // three refresh periods
	for !strings.HasPrefix(br.text("#state-queued"), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the page did not refresh itself: queued still %q, want %s", br.text("#state-queued"), want)
		}
		time.Sleep(200 * time.Millisecond)
	}
	flash, err := chromedp.Run(br.ctx, chromedp.Evaluate[bool](`document.getElementById("flash") !== null`))
	if err != nil || flash {
		t.Fatalf("the one-time notice came back on refresh (%v)", err)
	}
}

// The moderation view in headless Chromium, in allowlist mode so every
// part shows, with lists of real size (a shared blocklist of 150 long
// domains, reports naming long URIs, sign-ups with long reasons): block a
// domain with the form, lift it, resolve a report, approve and reject
// sign-ups. Its screenshot goes to docs/admin-moderation.png (make
// screenshots).
func TestModerationPageInChromium(t *testing.T) {
	t.Parallel()
	b := setup(t, token, modes{domain.FederationAllowlist, domain.RegistrationsApproval})
	br := openTab(t)
	ctx := context.Background()
	for i := range 150 {
		sev := domain.SeveritySilence
		if i%3 == 0 {
			sev = domain.SeveritySuspend
		}
		if err := b.moderation.AddDomainBlock(ctx, domain.DomainBlock{Domain: fmt.Sprintf("%s-%03d.example", long("spam-farm-", 56), i), Severity: sev,
			Reason: "seen in reports " + long("#", 40), PublicComment: "spam, harassment; shared by the list of a neighbouring instance", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"friends.example", long("a-partner-with-a-long-name-", 60) + "." + long("and-a-long-subdomain-", 60) + ".example"} {
		if err := b.moderation.AddDomainAllow(ctx, domain.DomainAllow{Domain: d, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 25 {
		r, err := domain.NewReport(fmt.Sprintf("r%02d", i), fmt.Sprintf("https://remote.example/flags/%d", i), "https://"+long("reporting-instance-", 60)+".example/actor",
			[]string{"https://local.example/users/" + long("alice", 30)}, []string{"https://local.example/users/alice/statuses/" + long("", 90)},
			"This account sends the same link to everyone it can find; "+long("see ", 120), t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.reports.AddReport(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i := range 23 {
		s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: fmt.Sprintf("newcomer%02d", i), Password: "correct horse",
			Reason: "I run a community garden and want to post our schedule; " + long("more ", 200)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.User.ID)
	}
	b.enqueue(t, "https://abuse.example/inbox")

	br.signIn(b.URL, "#queue")
	br.do("moderation view", chromedp.Click(`nav a[href="/admin/moderation"]`), chromedp.WaitVisible("#blocks"))
	rows, err := chromedp.Run(br.ctx, chromedp.Evaluate[[]int](`["#blocks tr[data-block]", "#reports tr[data-report]", "#registrations-pending tr[data-registration]", "#allows tr[data-allow]"].map(s => document.querySelectorAll(s).length)`))
	if err != nil || fmt.Sprint(rows) != "[50 20 20 2]" {
		t.Fatalf("rows of blocks, reports, sign-ups, allows: %v %v, want [50 20 20 2]", rows, err)
	}
	br.checkFits("the moderation page")
	br.screenshot("admin-moderation.png")

	br.do("block", chromedp.SendKeys("#block-domain", "abuse.example"), chromedp.SetValue("#block-severity", "suspend"),
		chromedp.Click("#block-submit"), chromedp.WaitVisible(`tr[data-block="abuse.example"]`))
	if got := br.text("#flash"); !strings.Contains(got, "Blocked abuse.example (suspend). 1 queued deliveries ended") {
		t.Fatalf("notice %q", got)
	}
	br.do("lift", chromedp.Click(`tr[data-block="abuse.example"] button.lift`), chromedp.WaitNotPresent(`tr[data-block="abuse.example"]`))
	if got := br.text("#flash"); !strings.Contains(got, "Lifted the block of abuse.example") {
		t.Fatalf("notice %q", got)
	}
	br.do("resolve", chromedp.SendKeys(`tr[data-report="r24"] input[name=note]`, "silenced them"),
		chromedp.Click(`tr[data-report="r24"] button.resolve`), chromedp.WaitNotPresent(`tr[data-report="r24"]`))
	if r, _ := b.reports.Report(ctx, "r24"); r.Open() || r.Resolution != "silenced them" {
		t.Fatalf("report %+v", r)
	}
	br.do("approve", chromedp.Click(`tr[data-registration="newcomer00"] button.approve`), chromedp.WaitNotPresent(`tr[data-registration="newcomer00"]`))
	br.do("reject", chromedp.Click(`tr[data-registration="newcomer01"] button.reject`), chromedp.WaitNotPresent(`tr[data-registration="newcomer01"]`))
	if u, err := b.accounts.UserByID(ctx, ids[0]); err != nil || !u.Active() {
		t.Fatalf("approved %+v %v", u, err)
	}
	if _, err := b.accounts.UserByID(ctx, ids[1]); err == nil {
		t.Fatal("the rejected account stayed")
	}
}
