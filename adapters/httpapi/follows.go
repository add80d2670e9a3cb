package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// FollowRoutes is the client API of follows and relations: following an
// actor, listing a persona's followers, blocks, reports, a persona's
// settings; it registers the posts API beside it (PostRoutes). It is one
// of New's extra Routes.
type FollowRoutes struct {
	authenticator
	fed *application.Federation // app's, which acts
}

// NewFollowRoutes builds the routes; app authenticates, its Federation
// acts.
func NewFollowRoutes(app *application.Application, log *slog.Logger) *FollowRoutes {
	return &FollowRoutes{authenticator: newAuthenticator(app, log), fed: &app.Federation}
}

// Register implements Routes.
func (f *FollowRoutes) Register(r *mux.Router) {
	r.Handle("/api/v1/follows", f.authed(f.follow)).Methods(http.MethodPost)
	r.Handle("/api/v1/personas/{name}/followers", f.authed(f.listFollowers)).Methods(http.MethodGet)
	r.Handle("/api/v1/follow_requests/authorize", f.authed(f.answerFollow(true))).Methods(http.MethodPost)
	r.Handle("/api/v1/follow_requests/reject", f.authed(f.answerFollow(false))).Methods(http.MethodPost)
	r.Handle("/api/v1/reports", f.authed(f.report)).Methods(http.MethodPost)
	NewPostRoutes(f.app, f.log).Register(r)
	f.registerActorSettings(r)
	f.registerRelations(r)
}

type followJSON struct {
	As     string `json:"as"`
	Target string `json:"target"`
}

type followedJSON struct {
	Target   string `json:"target"`
	State    string `json:"state"`
	Activity string `json:"activity,omitempty"`
	Created  bool   `json:"created"`
	Queued   int    `json:"queued"`
}

// follow answers 201 for a new follow (pending until the remote accepts,
// accepted at once for a local actor) and 200 when the persona already
// followed or asked to follow the target.
func (f *FollowRoutes) follow(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in followJSON
	if !decode(w, r, f.log, &in) {
		return
	}
	res, err := f.fed.FollowRemote.Handle(r.Context(), application.FollowRemote{UserID: u.ID, As: in.As, Target: in.Target})
	reply(w, r, f.log, err, createdOrOK(res.Created), followedJSON{Target: res.Target, State: string(res.State), Activity: res.ActivityID, Created: res.Created, Queued: res.Queued})
}

type followRequestJSON struct {
	As       string `json:"as"`
	Follower string `json:"follower"`
}

type followAnsweredJSON struct {
	Follower string `json:"follower"`
	State    string `json:"state"` // "accepted", or "rejected"
	Changed  bool   `json:"changed"`
}

// answerFollow accepts or rejects a follow waiting for the persona's
// approval (GET /api/v1/personas/{name}/followers?state=pending lists
// them): 200 with the new state; 404 when that actor does not follow or
// ask to follow the persona.
func (f *FollowRoutes) answerFollow(accept bool) func(http.ResponseWriter, *http.Request, domain.RootUser) {
	return func(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
		var in followRequestJSON
		if !decode(w, r, f.log, &in) {
			return
		}
		res, err := f.fed.AnswerFollow.Handle(r.Context(), application.AnswerFollowRequest{UserID: u.ID, As: in.As, Follower: in.Follower, Accept: accept})
		if err != nil {
			writeError(w, r, f.log, err)
			return
		}
		state := string(res.State)
		if !accept {
			state = "rejected"
		}
		writeJSON(w, http.StatusOK, followAnsweredJSON{Follower: in.Follower, State: state, Changed: res.Changed})
	}
}

type followerJSON struct {
	URI   string    `json:"uri"`
	State string    `json:"state"`
	Since time.Time `json:"since"`
}

type followersJSON struct {
	Total     int            `json:"total"`
	Followers []followerJSON `json:"followers"`
	Next      string         `json:"next,omitempty"` // pass as ?after= for the next page
}

// listFollowers pages with ?after=<uri>&limit=<n>&state=pending|accepted.
func (f *FollowRoutes) listFollowers(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"))
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	page, err := f.fed.Followers.Handle(r.Context(), application.ListFollowers{
		UserID: u.ID, Persona: mux.Vars(r)["name"], State: domain.FollowState(q.Get("state")), After: q.Get("after"), Limit: limit,
	})
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	out := followersJSON{Total: page.Total, Followers: make([]followerJSON, 0, len(page.Followers)), Next: page.Next}
	for _, fl := range page.Followers {
		out.Followers = append(out.Followers, followerJSON{URI: fl.FollowerURI, State: string(fl.State), Since: fl.CreatedAt})
	}
	writeJSON(w, http.StatusOK, out)
}

// pageParams reads a listing's ?before=<RFC 3339> (zero when absent) and
// ?limit=<n> (20 when absent).
func pageParams(q url.Values) (before time.Time, limit int, err error) {
	if limit, err = intParam(q.Get("limit")); err != nil {
		return time.Time{}, 0, err
	}
	if limit == 0 {
		limit = 20
	}
	if b := q.Get("before"); b != "" {
		if before, err = time.Parse(time.RFC3339Nano, b); err != nil {
			return time.Time{}, 0, fmt.Errorf("%w: before=%q is not an RFC 3339 time", errMalformed, b)
		}
	}
	return before, limit, nil
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func intParam(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a number", errMalformed, v)
	}
	return n, nil
}
