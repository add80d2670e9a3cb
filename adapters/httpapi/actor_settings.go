package httpapi

import (
	"fmt"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// registerActorSettings adds the routes of a persona's or group's
// settings: locking (follows wait for approval) and key rotation. Both
// tell the actor's followers with an Update.
func (f *FollowRoutes) registerActorSettings(r *mux.Router) {
	for _, k := range []struct {
		path string
		kind domain.NameKind
	}{{"/api/v1/personas/{name}", domain.NameKindPersona}, {"/api/v1/groups/{name}", domain.NameKindGroup}} {
		r.Handle(k.path, f.authed(f.setLocked(k.kind))).Methods(http.MethodPatch)
		r.Handle(k.path+"/rotate-key", f.authed(f.rotateKey(k.kind))).Methods(http.MethodPost)
	}
	// A group's members and requests are listed as a persona's followers.
	r.Handle("/api/v1/groups/{name}/followers", f.authed(f.listFollowers)).Methods(http.MethodGet)
}

type settingsJSON struct {
	Locked *bool `json:"locked"`
}

type lockSetJSON struct {
	Name    string `json:"name"`
	URI     string `json:"uri"`
	Kind    string `json:"kind"`
	Locked  bool   `json:"locked"`
	Changed bool   `json:"changed"`
	// Accepted counts the pending requests an unlock accepted.
	Accepted int `json:"accepted"`
	// Queued counts the jobs of the Update sent to the followers.
	Queued int `json:"queued"`
}

// setLocked answers PATCH {"locked": bool}: 200 with the state; 404 for
// an unknown actor, 403 for another account's, 422 without "locked".
func (f *FollowRoutes) setLocked(kind domain.NameKind) func(http.ResponseWriter, *http.Request, domain.RootUser) {
	return func(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
		var in settingsJSON
		if !decode(w, r, f.log, &in) {
			return
		}
		if in.Locked == nil {
			writeError(w, r, f.log, fmt.Errorf("%w: the locked field is missing (true or false)", domain.ErrInvalidInput))
			return
		}
		res, err := f.fed.SetLocked.Handle(r.Context(), application.SetLocked{UserID: u.ID, Kind: kind, Name: mux.Vars(r)["name"], Locked: *in.Locked})
		if err != nil {
			writeError(w, r, f.log, err)
			return
		}
		writeJSON(w, http.StatusOK, lockSetJSON{Name: res.Actor.Name, URI: res.Actor.URI, Kind: string(res.Actor.Kind), Locked: res.Actor.Locked,
			Changed: res.Changed, Accepted: res.Accepted, Queued: res.Queued})
	}
}

type keyRotatedJSON struct {
	URI    string `json:"uri"`
	KeyID  string `json:"key_id"`
	Queued int    `json:"queued"`
}

// rotateKey answers POST .../rotate-key: 200 once the new key is stored
// and the Update carrying it queued to the followers.
func (f *FollowRoutes) rotateKey(kind domain.NameKind) func(http.ResponseWriter, *http.Request, domain.RootUser) {
	return func(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
		res, err := f.fed.RotateKey.Handle(r.Context(), application.RotateKey{UserID: u.ID, Kind: kind, Name: mux.Vars(r)["name"]})
		reply(w, r, f.log, err, http.StatusOK, keyRotatedJSON{URI: res.Actor, KeyID: res.KeyID, Queued: res.Queued})
	}
}
