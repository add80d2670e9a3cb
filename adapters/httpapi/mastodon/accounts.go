package mastodon

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// accountJSON is Mastodon's Account entity. Source is only in the
// token's own account (verify_credentials, update_credentials).
type accountJSON struct {
	ID             string      `json:"id"`
	Username       string      `json:"username"`
	Acct           string      `json:"acct"`
	DisplayName    string      `json:"display_name"`
	Locked         bool        `json:"locked"`
	Bot            bool        `json:"bot"`
	Discoverable   bool        `json:"discoverable"`
	Group          bool        `json:"group"`
	CreatedAt      string      `json:"created_at"`
	Note           string      `json:"note"`
	URL            string      `json:"url"`
	URI            string      `json:"uri"`
	Avatar         string      `json:"avatar"`
	AvatarStatic   string      `json:"avatar_static"`
	Header         string      `json:"header"`
	HeaderStatic   string      `json:"header_static"`
	FollowersCount int         `json:"followers_count"`
	FollowingCount int         `json:"following_count"`
	StatusesCount  int         `json:"statuses_count"`
	LastStatusAt   *string     `json:"last_status_at"`
	Emojis         []any       `json:"emojis"`
	Fields         []any       `json:"fields"`
	Source         *sourceJSON `json:"source,omitempty"`
}

type sourceJSON struct {
	Privacy             string `json:"privacy"`
	Sensitive           bool   `json:"sensitive"`
	Language            string `json:"language"`
	Note                string `json:"note"`
	Fields              []any  `json:"fields"`
	FollowRequestsCount int    `json:"follow_requests_count"`
}

func mastodonTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// localAccount is the entity of a local persona, with its counts.
func (m *Routes) localAccount(ctx context.Context, a domain.Avatar) (accountJSON, error) {
	uri := m.app.URLs.Persona(a.Name)
	stats, err := m.api.Accounts.Stats(ctx, uri)
	if err != nil {
		return accountJSON{}, err
	}
	display := a.DisplayName
	if display == "" {
		display = a.Name
	}
	return accountJSON{ID: a.ID, Username: a.Name, Acct: a.Name, DisplayName: display, Locked: a.Locked, Discoverable: true,
		Note:      m.api.Accounts.NoteHTML(a),
		CreatedAt: mastodonTime(a.CreatedAt), URL: uri, URI: uri, FollowersCount: stats.Followers, FollowingCount: stats.Following,
		Emojis: []any{}, Fields: []any{}}, nil
}

func (m *Routes) registerAccounts(r routeAdder) {
	r.Handle("/api/v1/accounts/verify_credentials", m.authed("profile", true, m.verifyCredentials), http.MethodGet)
	r.Handle("/api/v1/accounts/update_credentials", m.authed("write:accounts", true, m.updateCredentials), http.MethodPatch)
	r.Handle("/api/v1/accounts/lookup", m.public(m.lookupAccount), http.MethodGet)
	r.Handle("/api/v1/accounts/{id}", m.public(m.getAccount), http.MethodGet)
	r.Handle("/api/v1/accounts/{id}/statuses", m.public(m.accountStatuses), http.MethodGet)
}

// ownAccount is the token's persona with its source.
func (m *Routes) ownAccount(ctx context.Context, p application.Principal) (accountJSON, error) {
	a, err := m.localAccount(ctx, p.Avatar)
	if err != nil {
		return accountJSON{}, err
	}
	pending, err := m.fed.Followers.Handle(ctx, application.ListFollowers{UserID: p.User.ID, Persona: p.Avatar.Name, State: domain.FollowPending, Limit: 1})
	if err != nil {
		return accountJSON{}, err
	}
	a.Source = &sourceJSON{Privacy: "public", Language: "", Note: p.Avatar.Note, Fields: []any{}, FollowRequestsCount: pending.Total}
	return a, nil
}

// verifyCredentials is GET /api/v1/accounts/verify_credentials: the
// persona the token acts as.
func (m *Routes) verifyCredentials(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	a, err := m.ownAccount(r.Context(), p)
	reply(w, r, m.log, err, http.StatusOK, a)
}

// updateCredentials is PATCH /api/v1/accounts/update_credentials: the
// display name and bio (note, plain text; application.UpdateProfile,
// Mastodon's limits, 422 over them) and locked (manuallyApprovesFollowers),
// each change sent to the followers as an Update{Person}. The lock goes
// last, so the last Update carries every change.
func (m *Routes) updateCredentials(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	cmd := application.UpdateProfile{UserID: p.User.ID, Persona: p.Avatar.Name}
	if in.has("display_name") {
		v := in.get("display_name")
		cmd.DisplayName = &v
	}
	if in.has("note") {
		v := in.get("note")
		cmd.Note = &v
	}
	if cmd.DisplayName != nil || cmd.Note != nil {
		res, err := m.fed.UpdateProfile.Handle(r.Context(), cmd)
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		p.Avatar.DisplayName, p.Avatar.Note = res.Avatar.DisplayName, res.Avatar.Note
	}
	if locked, set := in.flag("locked"); set && locked != p.Avatar.Locked {
		res, err := m.fed.SetLocked.Handle(r.Context(), application.SetLocked{UserID: p.User.ID, Kind: domain.NameKindPersona, Name: p.Avatar.Name, Locked: locked})
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		p.Avatar.Locked = res.Actor.Locked
	}
	a, err := m.ownAccount(r.Context(), p)
	reply(w, r, m.log, err, http.StatusOK, a)
}

// lookupAccount is GET /api/v1/accounts/lookup?acct=: local personas.
func (m *Routes) lookupAccount(w http.ResponseWriter, r *http.Request, _ application.Principal, in params) {
	a, err := m.api.Accounts.Lookup(r.Context(), in.get("acct"))
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out, err := m.localAccount(r.Context(), a)
	reply(w, r, m.log, err, http.StatusOK, out)
}

// getAccount is GET /api/v1/accounts/:id: a local persona, or a remote
// actor Herald gave an account id and still caches.
func (m *Routes) getAccount(w http.ResponseWriter, r *http.Request, _ application.Principal, _ params) {
	id := mux.Vars(r)["id"]
	a, err := m.api.Accounts.Persona(r.Context(), id)
	if errors.Is(err, domain.ErrNotFound) {
		remote, rerr := m.api.Accounts.Remote(r.Context(), id)
		if rerr != nil {
			writeError(w, r, m.log, rerr)
			return
		}
		writeJSON(w, http.StatusOK, remoteAccount(remote))
		return
	}
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out, err := m.localAccount(r.Context(), a)
	reply(w, r, m.log, err, http.StatusOK, out)
}
