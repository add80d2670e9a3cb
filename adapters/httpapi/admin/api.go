package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

type hostCountJSON struct {
	Host  string `json:"host"`
	Count int    `json:"count"`
}

type queueJSON struct {
	At      time.Time                  `json:"at"`
	ByState map[string]int             `json:"by_state"`
	Total   int                        `json:"total"`
	ByHost  map[string][]hostCountJSON `json:"by_host"`
}

func hostCounts(hc []ports.HostCount) []hostCountJSON {
	return each(hc, func(c ports.HostCount) hostCountJSON { return hostCountJSON{Host: c.Host, Count: c.Count} })
}

func (h *Handler) queue(w http.ResponseWriter, r *http.Request) {
	s, err := h.op.Queue(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	by := make(map[string]int, len(s.ByState))
	for _, st := range domain.JobStates() {
		by[string(st)] = s.ByState[st]
	}
	writeJSON(w, http.StatusOK, queueJSON{At: s.At, ByState: by, Total: s.Total, ByHost: map[string][]hostCountJSON{
		string(domain.JobQueued): hostCounts(s.Queued),
		string(domain.JobLeased): hostCounts(s.Leased),
		string(domain.JobDead):   hostCounts(s.Dead),
	}})
}

type jobJSON struct {
	ID         string     `json:"id"`
	ActivityID string     `json:"activity_id"`
	Inbox      string     `json:"inbox"`
	Host       string     `json:"host"`
	State      string     `json:"state"`
	Attempts   int        `json:"attempts"`
	RunAt      time.Time  `json:"run_at"`
	LastError  string     `json:"last_error,omitempty"`
	LeaseOwner string     `json:"lease_owner,omitempty"`
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func toJobJSON(j domain.Job) jobJSON {
	return jobJSON{ID: j.ID, ActivityID: j.ActivityID, Inbox: j.Inbox, Host: j.Host, State: string(j.State),
		Attempts: j.Attempts, RunAt: j.RunAt, LastError: j.LastError, LeaseOwner: j.LeaseOwner,
		LeaseUntil: optTime(j.LeaseUntil), CreatedAt: j.CreatedAt, FinishedAt: optTime(j.FinishedAt)}
}

type jobsJSON struct {
	Jobs []jobJSON `json:"jobs"`
	// Next is the `after` of the next page; empty on the last page.
	Next string `json:"next,omitempty"`
}

func (h *Handler) jobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	jq := application.JobsQuery{State: domain.JobState(q.Get("state")), Host: q.Get("host"), After: q.Get("after")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			h.writeError(w, r, fmt.Errorf("%w: limit %q is not a number", domain.ErrInvalidInput, v))
			return
		}
		if n == 0 {
			h.writeError(w, r, fmt.Errorf("%w: limit 0: want 1 to %d", domain.ErrInvalidInput, application.MaxJobPage))
			return
		}
		jq.Limit = n
	}
	p, err := h.op.Jobs(r.Context(), jq)
	h.reply(w, r, err, http.StatusOK, jobsJSON{Jobs: each(p.Jobs, toJobJSON), Next: p.Next})
}

func (h *Handler) retryJob(w http.ResponseWriter, r *http.Request) {
	j, err := h.op.RetryJob(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.log.Info("operator retried a dead job", "job_id", j.ID, "host", j.Host)
	writeJSON(w, http.StatusOK, map[string]jobJSON{"job": toJobJSON(j)})
}

func (h *Handler) retryHostDead(w http.ResponseWriter, r *http.Request) {
	host := mux.Vars(r)["host"]
	n, err := h.op.RetryHostDead(r.Context(), host)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.log.Info("operator retried the dead jobs of a host", "host", host, "retried", n)
	writeJSON(w, http.StatusOK, map[string]any{"host": strings.ToLower(host), "retried": n})
}

type instanceJSON struct {
	Host                string     `json:"host"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	QuarantineLevel     int        `json:"quarantine_level"`
	Quarantined         bool       `json:"quarantined"`
	QuarantinedUntil    *time.Time `json:"quarantined_until,omitempty"`
	LastSuccessAt       *time.Time `json:"last_success_at,omitempty"`
	LastFailureAt       *time.Time `json:"last_failure_at,omitempty"`
	LastError           string     `json:"last_error,omitempty"`
}

func toInstanceJSON(v application.InstanceView) instanceJSON {
	return instanceJSON{Host: v.Host, ConsecutiveFailures: v.ConsecutiveFailures, QuarantineLevel: v.QuarantineLevel,
		Quarantined: v.Quarantined, QuarantinedUntil: optTime(v.QuarantinedUntil), LastSuccessAt: optTime(v.LastSuccessAt),
		LastFailureAt: optTime(v.LastFailureAt), LastError: v.LastError}
}

func (h *Handler) instances(w http.ResponseWriter, r *http.Request) {
	only, err := boolParam(r, "quarantined", "true or false")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	vs, err := h.op.Instances(r.Context(), only)
	h.reply(w, r, err, http.StatusOK, map[string][]instanceJSON{"instances": each(vs, toInstanceJSON)})
}

func (h *Handler) lift(w http.ResponseWriter, r *http.Request) {
	res, err := h.op.Lift(r.Context(), mux.Vars(r)["host"])
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.log.Info("operator lifted a quarantine", "host", res.Instance.Host, "resumed", res.Resumed)
	v := application.InstanceView{RemoteInstance: res.Instance}
	writeJSON(w, http.StatusOK, map[string]any{"instance": toInstanceJSON(v), "resumed": res.Resumed})
}

type nameJSON struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	CreatedAt time.Time `json:"created_at"`
}

func toNameJSON(n domain.ReservedName) nameJSON {
	return nameJSON{Name: n.Name, Kind: string(n.Kind), CreatedAt: n.CreatedAt}
}

func (h *Handler) listNames(w http.ResponseWriter, r *http.Request) {
	ns, err := h.op.SystemNames(r.Context())
	h.reply(w, r, err, http.StatusOK, map[string][]nameJSON{"names": each(ns, toNameJSON)})
}

// maxBody bounds the operator API's request bodies: one name is small.
const maxBody = 4 << 10

func (h *Handler) reserveName(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(&in); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("empty body")
		}
		h.writeError(w, r, fmt.Errorf("%w: want {\"name\": \"...\"}: %v", errMalformed, err))
		return
	}
	if dec.More() {
		h.writeError(w, r, fmt.Errorf("%w: data after the JSON object", errMalformed))
		return
	}
	n, err := h.op.ReserveName(r.Context(), in.Name)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.log.Info("operator reserved a system name", "name", n.Name)
	writeJSON(w, http.StatusCreated, toNameJSON(n))
}

func (h *Handler) releaseName(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["name"]
	if err := h.op.ReleaseName(r.Context(), name); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.log.Info("operator released a system name", "name", name)
	w.WriteHeader(http.StatusNoContent)
}

type fanOutJSON struct {
	ID        string    `json:"id"`
	Actor     string    `json:"actor"`
	Followers int       `json:"followers"`
	Enqueued  int       `json:"enqueued"`
	Recorded  int       `json:"recorded"`
	Delivered int       `json:"delivered"`
	Dead      int       `json:"dead"`
	Pending   int       `json:"pending"`
	Done      bool      `json:"done"`
	Cursor    string    `json:"cursor,omitempty"`
	Owner     string    `json:"owner,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// fanOuts lists the recent fan-outs with their progress (?limit=, at most
// application.RecentFanOuts by default).
func (h *Handler) fanOuts(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > application.MaxJobPage {
			h.writeError(w, r, fmt.Errorf("%w: limit must be 1 to %d", domain.ErrInvalidInput, application.MaxJobPage))
			return
		}
		limit = n
	}
	list, err := h.op.FanOuts(r.Context(), limit)
	h.reply(w, r, err, http.StatusOK, map[string]any{"fan_outs": each(list, func(f application.FanOutView) fanOutJSON {
		return fanOutJSON{ID: f.ID, Actor: f.Actor, Followers: f.Followers, Enqueued: f.Enqueued, Recorded: f.Recorded,
			Delivered: f.Delivered, Dead: f.Dead, Pending: f.Pending, Done: f.Done, Cursor: f.Cursor, Owner: f.Owner,
			CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
	})})
}
