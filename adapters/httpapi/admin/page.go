package admin

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// The page's cookies. Both are HttpOnly, SameSite=Strict and scoped to
// /admin; the session cookie holds an HMAC of the admin token (never the
// token itself), so it is valid exactly while the token is unchanged.
const (
	sessionCookie = "herald_admin"
	flashCookie   = "herald_admin_flash"
	sessionMaxAge = 12 * time.Hour
	// RefreshSeconds is how often the page reloads itself.
	RefreshSeconds = 5
	recentDead     = 20
	deadScan       = 1000
	topFailing     = 10
	// maxQuarantined is how many quarantined hosts the page lists; the
	// API lists them all.
	maxQuarantined = 20
	// maxFormBody bounds a form post of the page: a block's two comments
	// of 1,000 characters, URL-encoded.
	maxFormBody = 16 << 10
)

//go:embed templates/*.html
var templates embed.FS

type pageRenderer struct{ t *template.Template }

func newPageRenderer() *pageRenderer {
	return &pageRenderer{t: template.Must(template.ParseFS(templates, "templates/*.html"))}
}

func (p *pageRenderer) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := p.t.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "template: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var crossOriginGuard = http.NewCrossOriginProtection()

// crossOrigin refuses cross-site form posts (Sec-Fetch-Site, Origin).
func crossOrigin(next http.Handler) http.Handler { return crossOriginGuard.Handler(next) }

func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/admin", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)}
	if maxAge < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(maxAge.Seconds())
	}
	http.SetCookie(w, c)
}

func (h *Handler) pageSession(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	return err == nil && equal(c.Value, h.derive("session"))
}

type loginView struct {
	Error string
}

// pageAction guards a form post of the page: same origin, a session, and
// the CSRF token of the form. It goes back to /admin.
func (h *Handler) pageAction(next func(http.ResponseWriter, *http.Request) string) http.Handler {
	return h.pageActionTo("/admin", next)
}

// pageActionTo is pageAction going back to the page at `to`.
func (h *Handler) pageActionTo(to string, next func(http.ResponseWriter, *http.Request) string) http.Handler {
	return crossOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.pageSession(r) {
			h.page.render(w, http.StatusUnauthorized, "login.html", loginView{Error: "Sign in first."})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil || !equal(r.PostForm.Get("csrf"), h.derive("csrf")) {
			http.Error(w, "forbidden: the form's CSRF token is missing or wrong; reload /admin", http.StatusForbidden)
			return
		}
		if msg := next(w, r); msg != "" {
			h.setCookie(w, r, flashCookie, url.QueryEscape(msg), 30*time.Second)
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	}))
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil || !h.validToken(r.PostForm.Get("token")) {
		h.log.Warn("operator page sign-in refused: wrong admin token", "remote", r.RemoteAddr)
		h.page.render(w, http.StatusUnauthorized, "login.html", loginView{Error: "That is not the admin token."})
		return
	}
	h.setCookie(w, r, sessionCookie, h.derive("session"), sessionMaxAge)
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) string {
	h.setCookie(w, r, sessionCookie, "", -1)
	return ""
}

func (h *Handler) pageLift(w http.ResponseWriter, r *http.Request) string {
	host := mux.Vars(r)["host"]
	res, err := h.op.Lift(r.Context(), host)
	if err != nil {
		_, msg := classify(err)
		return fmt.Sprintf("Could not lift %s: %s", host, msg)
	}
	h.log.Info("operator lifted a quarantine", "host", res.Instance.Host, "resumed", res.Resumed, "via", "page")
	return fmt.Sprintf("Lifted the quarantine of %s: %d jobs resumed.", res.Instance.Host, res.Resumed)
}

func (h *Handler) pageRetryDead(w http.ResponseWriter, r *http.Request) string {
	host := mux.Vars(r)["host"]
	n, err := h.op.RetryHostDead(r.Context(), host)
	if err != nil {
		_, msg := classify(err)
		return fmt.Sprintf("Could not retry the dead jobs of %s: %s", host, msg)
	}
	h.log.Info("operator retried the dead jobs of a host", "host", host, "retried", n, "via", "page")
	return fmt.Sprintf("%d dead jobs of %s are queued again.", n, host)
}

type stateView struct {
	Name  string
	Count int
}

type hostView struct {
	Host        string
	Failures    int
	Level       int
	Quarantined bool
	Until       string
	Remaining   string
	LastError   string
	LastFailure string
}

type deadView struct {
	ID, Host, Inbox, Error, Finished string
	Attempts                         int
}

type dashboardView struct {
	At         string
	Refresh    int
	CSRF       string
	Flash      string
	States     []stateView
	Total      int
	TopFailing []hostView
	// Quarantine holds the first maxQuarantined of QuarantineTotal hosts;
	// QuarantineMore is how many more there are.
	Quarantine      []hostView
	QuarantineTotal int
	QuarantineMore  int
	DeadHosts       []stateView
	RecentDead      []deadView
	DeadTotal       int
	DeadScan        int
	FanOuts         []fanOutView
	FanOutCap       int
}

type fanOutView struct {
	ID, Actor, Started, Percent          string
	Followers, Enqueued, Delivered, Dead int
	Pending                              int
	Done                                 bool
}

const timeFormat = "2006-01-02 15:04:05 UTC"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

func toHostView(v application.InstanceView, now time.Time) hostView {
	hv := hostView{Host: v.Host, Failures: v.ConsecutiveFailures, Level: v.QuarantineLevel, Quarantined: v.Quarantined,
		LastError: v.LastError, LastFailure: formatTime(v.LastFailureAt)}
	if v.Quarantined {
		hv.Until = formatTime(v.QuarantinedUntil)
		hv.Remaining = v.QuarantinedUntil.Sub(now).Round(time.Second).String()
	}
	return hv
}

func (h *Handler) dashboard(w http.ResponseWriter, r *http.Request) {
	if !h.pageSession(r) {
		h.page.render(w, http.StatusUnauthorized, "login.html", loginView{})
		return
	}
	ctx := r.Context()
	s, err := h.op.Queue(ctx)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	failing, err := h.op.TopFailing(ctx, topFailing)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	quarantined, err := h.op.Instances(ctx, true)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	dead, err := h.op.RecentDead(ctx, recentDead, deadScan)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	fans, err := h.op.FanOuts(ctx, application.RecentFanOuts)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	v := dashboardView{At: formatTime(s.At), Refresh: RefreshSeconds, CSRF: h.derive("csrf"), Total: s.Total,
		DeadTotal: s.ByState[domain.JobDead], DeadScan: deadScan, FanOutCap: application.RecentFanOuts,
		QuarantineTotal: len(quarantined), QuarantineMore: max(0, len(quarantined)-maxQuarantined)}
	v.Flash = h.takeFlash(w, r)
	for _, st := range domain.JobStates() {
		v.States = append(v.States, stateView{Name: string(st), Count: s.ByState[st]})
	}
	for _, f := range failing {
		v.TopFailing = append(v.TopFailing, toHostView(f, s.At))
	}
	for _, q := range quarantined[:min(len(quarantined), maxQuarantined)] {
		v.Quarantine = append(v.Quarantine, toHostView(q, s.At))
	}
	for _, d := range s.Dead {
		v.DeadHosts = append(v.DeadHosts, stateView{Name: d.Host, Count: d.Count})
	}
	for _, j := range dead {
		v.RecentDead = append(v.RecentDead, deadView{ID: j.ID, Host: j.Host, Inbox: j.Inbox, Error: j.LastError,
			Finished: formatTime(j.FinishedAt), Attempts: j.Attempts})
	}
	for _, f := range fans {
		fv := fanOutView{ID: f.ID, Actor: f.Actor, Started: formatTime(f.CreatedAt), Followers: f.Followers,
			Enqueued: f.Enqueued, Delivered: f.Delivered, Dead: f.Dead, Pending: f.Pending, Done: f.Done}
		if f.Enqueued > 0 {
			fv.Percent = fmt.Sprintf("%.1f%%", 100*float64(f.Delivered)/float64(f.Enqueued))
		}
		v.FanOuts = append(v.FanOuts, fv)
	}
	h.page.render(w, http.StatusOK, "dashboard.html", v)
}

// takeFlash returns the one-time notice of the last form post, and
// forgets it.
func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	h.setCookie(w, r, flashCookie, "", -1)
	msg, _ := url.QueryUnescape(c.Value)
	return msg
}

func (h *Handler) pageError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := classify(err)
	if status >= 500 {
		h.log.Error("operator page failed", "err", err)
	}
	w.Header().Set("Refresh", fmt.Sprint(RefreshSeconds))
	http.Error(w, "operator page: "+msg, status)
}
