package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

type directOutJSON struct {
	URI          string    `json:"uri"`
	Author       string    `json:"author"`
	Participants []string  `json:"participants"`
	Content      string    `json:"content"`
	Published    time.Time `json:"published"`
	Updated      string    `json:"updated,omitempty"`
	Local        bool      `json:"local"`
	extrasOutJSON
}

// directThread lists the direct conversation of the user's persona ?as=
// with the actors ?with=<actor URI> (repeated for a group conversation):
// the direct posts both ways, newest first, with ?before= and ?limit= as
// the posts listing.
func (f *PostRoutes) directThread(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	q := r.URL.Query()
	if q.Get("as") == "" || len(q["with"]) == 0 {
		writeError(w, r, f.log, fmt.Errorf("%w: the as and with parameters are needed", errMalformed))
		return
	}
	before, limit, err := pageParams(q)
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	dms, err := f.fed.Direct.Handle(r.Context(), application.DirectThread{UserID: u.ID, As: q.Get("as"), With: q["with"], Before: before, Limit: limit})
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	out := make([]directOutJSON, 0, len(dms))
	for _, d := range dms {
		out = append(out, directOutJSON{URI: d.ObjectURI, Author: d.AuthorURI, Participants: d.Participants, Content: d.Content,
			Published: d.Published, Updated: rfc3339(d.Updated), Local: d.Local, extrasOutJSON: extrasOut(d.Extras)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"direct": out})
}

// mentions lists the posts that mention the user's persona ?as=, local or
// received, newest first, with ?before= and ?limit= as the posts listing.
func (f *PostRoutes) mentions(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	q := r.URL.Query()
	if q.Get("as") == "" {
		writeError(w, r, f.log, fmt.Errorf("%w: the as parameter is missing", errMalformed))
		return
	}
	before, limit, err := pageParams(q)
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	posts, err := f.fed.Mentions.Handle(r.Context(), application.Mentions{UserID: u.ID, As: q.Get("as"), Before: before, Limit: limit})
	if err != nil {
		writeError(w, r, f.log, err)
		return
	}
	out := make([]postOutJSON, 0, len(posts))
	for _, p := range posts {
		out = append(out, f.postOut(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"posts": out})
}
