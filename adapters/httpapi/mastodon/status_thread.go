package mastodon

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func (m *Routes) registerThreads(r routeAdder) {
	r.Handle("/api/v1/statuses/{id}/context", m.public(m.readStatuses(m.statusContext)), http.MethodGet)
	r.Handle("/api/v1/statuses/{id}", m.authed("write:statuses", true, m.editStatus), http.MethodPut)
	r.Handle("/api/v1/polls/{id}", m.public(m.readStatuses(m.getPoll)), http.MethodGet)
	r.Handle("/api/v1/polls/{id}/votes", m.authed("write:statuses", true, m.votePoll), http.MethodPost)
	r.Handle("/api/v1/media", m.authed("write:media", true, m.uploadMedia), http.MethodPost)
	r.Handle("/api/v2/media", m.authed("write:media", true, m.uploadMedia), http.MethodPost)
}

// contextJSON is Mastodon's Context.
type contextJSON struct {
	Ancestors   []statusJSON `json:"ancestors"`
	Descendants []statusJSON `json:"descendants"`
}

// statusContext is GET /api/v1/statuses/:id/context: the thread around a
// status, from the posts held here, as the viewer may see it.
func (m *Routes) statusContext(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	ctx := withAccounts(r.Context())
	post, err := m.api.Statuses.ByID(ctx, p, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	up, down, err := m.api.Statuses.Context(ctx, p, post)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	out := contextJSON{Ancestors: make([]statusJSON, 0, len(up)), Descendants: make([]statusJSON, 0, len(down))}
	for _, list := range []struct {
		posts []domain.Post
		into  *[]statusJSON
	}{{up, &out.Ancestors}, {down, &out.Descendants}} {
		for _, q := range list.posts {
			s, err := m.statusOf(ctx, p, q)
			if err != nil {
				writeError(w, r, m.log, err)
				return
			}
			*list.into = append(*list.into, s)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// editStatus is PUT /api/v1/statuses/:id: a new text for one of the
// persona's own statuses (its Update goes out). Herald edits the text
// only: a content warning, sensitivity, language or poll other than the
// status has is refused with 422 (docs/api.md), rather than dropped.
func (m *Routes) editStatus(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	ctx := r.Context()
	id := mux.Vars(r)["id"]
	post, err := m.api.Statuses.Own(ctx, p, id)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	refuse := func(what string) {
		writeError(w, r, m.log, fmt.Errorf("%w: Herald edits a status's text only, not its %s", domain.ErrInvalidInput, what))
	}
	sensitive, set := in.flag("sensitive")
	switch {
	case in.has("spoiler_text") && strings.TrimSpace(in.get("spoiler_text")) != post.Summary:
		refuse("content warning")
		return
	case set && sensitive != post.Sensitive:
		refuse("sensitivity")
		return
	case in.get("language") != "" && in.get("language") != post.Language:
		refuse("language")
		return
	case len(in["poll[options]"]) > 0 && !samePoll(post.Poll, in["poll[options]"]):
		refuse("poll")
		return
	case len(in["media_ids"]) > 0 && in.get("media_ids") != "":
		refuse("media")
		return
	}
	if _, err := m.fed.OwnPosts.Edit(ctx, application.EditPost{UserID: p.User.ID, ID: id, Content: in.get("status")}); err != nil {
		writeError(w, r, m.log, err)
		return
	}
	m.writeStatus(w, r, p, id)
}

// samePoll reports whether options are those of poll, in order.
func samePoll(poll *domain.Poll, options []string) bool {
	if poll == nil || len(poll.Options) != len(options) {
		return false
	}
	for i, o := range poll.Options {
		if o.Name != strings.TrimSpace(options[i]) {
			return false
		}
	}
	return true
}

// getPoll is GET /api/v1/polls/:id: the poll of a status the viewer may
// see (a poll's id is its status's).
func (m *Routes) getPoll(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	m.writePoll(w, r, p, mux.Vars(r)["id"])
}

func (m *Routes) writePoll(w http.ResponseWriter, r *http.Request, p application.Principal, id string) {
	ctx := r.Context()
	post, err := m.api.Statuses.ByID(ctx, p, id)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if post.Poll == nil {
		writeError(w, r, m.log, fmt.Errorf("%w: status %s has no poll", domain.ErrNotFound, post.ID))
		return
	}
	view, err := m.api.Statuses.View(ctx, p, post)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	writeJSON(w, http.StatusOK, m.pollOf(post.ID, *post.Poll, p.HasUser(), view.OwnVotes))
}

// votePoll is POST /api/v1/polls/:id/votes with choices[] (indexes from
// 0): the persona's vote, counted here or sent to a remote poll's
// author; the answer is the poll.
func (m *Routes) votePoll(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	post, err := m.api.Statuses.ByID(r.Context(), p, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	var idx []int
	for _, c := range in["choices"] {
		i, err := strconv.Atoi(c)
		if err != nil {
			writeError(w, r, m.log, fmt.Errorf("%w: choices are option indexes", domain.ErrInvalidInput))
			return
		}
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		writeError(w, r, m.log, fmt.Errorf("%w: choices[] is needed", domain.ErrInvalidInput))
		return
	}
	// Mastodon refuses a second vote; Herald's store would keep the first
	// silently.
	if view, err := m.api.Statuses.View(r.Context(), p, post); err != nil {
		writeError(w, r, m.log, err)
		return
	} else if len(view.OwnVotes) > 0 {
		writeJSON(w, http.StatusUnprocessableEntity, mastodonError{Error: "Validation failed: You have already voted on this poll"})
		return
	}
	if _, err := m.fed.Vote.Handle(r.Context(), application.Vote{UserID: p.User.ID, As: p.Avatar.Name, Poll: post.ObjectURI, Indexes: idx}); err != nil {
		writeError(w, r, m.log, err)
		return
	}
	m.writePoll(w, r, p, post.ID)
}

// uploadMedia is POST /api/v1/media and /api/v2/media: Herald keeps no
// media files (SPEC §12: a post links media where their server hosts
// them), so an upload is refused with 422 and a message saying so
// (docs/api.md); the body is not read past the parameters' limit.
func (m *Routes) uploadMedia(w http.ResponseWriter, r *http.Request, _ application.Principal, _ params) {
	writeJSON(w, http.StatusUnprocessableEntity, mastodonError{Error: "Herald does not store uploads: post text, content warnings and polls; media are shown when a remote post links them"})
}
