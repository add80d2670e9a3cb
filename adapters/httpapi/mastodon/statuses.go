package mastodon

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func (m *Routes) registerStatuses(r routeAdder) {
	r.Handle("/api/v1/statuses", m.authed("write:statuses", true, m.createStatus), http.MethodPost)
	r.Handle("/api/v1/statuses/{id}", m.authed("read:statuses", true, m.getStatus), http.MethodGet)
	r.Handle("/api/v1/statuses/{id}", m.authed("write:statuses", true, m.deleteStatus), http.MethodDelete)
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

// createStatus is POST /api/v1/statuses: status text, visibility
// (public, private), in_reply_to_id (a status of the persona's own), and
// Idempotency-Key. Polls, media, spoiler text and scheduling are refused
// with 422 until posts carry them.
func (m *Routes) createStatus(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if key != "" {
		key = p.Token.Hash + "\x00" + key
		if id, ok := m.idem.get(key, time.Now()); ok {
			m.writeOwnStatus(w, r, p, id)
			return
		}
	}
	for _, unsupported := range []string{"media_ids", "poll[options]", "scheduled_at"} {
		if len(in[unsupported]) > 0 {
			writeError(w, r, m.log, fmt.Errorf("%w: %s is not supported yet", domain.ErrInvalidInput, strings.TrimSuffix(unsupported, "[options]")))
			return
		}
	}
	if in.get("spoiler_text") != "" {
		writeError(w, r, m.log, fmt.Errorf("%w: spoiler_text is not supported yet", domain.ErrInvalidInput))
		return
	}
	vis := domain.VisibilityPublic
	if v := in.get("visibility"); v != "" {
		var ok bool
		if vis, ok = fromMastodonVisibility[v]; !ok {
			writeError(w, r, m.log, fmt.Errorf("%w: visibility %q is not supported yet (public, private)", domain.ErrInvalidInput, v))
			return
		}
	}
	inReplyTo := ""
	if rid := in.get("in_reply_to_id"); rid != "" {
		parent, err := m.api.Statuses.Own(r.Context(), p, rid)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		inReplyTo = parent.ObjectURI
	}
	res, err := m.app.Publish.Handle(r.Context(), application.Publish{UserID: p.User.ID, As: p.Avatar.Name, Content: in.get("status"),
		Visibility: vis, InReplyTo: inReplyTo})
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if key != "" {
		m.idem.put(key, res.ID, time.Now())
	}
	m.writeOwnStatus(w, r, p, res.ID)
}

func (m *Routes) writeOwnStatus(w http.ResponseWriter, r *http.Request, p application.Principal, id string) {
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
	writeJSON(w, http.StatusOK, s)
}

// getStatus is GET /api/v1/statuses/:id: the persona's own statuses.
func (m *Routes) getStatus(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	m.writeOwnStatus(w, r, p, mux.Vars(r)["id"])
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
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, m.api.URLs.Base(), r.URL.Path, next.Encode()))
	}
	writeJSON(w, http.StatusOK, out)
}
