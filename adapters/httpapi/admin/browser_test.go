package admin_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

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
		"the operator page in a real browser (sign-in form, lift button, self-refresh) was not checked and docs/admin.png was not rewritten")
	return ""
}

// The operator page in headless Chromium: sign in with the token, see the
// queue and the quarantined host, click Lift, see the host gone and the
// notice; then the page refreshes itself and shows a new figure. The
// screenshot of the signed-in page goes to docs/admin.png. The store's
// clock is fake, so the page (and the picture) are the same every run.
func TestPageInChromium(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	b := setup(t, token)
	b.kill(t, "https://gone.example/users/bob/inbox", "HTTP 410 Gone")
	b.kill(t, "https://gone.example/users/carol/inbox", "HTTP 410 Gone")
	for _, inbox := range []string{"https://a.example/inbox", "https://b.example/users/dan/inbox", "https://b.example/users/eve/inbox"} {
		b.enqueue(t, inbox)
	}
	b.quarantine(t, "down.example")
	if _, err := b.instances.Update(context.Background(), "flaky.example", func(r *domain.RemoteInstance) {
		for range 4 {
			r.RecordFailure(b.clock.Now(), "connection refused")
		}
	}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
		chromedp.WindowSize(1280, 900),
	)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()

	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	do("sign in", chromedp.Navigate(b.URL+"/admin"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", token), chromedp.Click("#sign-in"), chromedp.WaitVisible("#queue"))
	if got := text("#state-queued"); !strings.HasPrefix(got, "3") {
		t.Fatalf("queued shows %q", got)
	}
	if got := text("#state-dead"); !strings.HasPrefix(got, "2") {
		t.Fatalf("dead shows %q", got)
	}
	do("quarantined host", chromedp.WaitVisible(`tr[data-host="down.example"]`))
	if got := text("#failing"); !strings.Contains(got, "flaky.example") || !strings.Contains(got, "connection refused") {
		t.Fatalf("top failing hosts: %q", got)
	}
	if got := text("#dead"); !strings.Contains(got, "https://gone.example/users/bob/inbox") || !strings.Contains(got, "HTTP 410 Gone") {
		t.Fatalf("dead jobs: %q", got)
	}

	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatal("the screenshot is not a PNG")
	}
	if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "admin.png"), png, 0o644); err != nil {
		t.Fatalf("write docs/admin.png: %v", err)
	}

	do("lift", chromedp.Click(`tr[data-host="down.example"] button.lift`), chromedp.WaitVisible("#flash"))
	if got := text("#flash"); !strings.Contains(got, "Lifted the quarantine of down.example") {
		t.Fatalf("notice %q", got)
	}
	do("host gone from the list", chromedp.WaitNotPresent(`tr[data-host="down.example"]`))
	if got := text("#quarantined"); !strings.Contains(got, "No host is quarantined") {
		t.Fatalf("quarantined section after the lift: %q", got)
	}
	if r, _ := b.instances.Get(context.Background(), "down.example"); r.Quarantined(b.clock.Now()) {
		t.Fatal("the click did not lift the quarantine in the store")
	}

	// The page refreshes itself: a new job shows without anyone reloading.
	b.enqueue(t, "https://c.example/inbox")
	deadline := time.Now().Add(15 * time.Second) // three refresh periods
	for !strings.HasPrefix(text("#state-queued"), "4") {
		if time.Now().After(deadline) {
			t.Fatalf("the page did not refresh itself: queued still %q", text("#state-queued"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	flash, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("flash") !== null`))
	if err != nil || flash {
		t.Fatalf("the one-time notice came back on refresh (%v)", err)
	}
}
