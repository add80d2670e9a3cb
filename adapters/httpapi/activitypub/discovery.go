package activitypub

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

type jrdLink struct {
	Rel  string `json:"rel"`
	Type string `json:"type,omitempty"`
	Href string `json:"href"`
}

type jrd struct {
	Subject string    `json:"subject"`
	Aliases []string  `json:"aliases,omitempty"`
	Links   []jrdLink `json:"links"`
}

// webfinger answers RFC 7033 queries for acct:name@domain (or an actor
// URI): 400 for a missing or malformed resource, 404 for one that is not
// an actor of this server.
func (h *Handler) webfinger(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	resource := strings.TrimSpace(r.URL.Query().Get("resource"))
	var a application.LocalActor
	var err error
	switch lower := strings.ToLower(resource); {
	case resource == "":
		err = fmt.Errorf("%w: the resource parameter is missing", errMalformed)
	case strings.HasPrefix(lower, "acct:"):
		user, host, ok := strings.Cut(strings.TrimPrefix(resource[len("acct:"):], "@"), "@")
		switch {
		case !ok || user == "" || host == "" || strings.Contains(host, "@"):
			err = fmt.Errorf("%w: resource %q is not acct:user@host", errMalformed, clip(resource))
		case !strings.EqualFold(host, h.urls.Domain):
			err = fmt.Errorf("%w: %s is not this server", domain.ErrNotFound, clip(host))
		default:
			a, err = h.fed.Actors.ByAccount(ctx, user)
		}
	case strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://"):
		a, err = h.fed.Actors.ByURI(ctx, resource)
	default:
		err = fmt.Errorf("%w: resource %q is neither acct: nor an http(s) URI", errMalformed, clip(resource))
	}
	if err != nil {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, "application/jrd+json; charset=utf-8", jrd{
		Subject: "acct:" + a.Name + "@" + h.urls.Domain,
		Aliases: []string{a.URI},
		Links:   []jrdLink{{Rel: "self", Type: activityJSON, Href: a.URI}},
	})
}

// NodeInfo schema versions served.
var nodeinfoSchemas = []string{"2.1", "2.0"}

func nodeinfoRel(v string) string { return "http://nodeinfo.diaspora.software/ns/schema/" + v }

func (h *Handler) nodeinfoLinks(w http.ResponseWriter, r *http.Request) {
	links := make([]jrdLink, 0, len(nodeinfoSchemas))
	for _, v := range nodeinfoSchemas {
		links = append(links, jrdLink{Rel: nodeinfoRel(v), Href: h.urls.Base() + "/nodeinfo/" + v})
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, "application/json; charset=utf-8", map[string]any{"links": links})
}

type nodeinfoSoftware struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Repository string `json:"repository,omitempty"`
	Homepage   string `json:"homepage,omitempty"`
}

type nodeinfoDoc struct {
	Version           string           `json:"version"`
	Software          nodeinfoSoftware `json:"software"`
	Protocols         []string         `json:"protocols"`
	Services          map[string][]any `json:"services"`
	OpenRegistrations bool             `json:"openRegistrations"`
	Usage             map[string]any   `json:"usage"`
	Metadata          map[string]any   `json:"metadata"`
}

// nodeinfo serves the NodeInfo 2.0 and 2.1 documents; they differ only in
// 2.1's software.repository.
func (h *Handler) nodeinfo(w http.ResponseWriter, r *http.Request) {
	version := mux.Vars(r)["version"]
	usage, err := h.fed.Actors.Usage(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	sw := nodeinfoSoftware{Name: "herald", Version: h.cfg.SoftwareVersion}
	if version == "2.1" {
		sw.Repository = "https://github.com/heraldfed/herald"
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, `application/json; profile="`+nodeinfoRel(version)+`#"`, nodeinfoDoc{
		Version: version, Software: sw, Protocols: []string{"activitypub"},
		Services:          map[string][]any{"inbound": {}, "outbound": {}},
		OpenRegistrations: h.cfg.OpenRegistrations,
		Usage: map[string]any{
			"users":      map[string]int{"total": usage.Users, "activeMonth": usage.ActiveMonth, "activeHalfyear": usage.ActiveHalfyear},
			"localPosts": usage.LocalPosts,
		},
		Metadata: map[string]any{"nodeName": h.urls.Domain},
	})
}
