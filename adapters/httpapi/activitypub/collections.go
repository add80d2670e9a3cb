package activitypub

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

type collectionDoc struct {
	Context    string `json:"@context,omitempty"`
	ID         string `json:"id"`
	Type       string `json:"type"`
	TotalItems *int   `json:"totalItems,omitempty"`
	First      string `json:"first,omitempty"`
	PartOf     string `json:"partOf,omitempty"`
	Next       string `json:"next,omitempty"`
	Items      any    `json:"orderedItems,omitempty"`
}

// outbox serves an actor's outbox: the collection points at its first
// page (?page=true); pages hold the public posts newest first and link the
// next one by ?before=<published>.
func (h *Handler) outbox(kind domain.NameKind) http.HandlerFunc {
	return h.ofActor(kind, func(w http.ResponseWriter, r *http.Request, a application.LocalActor) {
		id := h.urls.Outbox(a.URI)
		q := r.URL.Query()
		if q.Get("page") == "" {
			h.writeAS(w, r, collectionDoc{Context: application.ASContext, ID: id, Type: "OrderedCollection", First: id + "?page=true"})
			return
		}
		var before time.Time
		if b := q.Get("before"); b != "" {
			var err error
			if before, err = time.Parse(time.RFC3339Nano, b); err != nil {
				h.writeError(w, r, fmt.Errorf("%w: before=%q is not an RFC 3339 time", errMalformed, clip(b)))
				return
			}
		}
		page, err := h.fed.Collections.Outbox(r.Context(), a, before)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		doc := collectionDoc{Context: application.ASContext, ID: id + "?" + q.Encode(), Type: "OrderedCollectionPage",
			PartOf: id, Items: nonNil(page.Items)}
		if !page.Next.IsZero() {
			doc.Next = id + "?" + url.Values{"page": {"true"}, "before": {page.Next.UTC().Format(time.RFC3339Nano)}}.Encode()
		}
		h.writeAS(w, r, doc)
	})
}

// followers serves an actor's followers collection: totalItems, and pages
// of follower URIs linked by ?after=<last follower>.
func (h *Handler) followers(kind domain.NameKind) http.HandlerFunc {
	return h.ofActor(kind, func(w http.ResponseWriter, r *http.Request, a application.LocalActor) {
		id := h.urls.Followers(a.URI)
		q := r.URL.Query()
		page, err := h.fed.Collections.Followers(r.Context(), a, q.Get("after"))
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		total := page.Total
		if q.Get("page") == "" {
			h.writeAS(w, r, collectionDoc{Context: application.ASContext, ID: id, Type: "OrderedCollection", TotalItems: &total, First: id + "?page=true"})
			return
		}
		doc := collectionDoc{Context: application.ASContext, ID: id + "?" + q.Encode(), Type: "OrderedCollectionPage",
			TotalItems: &total, PartOf: id, Items: nonNil(page.Items)}
		if page.Next != "" {
			doc.Next = id + "?" + url.Values{"page": {"true"}, "after": {page.Next}}.Encode()
		}
		h.writeAS(w, r, doc)
	})
}

// following is served without items or count: who a persona follows is
// not published (Mastodon's "hide network"), and the store has no listing
// by follower.
func (h *Handler) following(kind domain.NameKind) http.HandlerFunc {
	return h.ofActor(kind, func(w http.ResponseWriter, r *http.Request, a application.LocalActor) {
		h.writeAS(w, r, collectionDoc{Context: application.ASContext, ID: h.urls.Following(a.URI), Type: "OrderedCollection"})
	})
}

// featured is the featured (pinned posts) collection, always empty:
// Herald has no pinned posts, and GoToSocial logs an error for every
// actor whose featured collection it cannot fetch.
func (h *Handler) featured(kind domain.NameKind) http.HandlerFunc {
	return h.ofActor(kind, func(w http.ResponseWriter, r *http.Request, a application.LocalActor) {
		zero := 0
		h.writeAS(w, r, collectionDoc{Context: application.ASContext, ID: h.urls.Featured(a.URI), Type: "OrderedCollection",
			TotalItems: &zero, Items: []string{}})
	})
}

// note serves a local public note, so servers that receive an Announce or
// a reply by URI can fetch it.
func (h *Handler) note(w http.ResponseWriter, r *http.Request) {
	a, err := h.localActor(r, domain.NameKindPersona)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	n, err := h.fed.Collections.Note(r.Context(), h.urls.Note(a.URI, mux.Vars(r)["id"]))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeAS(w, r, struct {
		Context any `json:"@context"`
		application.Note
	}{n.JSONLDContext(), n})
}

// ofActor is a handler of one of a local actor's documents: serve runs
// with the actor of kind the path names, once found; the lookup's error
// is answered.
func (h *Handler) ofActor(kind domain.NameKind, serve func(w http.ResponseWriter, r *http.Request, a application.LocalActor)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := h.localActor(r, kind)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		serve(w, r, a)
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
