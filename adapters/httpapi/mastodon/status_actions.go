package mastodon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func (m *Routes) registerStatusActions(r routeAdder) {
	r.Handle("/api/v1/statuses/{id}/favourite", m.authed("write:favourites", true, m.favourite), http.MethodPost)
	r.Handle("/api/v1/statuses/{id}/unfavourite", m.authed("write:favourites", true, m.unfavourite), http.MethodPost)
	r.Handle("/api/v1/statuses/{id}/reblog", m.authed("write:statuses", true, m.reblog), http.MethodPost)
	r.Handle("/api/v1/statuses/{id}/unreblog", m.authed("write:statuses", true, m.unreblog), http.MethodPost)
}

// favourite is POST /api/v1/statuses/:id/favourite: the persona likes a
// status it may see (a Like goes to a remote author); the answer is the
// status, favourited. Liking it again changes nothing.
func (m *Routes) favourite(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	m.act(w, r, p, func(ctx context.Context, post domain.Post) error {
		_, err := m.fed.Favourite.Handle(ctx, application.Favourite{UserID: p.User.ID, As: p.Avatar.Name, Object: post.ObjectURI})
		return err
	})
}

// unfavourite is POST /api/v1/statuses/:id/unfavourite: the like, if
// any, is taken back (an Undo goes to a remote author).
func (m *Routes) unfavourite(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	m.act(w, r, p, func(ctx context.Context, post domain.Post) error {
		_, err := m.fed.Favourite.Undo(ctx, application.Favourite{UserID: p.User.ID, As: p.Avatar.Name, Object: post.ObjectURI})
		return err
	})
}

// unreblog is POST /api/v1/statuses/:id/unreblog: the persona's boost, if
// any, is taken back; the answer is the status.
func (m *Routes) unreblog(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	m.act(w, r, p, func(ctx context.Context, post domain.Post) error {
		_, err := m.fed.Boost.Undo(ctx, application.Boost{UserID: p.User.ID, As: p.Avatar.Name, Object: post.ObjectURI})
		return err
	})
}

// act does something to a status the persona may see and answers the
// status as it is after.
func (m *Routes) act(w http.ResponseWriter, r *http.Request, p application.Principal, do func(context.Context, domain.Post) error) {
	post, err := m.api.Statuses.ByID(r.Context(), p, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if err := do(r.Context(), post); err != nil {
		writeError(w, r, m.log, err)
		return
	}
	m.writeStatus(w, r, p, post.ID)
}

// reblog is POST /api/v1/statuses/:id/reblog: the persona boosts a
// public status (its Announce goes to its followers and the author); the
// answer is the boost, a status whose reblog is the one boosted.
func (m *Routes) reblog(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	ctx := r.Context()
	post, err := m.api.Statuses.ByID(ctx, p, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if post.Visibility != domain.VisibilityPublic {
		writeJSON(w, http.StatusUnprocessableEntity, mastodonError{Error: "Validation failed: only public statuses can be reblogged"})
		return
	}
	res, err := m.fed.Boost.Handle(ctx, application.Boost{UserID: p.User.ID, As: p.Avatar.Name, Object: post.ObjectURI})
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	inner, err := m.statusOf(ctx, p, post)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	me := m.app.URLs.Persona(p.Avatar.Name)
	s, err := m.reblogOf(ctx, me, res.ActivityID, m.api.Statuses.Now(), inner)
	reply(w, r, m.log, err, http.StatusOK, s)
}

// reblogOf is the status entity of a boost by actorURI of the status
// inner, made at `at`. Its id is boostID's; uri the Announce's when known.
func (m *Routes) reblogOf(ctx context.Context, actorURI, announce string, at time.Time, inner statusJSON) (statusJSON, error) {
	acct, err := m.accountOf(ctx, actorURI)
	if err != nil {
		return statusJSON{}, err
	}
	uri := announce
	if uri == "" {
		uri = inner.URI
	}
	return statusJSON{ID: boostID(actorURI, inner.URI, at), URI: uri, URL: inner.URL, CreatedAt: mastodonTime(at), Account: acct,
		Visibility: "public", MediaAttachments: []mediaJSON{}, Mentions: []mentionJSON{}, Tags: []tagJSON{}, Emojis: []emojiJSON{},
		Reblog: &inner, Favourited: inner.Favourited, Reblogged: inner.Reblogged}, nil
}

// boostID is the status id of a boost: a UUIDv7 whose time is the
// boost's and whose rest hashes (booster, note), so ids of boosts sort
// with those of posts and a boost's id is the same every time it is
// shown, without storing it. A boost is not a post here: its id pages a
// timeline (max_id) but GET /api/v1/statuses/:id does not find it.
func boostID(actorURI, objectURI string, at time.Time) string {
	sum := sha256.Sum256([]byte(actorURI + "\n" + objectURI))
	var u [16]byte
	ms := uint64(at.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	copy(u[6:], sum[:10])
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // RFC 9562 variant
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// idTime is the time in a UUIDv7 status id (a boost's, or a post's own);
// ok is false for an id that is none.
func idTime(id string) (time.Time, bool) {
	if len(id) != 36 || id[14] != '7' {
		return time.Time{}, false
	}
	b, err := hex.DecodeString(id[0:8] + id[9:13])
	if err != nil {
		return time.Time{}, false
	}
	var ms int64
	for _, x := range b {
		ms = ms<<8 | int64(x)
	}
	return time.UnixMilli(ms).UTC(), true
}
