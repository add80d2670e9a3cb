package activitypub

import (
	"net/http"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// actorDocument renders a local actor (application.URLs.Document: the
// same object an Update{Person} carries).
func (h *Handler) actorDocument(a application.LocalActor) application.ActorDocument {
	return h.fed.URLs.Document(a)
}

func (h *Handler) actor(kind domain.NameKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := h.localActor(r, kind)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeAS(w, r, h.actorDocument(a))
	}
}
