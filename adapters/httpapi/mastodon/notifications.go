package mastodon

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// notificationJSON is Mastodon's Notification entity (4.x). group_key is
// "ungrouped-" and the id: Herald groups none.
type notificationJSON struct {
	ID        string      `json:"id"`
	Type      string      `json:"type"`
	GroupKey  string      `json:"group_key"`
	CreatedAt string      `json:"created_at"`
	Account   accountJSON `json:"account"`
	Status    *statusJSON `json:"status,omitempty"`
}

// Page sizes of GET /api/v1/notifications, as Mastodon's.
const (
	notificationsLimit    = 40
	notificationsMaxLimit = 80
)

func (m *Routes) registerNotifications(r routeAdder) {
	r.Handle("/api/v1/notifications", m.authed("read:notifications", true, m.listNotifications), http.MethodGet)
	r.Handle("/api/v1/notifications/clear", m.authed("write:notifications", true, m.clearNotifications), http.MethodPost)
	r.Handle("/api/v1/notifications/{id}", m.authed("read:notifications", true, m.getNotification), http.MethodGet)
	r.Handle("/api/v1/notifications/{id}/dismiss", m.authed("write:notifications", true, m.dismissNotification), http.MethodPost)
}

// notificationKinds reads types[] or exclude_types[]: Herald's kinds
// among them. Other names (Mastodon's types Herald never records, or
// types of a later version) are passed over, as Mastodon passes over
// types it does not know; none is true when some were named and none is
// Herald's.
func notificationKinds(vs []string) (kinds []domain.NotificationKind, none bool) {
	for _, v := range vs {
		if k := domain.NotificationKind(v); k.Valid() {
			kinds = append(kinds, k)
		}
	}
	return kinds, len(vs) > 0 && len(kinds) == 0
}

// listNotifications is GET /api/v1/notifications: the persona's, newest
// first, paged by max_id, since_id and min_id with a Link header.
func (m *Routes) listNotifications(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	limit, err := in.limit(notificationsLimit, notificationsMaxLimit)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	kinds, none := notificationKinds(in["types"])
	exclude, _ := notificationKinds(in["exclude_types"])
	if none {
		// Only types Herald never records.
		writeJSON(w, http.StatusOK, []notificationJSON{})
		return
	}
	q := application.NotificationsQuery{AccountID: in.get("account_id"), Filter: domain.NotificationFilter{
		MaxID: in.get("max_id"), SinceID: in.get("since_id"), MinID: in.get("min_id"), Kinds: kinds, Exclude: exclude, Limit: limit}}
	page, err := m.api.Notifications.List(r.Context(), p, q)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	writePage(m, w, r, in, page.Items, page.Oldest, page.Newest, func(it application.NotificationItem) (notificationJSON, error) {
		return m.notificationOf(r, p, it)
	})
}

// writePage answers a page's entities, each made by of from an item, with
// the page's Link header (none for an empty page).
func writePage[T, U any](m *Routes, w http.ResponseWriter, r *http.Request, in params, items []T, oldest, newest string, of func(T) (U, error)) {
	out := make([]U, 0, len(items))
	for _, it := range items {
		v, err := of(it)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		out = append(out, v)
	}
	if newest != "" {
		w.Header().Set("Link", m.pageLinks(r, in, oldest, newest))
	}
	writeJSON(w, http.StatusOK, out)
}

// pageLinks is the Link header of a page: next (older: max_id of its
// oldest) and prev (newer: min_id of its newest), keeping the filters.
func (m *Routes) pageLinks(r *http.Request, in params, oldest, newest string) string {
	link := func(key, id, rel string) string {
		v := url.Values{}
		for _, k := range []string{"limit", "account_id"} {
			if in.has(k) {
				v.Set(k, in.get(k))
			}
		}
		for _, k := range []string{"types", "exclude_types"} {
			for _, t := range in[k] {
				v.Add(k+"[]", t)
			}
		}
		v.Set(key, id)
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, m.app.URLs.Base(), r.URL.Path, v.Encode(), rel)
	}
	return strings.Join([]string{link("max_id", oldest, "next"), link("min_id", newest, "prev")}, ", ")
}

// getNotification is GET /api/v1/notifications/:id.
func (m *Routes) getNotification(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	it, err := m.api.Notifications.Get(r.Context(), p, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	n, err := m.notificationOf(r, p, it)
	reply(w, r, m.log, err, http.StatusOK, n)
}

// dismissNotification is POST /api/v1/notifications/:id/dismiss: an
// empty object, as Mastodon answers.
func (m *Routes) dismissNotification(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	reply(w, r, m.log, m.api.Notifications.Dismiss(r.Context(), p, mux.Vars(r)["id"]), http.StatusOK, struct{}{})
}

// clearNotifications is POST /api/v1/notifications/clear.
func (m *Routes) clearNotifications(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	reply(w, r, m.log, m.api.Notifications.Clear(r.Context(), p), http.StatusOK, struct{}{})
}

// notificationOf is the entity of one notification: its actor's account
// and, but for a follow, its post as the persona sees it.
func (m *Routes) notificationOf(r *http.Request, p application.Principal, it application.NotificationItem) (notificationJSON, error) {
	acct, err := m.accountOf(r.Context(), it.ActorURI)
	if err != nil {
		return notificationJSON{}, err
	}
	n := notificationJSON{ID: it.ID, Type: string(it.Kind), GroupKey: "ungrouped-" + it.ID, CreatedAt: mastodonTime(it.CreatedAt), Account: acct}
	if it.Post.ID != "" {
		s, err := m.statusOf(r.Context(), p, it.Post)
		if err != nil {
			return notificationJSON{}, err
		}
		n.Status = &s
	}
	return n, nil
}
