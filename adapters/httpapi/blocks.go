package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// The client API of a persona's relations beyond following (SPEC §11
// "Personas"): blocks, mutes, unfollowing, removing a follower.
func (f *FollowRoutes) registerRelations(r *mux.Router) {
	r.Handle("/api/v1/blocks", f.authed(f.block)).Methods(http.MethodPost)
	r.Handle("/api/v1/blocks", f.authed(f.unblock)).Methods(http.MethodDelete)
	// The lists need ?as=: without it, GET /api/v1/blocks and /mutes are
	// the Mastodon-compatible API's (adapters/httpapi/mastodon).
	r.Handle("/api/v1/blocks", f.authed(f.listBlocks(domain.BlockKindBlock))).Methods(http.MethodGet).Queries("as", "{as}")
	r.Handle("/api/v1/mutes", f.authed(f.mute(false))).Methods(http.MethodPost)
	r.Handle("/api/v1/mutes", f.authed(f.mute(true))).Methods(http.MethodDelete)
	r.Handle("/api/v1/mutes", f.authed(f.listBlocks(domain.BlockKindMute))).Methods(http.MethodGet).Queries("as", "{as}")
	r.Handle("/api/v1/follows", f.authed(f.unfollow)).Methods(http.MethodDelete)
	r.Handle("/api/v1/followers/remove", f.authed(f.removeFollower)).Methods(http.MethodPost)
}

// asTarget reads {"as","target"} from the body, or from ?as=&target= when
// both are in the query (a DELETE that a proxy sends without its body).
func asTarget(w http.ResponseWriter, r *http.Request) (followJSON, error) {
	q := r.URL.Query()
	if q.Get("as") != "" && q.Get("target") != "" {
		return followJSON{As: q.Get("as"), Target: q.Get("target")}, nil
	}
	var in followJSON
	err := decodeJSON(w, r, &in)
	return in, err
}

type blockedJSON struct {
	Target          string `json:"target"`
	Activity        string `json:"activity"`
	Created         bool   `json:"created"`
	Unfollowed      bool   `json:"unfollowed"`
	FollowerRemoved bool   `json:"follower_removed"`
	Queued          int    `json:"queued"`
}

// block answers 201 for a new block (its Block queued) and 200 when the
// persona blocked the target already.
func (f *FollowRoutes) block(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	in, err := asTarget(w, r)
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	res, err := f.fed.Block.Handle(r.Context(), application.BlockActor{UserID: u.ID, As: in.As, Target: in.Target})
	reply(w, r, f.log, err, createdOrOK(res.Created), blockedJSON{Target: res.Target, Activity: res.ActivityID, Created: res.Created,
		Unfollowed: res.Unfollowed, FollowerRemoved: res.FollowerRemoved, Queued: res.Queued})
}

type undoneJSON struct {
	Target   string `json:"target"`
	Activity string `json:"activity,omitempty"`
	State    string `json:"state,omitempty"`
	Queued   int    `json:"queued"`
}

// unblock answers 200 with the Undo queued; 404 when the persona does not
// block the target.
func (f *FollowRoutes) unblock(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	in, err := asTarget(w, r)
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	res, err := f.fed.Unblock.Handle(r.Context(), application.UnblockActor{UserID: u.ID, As: in.As, Target: in.Target})
	reply(w, r, f.log, err, http.StatusOK, undoneJSON{Target: res.Target, Activity: res.ActivityID, Queued: res.Queued})
}

type blockJSON struct {
	Target string    `json:"target"`
	Since  time.Time `json:"since"`
}

type blocksJSON struct {
	Blocks []blockJSON `json:"blocks"`
	Next   string      `json:"next,omitempty"` // pass as ?after= for the next page
}

// listBlocks lists a persona's blocks or mutes: ?as=<persona>,
// ?after=<target URI>, ?limit=<n>.
func (f *FollowRoutes) listBlocks(kind domain.BlockKind) func(http.ResponseWriter, *http.Request, domain.RootUser) {
	return func(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
		q := r.URL.Query()
		limit, err := intParam(q.Get("limit"))
		if err != nil {
			writeError(w, r, f.log, err)
			return
		}
		page, err := f.fed.Blocks.Handle(r.Context(), application.ListBlocks{UserID: u.ID, As: q.Get("as"), Kind: kind, After: q.Get("after"), Limit: limit})
		if err != nil {
			writeError(w, r, f.log, err)
			return
		}
		out := blocksJSON{Blocks: make([]blockJSON, 0, len(page.Blocks)), Next: page.Next}
		for _, b := range page.Blocks {
			out.Blocks = append(out.Blocks, blockJSON{Target: b.TargetURI, Since: b.CreatedAt})
		}
		writeJSON(w, http.StatusOK, out)
	}
}

type mutedJSON struct {
	Target  string `json:"target"`
	Muted   bool   `json:"muted"`
	Changed bool   `json:"changed"`
}

// mute mutes (POST) or unmutes (DELETE): 200 either way, changed false
// when it was so already.
func (f *FollowRoutes) mute(unmute bool) func(http.ResponseWriter, *http.Request, domain.RootUser) {
	return func(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
		in, err := asTarget(w, r)
		if err != nil {
			writeError(w, r, f.log, err)
			return
		}
		res, err := f.fed.Mute.Handle(r.Context(), application.MuteActor{UserID: u.ID, As: in.As, Target: in.Target, Unmute: unmute})
		reply(w, r, f.log, err, http.StatusOK, mutedJSON{Target: res.Target, Muted: !unmute, Changed: res.Changed})
	}
}

// unfollow ends a follow, pending or accepted (its Undo queued): 200 with
// the state it had; 404 when the persona does not follow the target.
func (f *FollowRoutes) unfollow(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	in, err := asTarget(w, r)
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	res, err := f.fed.Unfollow.Handle(r.Context(), application.Unfollow{UserID: u.ID, As: in.As, Target: in.Target})
	reply(w, r, f.log, err, http.StatusOK, undoneJSON{Target: res.Target, Activity: res.ActivityID, State: string(res.State), Queued: res.Queued})
}

// removeFollower removes a follower (its Follow rejected): 200; 404 when
// the target does not follow the persona.
func (f *FollowRoutes) removeFollower(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	in, err := asTarget(w, r)
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	res, err := f.fed.RemoveFollower.Handle(r.Context(), application.RemoveFollower{UserID: u.ID, As: in.As, Target: in.Target})
	reply(w, r, f.log, err, http.StatusOK, map[string]string{"target": res.Target, "state": "removed"})
}
