package mastodon

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func (m *Routes) registerTimelines(r routeAdder) {
	r.Handle("/api/v1/timelines/home", m.authed("read:statuses", true, m.homeTimeline), http.MethodGet)
	r.Handle("/api/v1/timelines/public", m.public(m.readStatuses(m.publicTimeline)), http.MethodGet)
	r.Handle("/api/v1/timelines/tag/{hashtag}", m.public(m.readStatuses(m.tagTimeline)), http.MethodGet)
}

// readStatuses lets a public read of statuses through without a token,
// and with one only when it grants read:statuses (a token's persona sees
// more than the public, so its scope is checked as Mastodon does).
func (m *Routes) readStatuses(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
		if p.Token.Hash != "" {
			if err := p.Require("read:statuses"); err != nil {
				writeError(w, r, m.log, err)
				return
			}
		}
		next(w, r, p, in)
	}
}

// homeTimeline is GET /api/v1/timelines/home: the persona's posts and
// boosts and those of whom it follows.
func (m *Routes) homeTimeline(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	m.timeline(w, r, p, in, func(ctx context.Context, page application.Page) ([]application.TimelineEntry, error) {
		return m.api.Statuses.Home(ctx, p, page)
	})
}

// publicTimeline is GET /api/v1/timelines/public: public posts, local=true
// those written here, remote=true those received.
func (m *Routes) publicTimeline(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	origin, err := originOf(in)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	m.timeline(w, r, p, in, func(ctx context.Context, page application.Page) ([]application.TimelineEntry, error) {
		return m.api.Statuses.Public(ctx, p, origin, page)
	})
}

// tagTimeline is GET /api/v1/timelines/tag/:hashtag: the public posts
// with that hashtag (any, all and none are not read).
func (m *Routes) tagTimeline(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	origin, err := originOf(in)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	tag := mux.Vars(r)["hashtag"]
	m.timeline(w, r, p, in, func(ctx context.Context, page application.Page) ([]application.TimelineEntry, error) {
		return m.api.Statuses.Tagged(ctx, p, tag, origin, page)
	})
}

func originOf(in params) (ports.Origin, error) {
	local, _ := in.flag("local")
	remote, _ := in.flag("remote")
	switch {
	case local && remote:
		return "", fmt.Errorf("%w: local and remote exclude each other", domain.ErrInvalidInput)
	case local:
		return ports.OriginLocal, nil
	case remote:
		return ports.OriginRemote, nil
	}
	return ports.OriginAll, nil
}

// timeline answers a page of a timeline: limit (20, at most 40), max_id
// (older than that status), since_id (the newest newer than it) and
// min_id (those right after it), with a Link header to the next (older)
// and previous (newer) pages, as Mastodon's.
func (m *Routes) timeline(w http.ResponseWriter, r *http.Request, p application.Principal, in params,
	read func(context.Context, application.Page) ([]application.TimelineEntry, error)) {
	ctx := withAccounts(r.Context())
	limit, err := in.limit(20, 40)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	page := application.Page{Limit: limit}
	if page.Before, err = m.cursor(ctx, in.get("max_id")); err != nil {
		writeError(w, r, m.log, err)
		return
	}
	for _, k := range []string{"since_id", "min_id"} {
		after, err := m.cursor(ctx, in.get(k))
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		if after.After(page.After) {
			page.After, page.Oldest = after, k == "min_id"
		}
	}
	es, err := read(ctx, page)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out := make([]statusJSON, 0, len(es))
	for _, e := range es {
		s, err := m.entryOf(ctx, p, e)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		out = append(out, s)
	}
	if len(out) > 0 {
		link := func(k, id string) string {
			q := url.Values{k: {id}, "limit": {fmt.Sprint(limit)}}
			for _, keep := range []string{"local", "remote"} {
				if v := in.get(keep); v != "" {
					q.Set(keep, v)
				}
			}
			return fmt.Sprintf(`<%s%s?%s>`, m.app.URLs.Base(), r.URL.Path, q.Encode())
		}
		w.Header().Set("Link", strings.Join([]string{link("max_id", out[len(out)-1].ID) + `; rel="next"`,
			link("min_id", out[0].ID) + `; rel="prev"`}, ", "))
	}
	writeJSON(w, http.StatusOK, out)
}

// entryOf is a timeline entry's status: a post's, or a boost wrapping it.
func (m *Routes) entryOf(ctx context.Context, p application.Principal, e application.TimelineEntry) (statusJSON, error) {
	s, err := m.statusOf(ctx, p, e.Post)
	if err != nil || e.Boost == nil {
		return s, err
	}
	return m.reblogOf(ctx, e.Boost.ActorURI, e.Boost.ActivityURI, e.Boost.CreatedAt, s)
}

// cursor is the time a status id pages from: a post's publication, or
// the time in a boost's id (boostID); zero for none. An id that is
// neither is domain.ErrNotFound, as Mastodon's 404 for an unknown id.
func (m *Routes) cursor(ctx context.Context, id string) (time.Time, error) {
	if id == "" {
		return time.Time{}, nil
	}
	t, err := m.api.Statuses.Published(ctx, id)
	if err == nil || !isNotFound(err) {
		return t, err
	}
	if t, ok := idTime(id); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%w: no status %q", domain.ErrNotFound, id)
}
