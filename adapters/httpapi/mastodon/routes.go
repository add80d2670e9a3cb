package mastodon

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// Config is what the instance entity tells clients.
type Config struct {
	// Title and Description name the instance (HERALD_DOMAIN by default).
	Title       string
	Description string
	Version     string // Herald's build version
	// Registrations is HERALD_REGISTRATIONS.
	Registrations domain.RegistrationMode
	// ContactEmail is shown in the instance entity; may be empty.
	ContactEmail string
	// Streaming paces and bounds the streaming API (defaults when zero).
	Streaming StreamingConfig
}

// Routes serves the Mastodon-compatible client API on the shared router.
type Routes struct {
	// api and fed are app's ClientAPI and Federation, the groups most
	// routes call.
	app *application.Application
	api *application.ClientAPI
	fed *application.Federation
	cfg Config
	log *slog.Logger
	// auth limits what hashes a password or registers an application,
	// per client address; perToken limits every API call per token
	// (Mastodon's 300 requests in 5 minutes).
	auth, perToken *httpapi.RateLimiter
	idem           idempotency
	streams        *streamSlots
}

// TokenRateLimit is Mastodon's default limit of API calls: 300 requests
// per 5 minutes per token (per address for calls without one).
func TokenRateLimit() httpapi.RateLimit {
	return httpapi.RateLimit{PerMinute: 60, Burst: 300, MaxClients: 100_000}
}

// New builds the routes. auth is the limiter of sign-in and sign-up
// (HERALD_AUTH_RATE_PER_MINUTE); perToken the API's.
func New(app *application.Application, cfg Config, log *slog.Logger, auth, perToken *httpapi.RateLimiter) *Routes {
	return &Routes{app: app, api: &app.ClientAPI, fed: &app.Federation, cfg: cfg, log: log.With("component", "mastodon"), auth: auth, perToken: perToken,
		streams: newStreamSlots(cfg.Streaming.withDefaults())}
}

// Register implements httpapi.Routes.
func (m *Routes) Register(r *mux.Router) {
	limited := func(h http.HandlerFunc) http.Handler { return m.auth.Wrap(h) }
	r.Handle("/api/v1/apps", limited(m.createApp)).Methods(http.MethodPost)
	r.Handle("/api/v1/apps/verify_credentials", m.authed("", false, m.verifyApp)).Methods(http.MethodGet)
	r.HandleFunc("/oauth/authorize", m.authorizePage).Methods(http.MethodGet)
	r.Handle("/oauth/authorize", limited(m.authorizeSubmit)).Methods(http.MethodPost)
	r.Handle("/oauth/token", m.perToken.Wrap(http.HandlerFunc(m.token))).Methods(http.MethodPost)
	r.Handle("/oauth/revoke", m.perToken.Wrap(http.HandlerFunc(m.revoke))).Methods(http.MethodPost)
	add := routeAdder{r}
	m.registerInstance(add)
	// Before the accounts: their /api/v1/accounts/{id} would take
	// /api/v1/accounts/relationships and /search for an account id.
	m.registerGraph(add)
	m.registerSearch(add)
	m.registerAccounts(add)
	m.registerStatuses(add)
	m.registerNotifications(add)
	m.registerStreaming(add)
	m.registerConversations(add)
}

// routeAdder registers a handler for one method; full paths, as the rest
// of Herald's router has them (mux answers 405 for a wrong method).
type routeAdder struct{ r *mux.Router }

func (a routeAdder) Handle(path string, h http.Handler, method string) {
	a.r.Handle(path, h).Methods(method)
}

// handler is an endpoint that acts for a principal, with its parameters.
type handler func(w http.ResponseWriter, r *http.Request, p application.Principal, in params)

// authed authenticates the bearer token, limits the token's calls,
// requires scope (none: any valid token) and, with needUser, a token
// that acts as a persona, then reads the parameters.
func (m *Routes) authed(scope string, needUser bool, next handler) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := m.api.Authenticate.Handle(r.Context(), bearer(r))
		if err != nil {
			writeError(w, r, m.log, err)
			return
		}
		if scope != "" {
			if err := p.Require(scope); err != nil {
				writeError(w, r, m.log, err)
				return
			}
		}
		if needUser && !p.HasUser() {
			writeJSON(w, http.StatusUnprocessableEntity, mastodonError{Error: "This method requires an authenticated user"})
			return
		}
		m.serve(w, r, p, next)
	})
	return m.perToken.WrapBy(tokenKey, h)
}

// public is an endpoint anyone may read (the instance, public
// timelines, accounts): a token, if sent, must be valid and is passed on.
func (m *Routes) public(next handler) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p application.Principal
		if tok := bearer(r); tok != "" {
			var err error
			if p, err = m.api.Authenticate.Handle(r.Context(), tok); err != nil {
				writeError(w, r, m.log, err)
				return
			}
		}
		m.serve(w, r, p, next)
	})
	return m.perToken.WrapBy(tokenKey, h)
}

// serve reads the request's parameters and hands it to next, acting for
// p: the last step of authed and public alike.
func (m *Routes) serve(w http.ResponseWriter, r *http.Request, p application.Principal, next handler) {
	in, err := readParams(w, r)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	next(w, r, p, in)
}

// tokenKey names a request's rate-limit bucket by its token's hash.
func tokenKey(r *http.Request) string {
	if t := bearer(r); t != "" {
		return "token:" + domain.HashToken(t)
	}
	return ""
}

func bearer(r *http.Request) string {
	v := r.Header.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}
