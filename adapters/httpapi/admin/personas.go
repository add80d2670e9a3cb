package admin

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
)

type deletionJSON struct {
	Name      string    `json:"name"`
	URI       string    `json:"uri"`
	DeletedAt time.Time `json:"deleted_at"`
	Status    string    `json:"status"` // "deleting": its Delete fans out, then its data and key go
}

// deletePersona deletes anyone's persona (SPEC §11): 202 while its Delete
// fans out, 404 for no such persona, 410 for one deleted already.
func (h *Handler) deletePersona(w http.ResponseWriter, r *http.Request) {
	d, err := h.mod.DeletePersona.Handle(r.Context(), application.DeletePersona{Name: mux.Vars(r)["name"], ByOperator: true})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.log.Info("operator deleted a persona", "name", d.Name)
	writeJSON(w, http.StatusAccepted, deletionJSON{Name: d.Name, URI: d.URI, DeletedAt: d.DeletedAt, Status: "deleting"})
}
