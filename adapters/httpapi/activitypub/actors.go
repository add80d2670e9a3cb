package activitypub

import (
	"errors"
	"net/http"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// actorDocument renders a local actor (application.URLs.Document: the
// same object an Update{Person} carries).
func (h *Handler) actorDocument(a application.LocalActor) application.ActorDocument {
	return h.urls.Document(a)
}

func (h *Handler) actor(kind domain.NameKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := h.localActor(r, kind)
		var gone *application.GoneActor
		if errors.As(err, &gone) {
			h.writeTombstone(w, r, gone)
			return
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeAS(w, r, h.actorDocument(a))
	}
}

// tombstoneDoc is what the URL of a deleted actor answers, with 410 Gone:
// the ActivityStreams Tombstone Mastodon serves for a deleted account, so
// a server that fetches the actor (to verify its Delete, or because it
// never heard of it) learns it is gone for good, not missing for now.
type tombstoneDoc struct {
	Context    string `json:"@context"`
	ID         string `json:"id"`
	Type       string `json:"type"`
	FormerType string `json:"formerType"`
	Deleted    string `json:"deleted"`
}

func (h *Handler) writeTombstone(w http.ResponseWriter, r *http.Request, g *application.GoneActor) {
	w.Header().Add("Vary", "Accept")
	ct, err := negotiate(r.Header.Get("Accept"))
	if err != nil {
		ct = activityJSON // a browser asking for HTML learns it is gone too
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusGone, ct, tombstoneDoc{Context: application.ASContext, ID: g.URI, Type: "Tombstone",
		FormerType: application.ActorType(g.Kind), Deleted: g.DeletedAt.UTC().Format(time.RFC3339)})
}
