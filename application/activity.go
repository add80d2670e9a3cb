package application

import (
	"encoding/json"
	"time"

	"github.com/heraldfed/herald/domain"
)

// ActivityStreams constants.
const (
	ASContext = "https://www.w3.org/ns/activitystreams"
	ASPublic  = "https://www.w3.org/ns/activitystreams#Public"
)

// Note is the ActivityStreams form of a post.
type Note struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	AttributedTo string   `json:"attributedTo"`
	Content      string   `json:"content"`
	Published    string   `json:"published"`
	To           []string `json:"to"`
	CC           []string `json:"cc,omitempty"`
	InReplyTo    string   `json:"inReplyTo,omitempty"`
	// Updated is when its author last edited it (an Update's note).
	Updated string `json:"updated,omitempty"`
	// Tag holds a Mention per addressed actor: GoToSocial (and Mastodon)
	// show a status to a local account only if it follows the sender or is
	// mentioned, so a direct note without them is accepted and dropped.
	Tag []Tag `json:"tag,omitempty"`
}

// Tag is an ActivityStreams tag of a note; Herald writes Mentions.
type Tag struct {
	Type string `json:"type"`
	Href string `json:"href"`
	Name string `json:"name,omitempty"`
}

// mentionOf is the Mention of a remote actor, named @user@host as
// servers show it.
func mentionOf(fa domain.ForeignAvatar) Tag {
	name := ""
	if fa.PreferredUsername != "" && fa.Host != "" {
		name = "@" + fa.PreferredUsername + "@" + fa.Host
	}
	return Tag{Type: "Mention", Href: fa.ActorURI, Name: name}
}

// Activity is an outgoing activity wrapping an object or a URI.
type Activity struct {
	Context   any      `json:"@context,omitempty"`
	ID        string   `json:"id"`
	Type      string   `json:"type"`
	Actor     string   `json:"actor"`
	Published string   `json:"published,omitempty"`
	To        []string `json:"to,omitempty"`
	CC        []string `json:"cc,omitempty"`
	Object    any      `json:"object"`
	// Content is a Flag's comment (Mastodon's reports carry it there).
	Content string `json:"content,omitempty"`
}

// Marshal renders the activity as it is sent.
func (a Activity) Marshal() ([]byte, error) {
	if a.Context == nil {
		a.Context = ASContext
	}
	return json.Marshal(a)
}

func asTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// addressing returns to and cc of a post by visibility (as Mastodon sends
// them: public posts to Public with followers in cc).
func addressing(vis domain.Visibility, followers string, direct []string) (to, cc []string) {
	switch vis {
	case domain.VisibilityPublic:
		return []string{ASPublic}, []string{followers}
	case domain.VisibilityFollowers:
		return []string{followers}, nil
	default:
		return direct, nil
	}
}
