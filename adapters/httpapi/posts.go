package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

type editJSON struct {
	Content string `json:"content"`
}

type ownPostJSON struct {
	URI      string `json:"uri"`
	Activity string `json:"activity"`
	Content  string `json:"content,omitempty"`
	Updated  string `json:"updated,omitempty"`
	Queued   int    `json:"queued"`
}

// editPost replaces the content of one of the account's posts
// (PATCH /api/v1/posts/{id} {"content"}) and sends its Update: 200; 404
// for a post that is not the account's.
func (f *FollowRoutes) editPost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in editJSON
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, f.log, err)
		return
	}
	res, err := f.fed.OwnPosts.Edit(r.Context(), application.EditPost{UserID: u.ID, ID: mux.Vars(r)["id"], Content: in.Content})
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	writeJSON(w, http.StatusOK, ownPostJSON{URI: res.ObjectURI, Activity: res.ActivityID, Content: res.Content,
		Updated: res.Updated.UTC().Format(time.RFC3339Nano), Queued: res.Queued})
}

// deletePost deletes one of the account's posts (DELETE
// /api/v1/posts/{id}) and sends its Delete: 200 with what was queued; 404
// for a post that is not the account's.
func (f *FollowRoutes) deletePost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	res, err := f.fed.OwnPosts.Delete(r.Context(), application.DeletePost{UserID: u.ID, ID: mux.Vars(r)["id"]})
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	writeJSON(w, http.StatusOK, ownPostJSON{URI: res.ObjectURI, Activity: res.ActivityID, Queued: res.Queued})
}

type boostJSON struct {
	As     string `json:"as"`
	Object string `json:"object"`
}

type boostedJSON struct {
	Object   string `json:"object"`
	Activity string `json:"activity,omitempty"`
	Created  bool   `json:"created"`
	Queued   int    `json:"queued"`
}

// boost makes a persona boost a note (POST /api/v1/boosts {"as",
// "object"}): 201 for a new boost, 200 when it was boosted already.
func (f *FollowRoutes) boost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in boostJSON
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, f.log, err)
		return
	}
	res, err := f.fed.Boost.Handle(r.Context(), application.Boost{UserID: u.ID, As: in.As, Object: in.Object})
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, boostedJSON{Object: res.ObjectURI, Activity: res.ActivityID, Created: res.Created, Queued: res.Queued})
}

// unboost takes a persona's boost back (DELETE
// /api/v1/boosts?as=<persona>&object=<note URI>) and sends the Undo: 200,
// with created false when there was no such boost.
func (f *FollowRoutes) unboost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	q := r.URL.Query()
	res, err := f.fed.Boost.Undo(r.Context(), application.Boost{UserID: u.ID, As: q.Get("as"), Object: q.Get("object")})
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	writeJSON(w, http.StatusOK, boostedJSON{Object: res.ObjectURI, Activity: res.ActivityID, Created: res.Created, Queued: res.Queued})
}
