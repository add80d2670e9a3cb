package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// userHandler serves a request of the account its bearer token names.
type userHandler func(http.ResponseWriter, *http.Request, domain.RootUser)

// authenticator is what the client API's handler types (Handler,
// PostRoutes, FollowRoutes) embed: the application that resolves bearer
// tokens, and the log errors are written to.
type authenticator struct {
	app *application.Application
	log *slog.Logger
}

// newAuthenticator is the authenticator of app, logging as the HTTP
// component.
func newAuthenticator(app *application.Application, log *slog.Logger) authenticator {
	return authenticator{app: app, log: log.With("component", "http")}
}

// authed resolves the bearer token before next runs; 401 otherwise.
func (a authenticator) authed(next userHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := a.app.Authenticate.Handle(r.Context(), bearer(r))
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		next(w, r, u)
	})
}

type credentials struct {
	UserName string `json:"username"`
	Password string `json:"password"`
	// Reason is what a sign-up tells the operator when registrations
	// need approval.
	Reason string `json:"reason"`
}

type actorJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	URI       string    `json:"uri"`
	Kind      string    `json:"kind"`
	CreatedAt time.Time `json:"created_at"`
	// Locked: follows wait for approval (manuallyApprovesFollowers).
	Locked bool `json:"locked"`
}

type sessionJSON struct {
	Token    string     `json:"token"`
	UserID   string     `json:"user_id"`
	UserName string     `json:"username"`
	Persona  *actorJSON `json:"persona,omitempty"`
}

func (h *Handler) persona(a domain.Avatar) *actorJSON {
	return &actorJSON{ID: a.ID, Name: a.Name, URI: h.app.URLs.Persona(a.Name), Kind: string(domain.NameKindPersona), CreatedAt: a.CreatedAt, Locked: a.Locked}
}

func (h *Handler) signUp(w http.ResponseWriter, r *http.Request) {
	var in credentials
	if !decode(w, r, h.log, &in) {
		return
	}
	s, err := h.app.SignUp.Handle(r.Context(), application.SignUp{UserName: in.UserName, Password: in.Password, Reason: in.Reason})
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if s.User.Status == domain.UserPending {
		// Registrations need approval: the account exists, and waits.
		writeJSON(w, http.StatusAccepted, pendingJSON{Status: string(domain.UserPending), UserID: s.User.ID, UserName: s.User.UserName,
			Message: "Your account awaits the operator's approval; sign in once it is approved."})
		return
	}
	writeJSON(w, http.StatusCreated, sessionJSON{Token: s.Token, UserID: s.User.ID, UserName: s.User.UserName, Persona: h.persona(s.Avatar)})
}

// pendingJSON answers a sign-up that awaits approval: no token.
type pendingJSON struct {
	Status   string `json:"status"`
	UserID   string `json:"user_id"`
	UserName string `json:"username"`
	Message  string `json:"message"`
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	var in credentials
	if !decode(w, r, h.log, &in) {
		return
	}
	s, err := h.app.Login.Handle(r.Context(), application.Login{UserName: in.UserName, Password: in.Password})
	reply(w, r, h.log, err, http.StatusCreated, sessionJSON{Token: s.Token, UserID: s.User.ID, UserName: s.User.UserName})
}

// logout revokes the presented token, and only it (204).
func (h *Handler) logout(w http.ResponseWriter, r *http.Request, _ domain.RootUser) {
	if err := h.app.Authenticate.Revoke(r.Context(), bearer(r)); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type nameJSON struct {
	Name string `json:"name"`
	// Locked asks that the new persona or group approve its followers by
	// hand; absent: a persona is open, a group locked.
	Locked *bool `json:"locked"`
}

func (h *Handler) createPersona(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in nameJSON
	if !decode(w, r, h.log, &in) {
		return
	}
	a, err := h.app.CreatePersona.Handle(r.Context(), application.CreatePersona{UserID: u.ID, Name: in.Name, Locked: in.Locked != nil && *in.Locked})
	reply(w, r, h.log, err, http.StatusCreated, h.persona(a))
}

func (h *Handler) createGroup(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in nameJSON
	if !decode(w, r, h.log, &in) {
		return
	}
	g, err := h.app.CreateGroup.Handle(r.Context(), application.CreateGroup{UserID: u.ID, Name: in.Name, Locked: in.Locked})
	reply(w, r, h.log, err, http.StatusCreated, actorJSON{ID: g.ID, Name: g.Name, URI: h.app.URLs.Group(g.Name), Kind: string(domain.NameKindGroup), CreatedAt: g.CreatedAt, Locked: g.Locked})
}
