package activitypub

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Config tunes the surface. Zero fields take the defaults.
type Config struct {
	// SoftwareVersion is what NodeInfo reports.
	SoftwareVersion string
	// OpenRegistrations is NodeInfo's openRegistrations.
	OpenRegistrations bool
	// MaxBodyBytes bounds an inbox POST (1 MiB).
	MaxBodyBytes int64
	// MaxClockSkew is how far a signed Date may be from our clock (12 h,
	// as Mastodon allows).
	MaxClockSkew time.Duration
	// Limit wraps every inbox: the per-client rate limit, which answers
	// 429 with Retry-After before the body is read or any signature work
	// is done (SPEC §10 "Load"). Nil limits nothing.
	Limit func(http.Handler) http.Handler
}

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxClockSkew = 12 * time.Hour
)

// Handler serves the ActivityPub surface. It implements httpapi.Routes.
type Handler struct {
	// fed is the application's Federation, which every route here calls.
	fed   *application.Federation
	urls  application.URLs
	clock ports.Clock
	log   *slog.Logger
	cfg   Config
}

// New builds the surface over the application's federation use cases.
func New(app *application.Application, clock ports.Clock, log *slog.Logger, cfg Config) *Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxClockSkew <= 0 {
		cfg.MaxClockSkew = DefaultMaxClockSkew
	}
	if cfg.SoftwareVersion == "" {
		cfg.SoftwareVersion = "dev"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{fed: &app.Federation, urls: app.URLs, clock: clock, log: log.With("component", "activitypub"), cfg: cfg}
}

// Register implements httpapi.Routes.
func (h *Handler) Register(r *mux.Router) {
	get := []string{http.MethodGet, http.MethodHead}
	r.HandleFunc("/.well-known/webfinger", h.webfinger).Methods(get...)
	r.HandleFunc("/.well-known/nodeinfo", h.nodeinfoLinks).Methods(get...)
	r.HandleFunc("/nodeinfo/{version:2\\.[01]}", h.nodeinfo).Methods(get...)

	persona, group, instance := domain.NameKindPersona, domain.NameKindGroup, domain.NameKindInstance
	r.HandleFunc("/users/{name}", h.actor(persona)).Methods(get...)
	r.HandleFunc("/groups/{name}", h.actor(group)).Methods(get...)
	r.HandleFunc("/actor", h.actor(instance)).Methods(get...)

	r.Handle("/users/{name}/inbox", h.limit(h.inbox(persona))).Methods(http.MethodPost)
	r.Handle("/groups/{name}/inbox", h.limit(h.inbox(group))).Methods(http.MethodPost)
	r.Handle("/inbox", h.limit(h.inbox(""))).Methods(http.MethodPost)
	// The instance actor's inbox is a shared inbox too: what arrives there
	// is addressed to the server, not to one actor.
	r.Handle("/actor/inbox", h.limit(h.inbox(""))).Methods(http.MethodPost)

	for _, k := range []struct {
		prefix string
		kind   domain.NameKind
	}{{"/users/{name}", persona}, {"/groups/{name}", group}, {"/actor", instance}} {
		r.HandleFunc(k.prefix+"/outbox", h.outbox(k.kind)).Methods(get...)
		r.HandleFunc(k.prefix+"/followers", h.followers(k.kind)).Methods(get...)
		r.HandleFunc(k.prefix+"/following", h.following(k.kind)).Methods(get...)
		r.HandleFunc(k.prefix+"/collections/featured", h.featured(k.kind)).Methods(get...)
	}
	r.HandleFunc("/users/{name}/statuses/{id}", h.note).Methods(get...)
}

// limit wraps an inbox in Config.Limit, if any.
func (h *Handler) limit(inbox http.HandlerFunc) http.Handler {
	if h.cfg.Limit == nil {
		return inbox
	}
	return h.cfg.Limit(inbox)
}

// contentTypes answers the negotiation of ActivityPub documents.
const (
	activityJSON = application.ActivityJSON
	ldJSON       = application.LDJSON
)

// negotiate picks the ActivityStreams media type the client asked for:
// application/ld+json (with the ActivityStreams profile) when it prefers
// that, application/activity+json otherwise, including for */* and for no
// Accept at all. A client that accepts neither (a browser asking for HTML
// only) gets errNotAccepted: Herald has no HTML pages.
func negotiate(accept string) (string, error) {
	if strings.TrimSpace(accept) == "" {
		return activityJSON, nil
	}
	best, bestQ := "", 0.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		var ct string
		switch mt {
		case "application/activity+json", "application/json", "application/*", "*/*":
			ct = activityJSON
		case "application/ld+json":
			ct = ldJSON
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = ct, q
		}
	}
	if best == "" {
		return "", errNotAccepted
	}
	return best, nil
}

// writeAS answers an ActivityStreams document in the negotiated type.
func (h *Handler) writeAS(w http.ResponseWriter, r *http.Request, doc any) {
	ct, err := negotiate(r.Header.Get("Accept"))
	w.Header().Add("Vary", "Accept")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, ct, doc)
}

// localActor finds the actor of a route by kind and the {name} variable.
func (h *Handler) localActor(r *http.Request, kind domain.NameKind) (application.LocalActor, error) {
	if kind == domain.NameKindInstance {
		return h.fed.Actors.Instance(r.Context())
	}
	return h.fed.Actors.ByName(r.Context(), kind, mux.Vars(r)["name"])
}

// readBody reads at most limit bytes of the request body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, fmt.Errorf("%w: over %d bytes", errBodyTooLarge, limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, fmt.Errorf("%w: over %d bytes", errBodyTooLarge, limit)
		}
		return nil, fmt.Errorf("%w: reading the body: %v", errMalformed, err)
	}
	return body, nil
}
