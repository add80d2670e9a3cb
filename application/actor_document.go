package application

import "github.com/heraldfed/herald/domain"

// actorContext is the JSON-LD context of actor documents: ActivityStreams,
// the security vocabulary of publicKey, Mastodon's term for the featured
// (pinned posts) collection, which GoToSocial and Mastodon fetch, and
// manuallyApprovesFollowers (not in the ActivityStreams context; Mastodon
// declares it the same way).
var actorContext = []any{ASContext, "https://w3id.org/security/v1",
	map[string]any{
		"toot":                      "http://joinmastodon.org/ns#",
		"featured":                  map[string]string{"@id": "toot:featured", "@type": "@id"},
		"manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
	}}

// PublicKeyDoc is an actor's publicKey.
type PublicKeyDoc struct {
	ID           string `json:"id"`
	Owner        string `json:"owner"`
	PublicKeyPem string `json:"publicKeyPem"`
}

// EndpointsDoc is an actor's endpoints.
type EndpointsDoc struct {
	SharedInbox string `json:"sharedInbox"`
}

// ActorDocument is the ActivityStreams form of a local actor: what
// /users/{name}, /groups/{name} and /actor serve, and the object of the
// Update{Person} or Update{Group} an actor sends when it changes.
type ActorDocument struct {
	Context                   []any        `json:"@context,omitempty"`
	ID                        string       `json:"id"`
	Type                      string       `json:"type"`
	PreferredUsername         string       `json:"preferredUsername"`
	Name                      string       `json:"name"`
	Summary                   string       `json:"summary,omitempty"`
	URL                       string       `json:"url"`
	Inbox                     string       `json:"inbox"`
	Outbox                    string       `json:"outbox"`
	Followers                 string       `json:"followers"`
	Following                 string       `json:"following"`
	Featured                  string       `json:"featured"`
	Endpoints                 EndpointsDoc `json:"endpoints"`
	PublicKey                 PublicKeyDoc `json:"publicKey"`
	ManuallyApprovesFollowers bool         `json:"manuallyApprovesFollowers"`
}

// localActorTypes are the ActivityStreams types of local actors.
var localActorTypes = map[domain.NameKind]string{
	domain.NameKindPersona:  "Person",
	domain.NameKindGroup:    "Group",
	domain.NameKindInstance: "Application",
}

// ActorType is the ActivityStreams type of a local actor of this kind
// (a deleted actor's Tombstone names it as its formerType).
func ActorType(kind domain.NameKind) string { return localActorTypes[kind] }

// Document renders a local actor. Only the public half of its key is
// ever in it.
func (u URLs) Document(a LocalActor) ActorDocument {
	name := a.DisplayName
	if name == "" {
		name = a.Name
	}
	return ActorDocument{
		Context: actorContext, ID: a.URI, Type: localActorTypes[a.Kind], PreferredUsername: a.Name, Name: name, Summary: a.Summary, URL: a.URI,
		Inbox: u.Inbox(a.URI), Outbox: u.Outbox(a.URI), Followers: u.Followers(a.URI), Following: u.Following(a.URI),
		Featured:  u.Featured(a.URI),
		Endpoints: EndpointsDoc{SharedInbox: u.SharedInbox()},
		PublicKey: PublicKeyDoc{ID: a.KeyID(u), Owner: a.URI, PublicKeyPem: a.PublicKeyPEM},
		// The instance actor is followed by no one; a persona or group
		// approves its followers by hand when its owner locked it.
		ManuallyApprovesFollowers: a.Kind == domain.NameKindInstance || a.Locked,
	}
}
