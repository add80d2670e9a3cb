package httpapi

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// deletionJSON answers a persona deletion that has begun.
type deletionJSON struct {
	Name      string    `json:"name"`
	URI       string    `json:"uri"`
	DeletedAt time.Time `json:"deleted_at"`
	// Status is "deleting": the Delete is on its way to the followers; the
	// persona's posts, follows and key go once it is out.
	Status string `json:"status"`
}

// deletePersona deletes one of the account's personas: 202 while its
// Delete fans out, 404 for a persona that is not the account's, 410 for
// one deleted already.
func (h *Handler) deletePersona(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	d, err := h.app.DeletePersona.Handle(r.Context(), application.DeletePersona{UserID: u.ID, Name: mux.Vars(r)["name"]})
	reply(w, r, h.log, err, http.StatusAccepted, deletionJSON{Name: d.Name, URI: d.URI, DeletedAt: d.DeletedAt, Status: "deleting"})
}
