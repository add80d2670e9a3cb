package mastodon

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func (m *Routes) registerStatuses(r routeAdder) {
	r.Handle("/api/v1/statuses", m.authed("write:statuses", true, m.createStatus), http.MethodPost)
	r.Handle("/api/v1/statuses/{id}", m.public(m.readStatuses(m.getStatus)), http.MethodGet)
	r.Handle("/api/v1/statuses/{id}", m.authed("write:statuses", true, m.deleteStatus), http.MethodDelete)
	m.registerStatusActions(r)
	m.registerTimelines(r)
	m.registerThreads(r)
}

// idempotency remembers, per token and Idempotency-Key, the status a
// create made, for an hour, as Mastodon does: a client that retries a
// post it could not see succeed gets the same status, not a second one.
// It is kept in the process (docs/api.md: a retry that reaches another
// process posts again).
type idempotency struct {
	mu   sync.Mutex
	seen map[string]idemEntry
}

type idemEntry struct {
	id string
	at time.Time
}

const (
	idempotencyTTL  = time.Hour
	idempotencyKeep = 10_000
)

func (c *idempotency) get(key string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.seen[key]
	if !ok || now.Sub(e.at) > idempotencyTTL {
		return "", false
	}
	return e.id, true
}

func (c *idempotency) put(key, id string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]idemEntry{}
	}
	if len(c.seen) >= idempotencyKeep {
		for k, e := range c.seen {
			if now.Sub(e.at) > idempotencyTTL {
				delete(c.seen, k)
			}
		}
		if len(c.seen) >= idempotencyKeep {
			c.seen = map[string]idemEntry{}
		}
	}
	c.seen[key] = idemEntry{id: id, at: now}
}

// createStatus is POST /api/v1/statuses: status text, spoiler_text,
// sensitive, language, visibility (public, private, direct), in_reply_to_id (any
// status the persona may see, local or remote), a poll (poll[options][],
// poll[expires_in] in seconds, poll[multiple]), and Idempotency-Key.
// The accounts the text mentions are addressed (a direct status goes to
// them alone). Media ids, scheduling and unlisted (which Herald cannot
// express) are refused with 422 (docs/api.md).
func (m *Routes) createStatus(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if key != "" {
		key = p.Token.Hash + "\x00" + key
		if id, ok := m.idem.get(key, time.Now()); ok {
			m.writeStatus(w, r, p, id)
			return
		}
	}
	cmd, err := m.publishOf(r, p, in)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	res, err := m.app.Publish.Handle(r.Context(), cmd)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if key != "" {
		m.idem.put(key, res.ID, time.Now())
	}
	m.writeStatus(w, r, p, res.ID)
}

// publishOf reads a new status's parameters.
func (m *Routes) publishOf(r *http.Request, p application.Principal, in params) (application.Publish, error) {
	bad := func(format string, args ...any) (application.Publish, error) {
		return application.Publish{}, fmt.Errorf("%w: %s", domain.ErrInvalidInput, fmt.Sprintf(format, args...))
	}
	for _, unsupported := range []string{"media_ids", "scheduled_at"} {
		if len(in[unsupported]) > 0 && in.get(unsupported) != "" {
			return bad("%s is not supported: Herald keeps no uploads (docs/api.md)", unsupported)
		}
	}
	cmd := application.Publish{UserID: p.User.ID, As: p.Avatar.Name, Content: in.get("status"), Visibility: domain.VisibilityPublic,
		Summary: in.get("spoiler_text"), Language: in.get("language")}
	cmd.Sensitive, _ = in.flag("sensitive")
	if v := in.get("visibility"); v != "" {
		var ok bool
		if cmd.Visibility, ok = fromMastodonVisibility[v]; !ok {
			return bad("visibility %q is not supported (public, private, direct)", v)
		}
	}
	cmd.To = m.mentioned(r.Context(), cmd.Content)
	if cmd.Visibility == domain.VisibilityDirect && len(cmd.To) == 0 {
		return bad("a direct status needs a mention of whom it goes to (@name or @user@host)")
	}
	if rid := in.get("in_reply_to_id"); rid != "" {
		parent, err := m.api.Statuses.ByID(r.Context(), p, rid)
		if err != nil {
			return application.Publish{}, err
		}
		cmd.InReplyTo = parent.ObjectURI
	}
	if opts := in["poll[options]"]; len(opts) > 0 {
		secs, err := strconv.Atoi(in.get("poll[expires_in]"))
		if err != nil || secs <= 0 {
			return bad("poll[expires_in] must be a number of seconds")
		}
		multiple, _ := in.flag("poll[multiple]")
		cmd.Poll = &application.NewPoll{Options: opts, Multiple: multiple, Duration: time.Duration(secs) * time.Second}
	}
	return cmd, nil
}

// mentionPattern finds @name and @user@host in a status's text, as
// Mastodon reads mentions: after the start or a space.
var mentionPattern = regexp.MustCompile(`(?:^|[\s(])@([A-Za-z0-9_][A-Za-z0-9_.-]*)(?:@([A-Za-z0-9.-]+\.[A-Za-z]{2,}(?::[0-9]+)?))?`)

// maxResolvedMentions bounds the mentions one status resolves (each may
// cost a WebFinger look-up).
const maxResolvedMentions = 20

// mentioned resolves the accounts a status's text mentions to their
// actor URIs: local personas, and remote actors (from the cache, or by
// WebFinger). A mention that resolves to no one is left as text, as
// Mastodon leaves it.
func (m *Routes) mentioned(ctx context.Context, text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range mentionPattern.FindAllStringSubmatch(text, -1) {
		user, host := g[1], strings.ToLower(g[2])
		key := strings.ToLower(user) + "@" + host
		if seen[key] || len(seen) == maxResolvedMentions {
			continue
		}
		seen[key] = true
		if host == "" || host == strings.ToLower(m.app.URLs.Domain) {
			if a, err := m.api.Accounts.Lookup(ctx, user); err == nil {
				out = append(out, m.app.URLs.Persona(a.Name))
			}
			continue
		}
		fa, err := m.fed.Resolver.Account(ctx, user, host)
		if err != nil {
			m.log.DebugContext(ctx, "a mention resolves to no one", "user", user, "host", host, "err", err)
			continue
		}
		out = append(out, fa.ActorURI)
	}
	return out
}

// writeStatus answers the status of that id as the viewer sees it.
func (m *Routes) writeStatus(w http.ResponseWriter, r *http.Request, p application.Principal, id string) {
	post, err := m.api.Statuses.ByID(r.Context(), p, id)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	s, err := m.statusOf(r.Context(), p, post)
	reply(w, r, m.log, err, http.StatusOK, s)
}

// getStatus is GET /api/v1/statuses/:id: any status the token's persona
// may see (without a token, a public one).
func (m *Routes) getStatus(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	m.writeStatus(w, r, p, mux.Vars(r)["id"])
}

// deleteStatus is DELETE /api/v1/statuses/:id: one of the persona's own,
// whose Delete goes out; the answer is the status as it was (Mastodon
// gives its text back for "delete and redraft").
func (m *Routes) deleteStatus(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	id := mux.Vars(r)["id"]
	post, err := m.api.Statuses.Own(r.Context(), p, id)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	s, err := m.statusOf(r.Context(), p, post)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if _, err := m.fed.OwnPosts.Delete(r.Context(), application.DeletePost{UserID: p.User.ID, ID: id}); err != nil {
		writeError(w, r, m.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// accountStatuses is GET /api/v1/accounts/:id/statuses of a local
// persona, newest first, with max_id paging and a Link header.
func (m *Routes) accountStatuses(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	author, err := m.api.Accounts.Persona(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	limit, err := in.limit(20, 40)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	var before time.Time
	if maxID := in.get("max_id"); maxID != "" {
		owner := application.Principal{Avatar: author, Token: domain.OAuthToken{AvatarID: author.ID}}
		post, err := m.api.Statuses.Own(r.Context(), owner, maxID)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		before = post.Published
	}
	posts, err := m.api.Statuses.ByAuthor(r.Context(), p, author, before, limit)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out := make([]statusJSON, 0, len(posts))
	for _, post := range posts {
		s, err := m.statusOf(r.Context(), p, post)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		out = append(out, s)
	}
	if len(out) == limit {
		next := url.Values{"max_id": {out[len(out)-1].ID}, "limit": {fmt.Sprint(limit)}}
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, m.app.URLs.Base(), r.URL.Path, next.Encode()))
	}
	writeJSON(w, http.StatusOK, out)
}
