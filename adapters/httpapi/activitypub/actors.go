package activitypub

import (
	"errors"
	"net/http"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// actorContext is the JSON-LD context of actor documents: ActivityStreams
// and the security vocabulary of publicKey.
// and the security vocabulary, plus Mastodon's term for the featured
// (pinned posts) collection, which GoToSocial and Mastodon fetch.
var actorContext = []any{application.ASContext, "https://w3id.org/security/v1",
	map[string]any{"toot": "http://joinmastodon.org/ns#", "featured": map[string]string{"@id": "toot:featured", "@type": "@id"}}}

type publicKeyDoc struct {
	ID           string `json:"id"`
	Owner        string `json:"owner"`
	PublicKeyPem string `json:"publicKeyPem"`
}

type endpointsDoc struct {
	SharedInbox string `json:"sharedInbox"`
}

type actorDoc struct {
	Context                   []any        `json:"@context"`
	ID                        string       `json:"id"`
	Type                      string       `json:"type"`
	PreferredUsername         string       `json:"preferredUsername"`
	Name                      string       `json:"name"`
	URL                       string       `json:"url"`
	Inbox                     string       `json:"inbox"`
	Outbox                    string       `json:"outbox"`
	Followers                 string       `json:"followers"`
	Following                 string       `json:"following"`
	Featured                  string       `json:"featured"`
	Endpoints                 endpointsDoc `json:"endpoints"`
	PublicKey                 publicKeyDoc `json:"publicKey"`
	ManuallyApprovesFollowers bool         `json:"manuallyApprovesFollowers"`
}

// actorTypes are the ActivityStreams types of local actors.
var actorTypes = map[domain.NameKind]string{
	domain.NameKindPersona:  "Person",
	domain.NameKindGroup:    "Group",
	domain.NameKindInstance: "Application",
}

// actorDocument renders a local actor. Only the public half of its key is
// ever served.
func (h *Handler) actorDocument(a application.LocalActor) actorDoc {
	u := h.fed.URLs
	name := a.DisplayName
	if name == "" {
		name = a.Name
	}
	return actorDoc{
		Context: actorContext, ID: a.URI, Type: actorTypes[a.Kind], PreferredUsername: a.Name, Name: name, URL: a.URI,
		Inbox: u.Inbox(a.URI), Outbox: u.Outbox(a.URI), Followers: u.Followers(a.URI), Following: u.Following(a.URI),
		Featured:  u.Featured(a.URI),
		Endpoints: endpointsDoc{SharedInbox: u.SharedInbox()},
		PublicKey: publicKeyDoc{ID: a.KeyID(u), Owner: a.URI, PublicKeyPem: a.PublicKeyPEM},
		// The instance actor is followed by no one; personas and groups
		// accept followers at once.
		ManuallyApprovesFollowers: a.Kind == domain.NameKindInstance,
	}
}

func (h *Handler) actor(kind domain.NameKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := h.localActor(r, kind)
		var gone *application.GoneActor
		if errors.As(err, &gone) {
			h.writeTombstone(w, r, gone)
			return
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeAS(w, r, h.actorDocument(a))
	}
}

// tombstoneDoc is what the URL of a deleted actor answers, with 410 Gone:
// the ActivityStreams Tombstone Mastodon serves for a deleted account, so
// a server that fetches the actor (to verify its Delete, or because it
// never heard of it) learns it is gone for good, not missing for now.
type tombstoneDoc struct {
	Context    string `json:"@context"`
	ID         string `json:"id"`
	Type       string `json:"type"`
	FormerType string `json:"formerType"`
	Deleted    string `json:"deleted"`
}

func (h *Handler) writeTombstone(w http.ResponseWriter, r *http.Request, g *application.GoneActor) {
	w.Header().Add("Vary", "Accept")
	ct, err := negotiate(r.Header.Get("Accept"))
	if err != nil {
		ct = activityJSON // a browser asking for HTML learns it is gone too
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusGone, ct, tombstoneDoc{Context: application.ASContext, ID: g.URI, Type: "Tombstone",
		FormerType: actorTypes[g.Kind], Deleted: g.DeletedAt.UTC().Format(time.RFC3339)})
}
