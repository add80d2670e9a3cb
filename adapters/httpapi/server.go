package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
)

// Readiness reports whether the server should receive traffic: storage
// reachable, migrations done, not shutting down.
type Readiness interface {
	Ready(ctx context.Context) error
}

// Handler serves Herald's HTTP surface.
type Handler struct {
	authenticator
	ready   Readiness
	router  *mux.Router
	proxies *Proxies
}

// Routes is a surface that lives in its own adapter package (ActivityPub,
// operator API, metrics) and registers its routes on the shared router.
type Routes interface {
	Register(r *mux.Router)
}

// New builds the router: the probes and the client API here, then each of
// the extra surfaces in order.
func New(app *application.Application, ready Readiness, log *slog.Logger, extra ...Routes) *Handler {
	h := &Handler{authenticator: newAuthenticator(app, log), ready: ready, router: mux.NewRouter(), proxies: proxiesOf(extra)}
	r := h.router
	r.HandleFunc("/healthz", h.healthz).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/readyz", h.readyz).Methods(http.MethodGet, http.MethodHead)

	// Full paths rather than a PathPrefix subrouter: mux answers 404
	// instead of 405 for a wrong method on a subrouter's route.
	// Sign-up and login hash passwords for anyone: limited per client IP.
	limit := rateLimiterOf(extra)
	r.Handle("/api/v1/accounts", limit.Wrap(http.HandlerFunc(h.signUp))).Methods(http.MethodPost)
	r.Handle("/api/v1/sessions", limit.Wrap(http.HandlerFunc(h.login))).Methods(http.MethodPost)
	r.Handle("/api/v1/sessions", h.authed(h.logout)).Methods(http.MethodDelete)
	r.Handle("/api/v1/personas", h.authed(h.createPersona)).Methods(http.MethodPost)
	r.Handle("/api/v1/personas/{name}", h.authed(h.deletePersona)).Methods(http.MethodDelete)
	r.Handle("/api/v1/groups", h.authed(h.createGroup)).Methods(http.MethodPost)
	NewPostRoutes(app, h.log).registerPublish(r)

	for _, e := range extra {
		e.Register(r)
	}

	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody{Error: "no such endpoint"})
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "method not allowed"})
	})
	return h
}

// Router exposes the router so other surfaces (ActivityPub, operator) can
// register their routes on it before the server starts.
func (h *Handler) Router() *mux.Router { return h.router }

// ServeHTTP implements http.Handler with access logging and a last-resort
// recover, so a bug answers 500 instead of killing the process.
//
// It sets the request's RemoteAddr to the client's address (Proxies), the
// one place the rate limit and every log line take it from.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	peer := r.RemoteAddr
	r = r.WithContext(r.Context()) // a shallow copy: handlers must not modify the server's request
	r.RemoteAddr = h.proxies.ClientAddr(r)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if !rec.wrote {
				writeJSON(rec, http.StatusInternalServerError, errorBody{Error: "internal error"})
			}
		}
		level := slog.LevelDebug
		if rec.status >= 500 {
			level = slog.LevelWarn
		}
		h.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration", time.Since(start), "client", r.RemoteAddr, "peer", peer)
	}()
	h.router.ServeHTTP(rec, r)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController and WebSocket upgrades reach the
// server's writer (its Hijacker and deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (h *Handler) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := h.ready.Ready(ctx); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// bearer extracts the token of "Authorization: Bearer <token>".
func bearer(r *http.Request) string {
	v := r.Header.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}
