package application

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/heraldfed/herald/domain"
)

// ActivityStreams constants.
const (
	ASContext = "https://www.w3.org/ns/activitystreams"
	ASPublic  = "https://www.w3.org/ns/activitystreams#Public"
)

// Note is the ActivityStreams form of a post (a Question when it holds a
// poll), with Mastodon's extensions as Mastodon and GoToSocial write them
// (SPEC §12).
type Note struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	AttributedTo string `json:"attributedTo"`
	// Summary is the content warning; Sensitive hides the media.
	Summary   string `json:"summary,omitempty"`
	Sensitive bool   `json:"sensitive,omitempty"`
	Content   string `json:"content,omitempty"`
	// Name is a poll vote's option (its only text: a vote has no
	// content).
	Name string `json:"name,omitempty"`
	// ContentMap is the content again under its language's tag.
	ContentMap map[string]string `json:"contentMap,omitempty"`
	URL        string            `json:"url,omitempty"`
	Attachment []Attachment      `json:"attachment,omitempty"`
	Published  string            `json:"published,omitempty"`
	To         []string          `json:"to"`
	CC         []string          `json:"cc,omitempty"`
	InReplyTo  string            `json:"inReplyTo,omitempty"`
	// Updated is when its author last edited it (an Update's note).
	Updated string `json:"updated,omitempty"`
	// Tag holds a Mention per addressed actor: GoToSocial (and Mastodon)
	// show a status to a local account only if it follows the sender or is
	// mentioned, so a direct note without them is accepted and dropped.
	Tag []Tag `json:"tag,omitempty"`
	// A Question's options (oneOf: one choice, anyOf: several), each a
	// Note named by the option whose replies count its votes.
	OneOf       []PollOptionNote `json:"oneOf,omitempty"`
	AnyOf       []PollOptionNote `json:"anyOf,omitempty"`
	EndTime     string           `json:"endTime,omitempty"`
	Closed      string           `json:"closed,omitempty"`
	VotersCount *int             `json:"votersCount,omitempty"`
}

// Tag is an ActivityStreams tag of a note: a Mention, a Hashtag, or a
// custom Emoji (with its icon).
type Tag struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	Href string `json:"href,omitempty"`
	Name string `json:"name,omitempty"`
	Icon *Image `json:"icon,omitempty"`
}

// Image is an Emoji's icon.
type Image struct {
	Type      string `json:"type"`
	MediaType string `json:"mediaType,omitempty"`
	URL       string `json:"url"`
}

// Attachment is a media attachment of a note, with Mastodon's blurhash
// and focalPoint.
type Attachment struct {
	Type       string      `json:"type"`
	MediaType  string      `json:"mediaType,omitempty"`
	URL        string      `json:"url"`
	Name       string      `json:"name,omitempty"`
	Blurhash   string      `json:"blurhash,omitempty"`
	Width      int         `json:"width,omitempty"`
	Height     int         `json:"height,omitempty"`
	FocalPoint *[2]float64 `json:"focalPoint,omitempty"`
}

// PollOptionNote is one option of a Question.
type PollOptionNote struct {
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	Replies PollOptionVote `json:"replies"`
}

// PollOptionVote counts an option's votes.
type PollOptionVote struct {
	Type       string `json:"type"`
	TotalItems int    `json:"totalItems"`
}

// noteContext is the JSON-LD context of a note that uses Mastodon's
// extensions (as Mastodon writes it): sensitive, Hashtag, Emoji,
// blurhash, focalPoint, votersCount.
var noteContext = []any{ASContext, map[string]any{
	"sensitive": "as:sensitive", "Hashtag": "as:Hashtag", "toot": "http://joinmastodon.org/ns#",
	"Emoji": "toot:Emoji", "blurhash": "toot:blurhash", "votersCount": "toot:votersCount",
	"focalPoint": map[string]any{"@container": "@list", "@id": "toot:focalPoint"},
}}

// withExtras returns n carrying e (SPEC §12): the content warning, the
// language (contentMap), the URL, the attachments, the hashtags (linked to
// tagURL) and custom emoji as tags, and the poll, which makes it a
// Question.
func (n Note) withExtras(e domain.Extras, tagURL func(string) string) Note {
	n.Summary, n.Sensitive, n.URL = e.Summary, e.Sensitive, e.URL
	if e.Language != "" {
		n.ContentMap = map[string]string{e.Language: n.Content}
	}
	for _, a := range e.Attachments {
		n.Attachment = append(n.Attachment, Attachment{Type: string(a.Kind), MediaType: a.MediaType, URL: a.URL, Name: a.Name,
			Blurhash: a.Blurhash, Width: a.Width, Height: a.Height, FocalPoint: a.Focal})
	}
	for _, t := range e.Hashtags {
		n.Tag = append(n.Tag, Tag{Type: "Hashtag", Href: tagURL(t), Name: "#" + t})
	}
	for _, em := range e.Emojis {
		n.Tag = append(n.Tag, Tag{Type: "Emoji", Name: ":" + em.Shortcode + ":", Icon: &Image{Type: "Image", MediaType: em.MediaType, URL: em.IconURL}})
	}
	if p := e.Poll; p != nil {
		n.Type = "Question"
		opts := make([]PollOptionNote, 0, len(p.Options))
		for _, o := range p.Options {
			opts = append(opts, PollOptionNote{Type: "Note", Name: o.Name, Replies: PollOptionVote{Type: "Collection", TotalItems: o.Votes}})
		}
		if p.Multiple {
			n.AnyOf = opts
		} else {
			n.OneOf = opts
		}
		if !p.EndTime.IsZero() {
			n.EndTime = asTime(p.EndTime)
		}
		if !p.Closed.IsZero() {
			n.Closed = asTime(p.Closed)
		}
		voters := p.Voters
		n.VotersCount = &voters
	}
	return n
}

// extended reports whether the note uses Mastodon's extensions (and so
// noteContext).
func (n Note) extended() bool {
	return n.Summary != "" || n.Sensitive || len(n.Attachment) > 0 || n.Type == "Question" ||
		slices.ContainsFunc(n.Tag, func(t Tag) bool { return t.Type != "Mention" })
}

// JSONLDContext is the @context a document of the note needs: the
// ActivityStreams one, and Mastodon's extensions when it uses them.
func (n Note) JSONLDContext() any {
	if n.extended() {
		return noteContext
	}
	return ASContext
}

// noteActivity is an activity carrying a note, with the context its
// extensions need.
func noteActivity(a Activity, n Note) Activity {
	a.Object = n
	if n.extended() {
		a.Context = noteContext
	}
	return a
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
