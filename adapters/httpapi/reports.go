package httpapi

import (
	"net/http"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

type reportJSON struct {
	As      string   `json:"as"`
	Target  string   `json:"target"`
	Comment string   `json:"comment"`
	Objects []string `json:"objects"`
}

type reportedJSON struct {
	Activity string `json:"activity"`
	Target   string `json:"target"`
	Inbox    string `json:"inbox"`
	Queued   int    `json:"queued"`
}

// report sends a Flag about a remote actor to its instance (202: queued
// for delivery, as every activity is).
func (f *FollowRoutes) report(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in reportJSON
	if !decode(w, r, f.log, &in) {
		return
	}
	res, err := f.fed.Report.Handle(r.Context(), application.ReportRemote{UserID: u.ID, As: in.As, Target: in.Target,
		Comment: in.Comment, Objects: in.Objects})
	reply(w, r, f.log, err, http.StatusAccepted, reportedJSON{Activity: res.ActivityID, Target: res.Target, Inbox: res.Inbox, Queued: res.Queued})
}
