package application

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
)

// noteExtras reads what a note carries beside its text (SPEC §12), as
// Mastodon and GoToSocial write it, and returns its content: content as
// given, else the one contentMap entry. Everything is read tolerantly (a
// property of the wrong shape is left out, never an error); what is read
// is not yet bounded: domain.NormalizeRemoteExtras does that.
func noteExtras(o as2Object, content string) (string, domain.Extras) {
	var e domain.Extras
	e.Summary = stringOf(o.Summary)
	e.Sensitive = boolOf(o.Sensitive)
	content, e.Language = language(o.ContentMap, content)
	e.URL = linkOf(o.URL)
	for _, raw := range itemsOf(o.Attachment) {
		if a, ok := attachmentOf(raw); ok {
			e.Attachments = append(e.Attachments, a)
			if len(e.Attachments) == domain.MaxAttachments {
				break
			}
		}
	}
	for _, raw := range itemsOf(o.Tag) {
		var t struct {
			Type json.RawMessage `json:"type"`
			Name json.RawMessage `json:"name"`
			Icon json.RawMessage `json:"icon"`
		}
		if decodeObject(raw, &t) != nil {
			continue
		}
		switch typeOf(t.Type) {
		case "Hashtag":
			if len(e.Hashtags) < 10*domain.MaxHashtags { // invalid ones are left out later
				e.Hashtags = append(e.Hashtags, stringOf(t.Name))
			}
		case "Emoji":
			if len(e.Emojis) < 10*domain.MaxEmojis {
				icon := firstItem(t.Icon)
				var ic struct {
					URL       json.RawMessage `json:"url"`
					MediaType json.RawMessage `json:"mediaType"`
				}
				if decodeObject(icon, &ic) == nil {
					e.Emojis = append(e.Emojis, domain.Emoji{Shortcode: stringOf(t.Name), IconURL: linkOf(ic.URL), MediaType: stringOf(ic.MediaType)})
				}
			}
		}
	}
	e.Poll = pollOf(o)
	return content, e
}

// itemsOf is a property's values: one, or the items of an array.
func itemsOf(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] == '[' {
		return arrayOf(raw)
	}
	return []json.RawMessage{raw}
}

func firstItem(raw json.RawMessage) json.RawMessage {
	if items := itemsOf(raw); len(items) > 0 {
		return items[0]
	}
	return nil
}

func boolOf(raw json.RawMessage) bool {
	var b bool
	return json.Unmarshal(bytes.TrimSpace(raw), &b) == nil && b
}

func intOf(raw json.RawMessage) int {
	var f float64
	if json.Unmarshal(bytes.TrimSpace(raw), &f) != nil || f < 0 || f > math.MaxInt32 {
		return 0
	}
	return int(f)
}

func timeOf(raw json.RawMessage) time.Time {
	if t, err := time.Parse(time.RFC3339, stringOf(raw)); err == nil {
		return t.UTC()
	}
	return time.Time{}
}

// language reads contentMap as GoToSocial does: the language whose entry
// is the content; without content, the one entry (or, of several, the
// first in tag order) gives both. A language that is not a BCP 47 tag is
// unknown.
func language(raw json.RawMessage, content string) (string, string) {
	var m map[string]string
	if decodeObject(raw, &m) != nil || len(m) == 0 {
		return content, ""
	}
	langs := make([]string, 0, len(m))
	for l := range m {
		if domain.ValidLanguage(l) {
			langs = append(langs, l)
		}
	}
	slices.Sort(langs)
	if content == "" {
		if len(langs) == 0 {
			return content, ""
		}
		return strings.TrimSpace(m[langs[0]]), langs[0]
	}
	for _, l := range langs {
		if strings.TrimSpace(m[l]) == content {
			return content, l
		}
	}
	if len(langs) == 1 && len(m) == 1 {
		// One entry that is not byte for byte the content (servers
		// differ in whitespace): still the content's language.
		return content, langs[0]
	}
	return content, ""
}

// linkOf reads a URL property: a string, a Link ({"href"}) or an object
// with a url, or an array of those, preferring a text/html one; "" when
// none is http(s).
func linkOf(raw json.RawMessage) string {
	first := ""
	for _, item := range itemsOf(raw) {
		item = bytes.TrimSpace(item)
		if len(item) == 0 {
			continue
		}
		href, mt := "", ""
		if item[0] == '"' {
			href = stringOf(item)
		} else {
			var l struct {
				Href      json.RawMessage `json:"href"`
				URL       json.RawMessage `json:"url"`
				MediaType json.RawMessage `json:"mediaType"`
			}
			if decodeObject(item, &l) != nil {
				continue
			}
			href, mt = stringOf(l.Href), stringOf(l.MediaType)
			if href == "" && len(bytes.TrimSpace(l.URL)) > 0 && bytes.TrimSpace(l.URL)[0] == '"' {
				href = stringOf(l.URL)
			}
		}
		if !domain.HTTPURL(href) {
			continue
		}
		if strings.HasPrefix(mt, "text/html") {
			return href
		}
		if first == "" {
			first = href
		}
	}
	return first
}

// attachmentOf reads one attachment (Image, Video, Audio, Document, or
// any other type with a URL, as GoToSocial takes them): its alt text is
// its name, else its summary (GoToSocial writes either).
func attachmentOf(raw json.RawMessage) (domain.Attachment, bool) {
	var a struct {
		Type       json.RawMessage `json:"type"`
		MediaType  json.RawMessage `json:"mediaType"`
		URL        json.RawMessage `json:"url"`
		Name       json.RawMessage `json:"name"`
		Summary    json.RawMessage `json:"summary"`
		Blurhash   json.RawMessage `json:"blurhash"`
		Width      json.RawMessage `json:"width"`
		Height     json.RawMessage `json:"height"`
		FocalPoint json.RawMessage `json:"focalPoint"`
	}
	if decodeObject(raw, &a) != nil {
		return domain.Attachment{}, false
	}
	out := domain.Attachment{Kind: domain.MediaKind(typeOf(a.Type)), MediaType: stringOf(a.MediaType), URL: linkOf(a.URL),
		Name: stringOf(a.Name), Blurhash: stringOf(a.Blurhash), Width: intOf(a.Width), Height: intOf(a.Height)}
	if out.Name == "" {
		out.Name = stringOf(a.Summary)
	}
	if out.MediaType == "" {
		// A Link in url may say it (Pleroma's attachments).
		var l struct {
			MediaType json.RawMessage `json:"mediaType"`
		}
		if decodeObject(firstItem(a.URL), &l) == nil {
			out.MediaType = stringOf(l.MediaType)
		}
	}
	var focal []float64
	if json.Unmarshal(bytes.TrimSpace(a.FocalPoint), &focal) == nil && len(focal) == 2 {
		out.Focal = &[2]float64{focal[0], focal[1]}
	}
	return out, out.URL != ""
}

// pollOf reads a Question's poll: its options from oneOf (single choice)
// or anyOf (multiple), each a Note whose name is the option and whose
// replies' totalItems counts its votes; endTime, closed (a time, or true:
// then at its end time) and votersCount. nil for anything else.
func pollOf(o as2Object) *domain.Poll {
	if typeOf(o.Type) != "Question" {
		return nil
	}
	p := &domain.Poll{}
	options := itemsOf(o.OneOf)
	if len(options) == 0 {
		options, p.Multiple = itemsOf(o.AnyOf), true
	}
	for _, raw := range options {
		if len(p.Options) == domain.MaxPollOptions {
			break
		}
		var n struct {
			Name    json.RawMessage `json:"name"`
			Replies json.RawMessage `json:"replies"`
		}
		if decodeObject(raw, &n) != nil {
			continue
		}
		var replies struct {
			TotalItems json.RawMessage `json:"totalItems"`
		}
		_ = decodeObject(n.Replies, &replies)
		p.Options = append(p.Options, domain.PollOption{Name: stringOf(n.Name), Votes: intOf(replies.TotalItems)})
	}
	if len(p.Options) == 0 {
		return nil
	}
	p.EndTime = timeOf(o.EndTime)
	p.Closed = timeOf(o.Closed)
	if p.Closed.IsZero() && boolOf(o.Closed) {
		p.Closed = p.EndTime
	}
	if p.EndTime.IsZero() {
		p.EndTime = p.Closed
	}
	p.Voters = intOf(o.VotersCount)
	if p.Voters == 0 && !p.Multiple {
		// Without votersCount a single-choice poll has a voter per vote.
		for _, opt := range p.Options {
			p.Voters += opt.Votes
		}
	}
	return p
}
