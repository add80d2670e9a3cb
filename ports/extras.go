package ports

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// The JSON form in which the SQL stores keep a post's extras and poll
// (one column each), written here once so both stores read each other's
// rows and a rename in domain does not change what is stored.

type extrasJSON struct {
	Summary     string           `json:"summary,omitempty"`
	Sensitive   bool             `json:"sensitive,omitempty"`
	Language    string           `json:"language,omitempty"`
	URL         string           `json:"url,omitempty"`
	Attachments []attachmentJSON `json:"attachments,omitempty"`
	Hashtags    []string         `json:"hashtags,omitempty"`
	Emojis      []emojiJSON      `json:"emojis,omitempty"`
}

type attachmentJSON struct {
	Kind      string      `json:"kind"`
	MediaType string      `json:"media_type,omitempty"`
	URL       string      `json:"url"`
	Name      string      `json:"name,omitempty"`
	Blurhash  string      `json:"blurhash,omitempty"`
	Width     int         `json:"width,omitempty"`
	Height    int         `json:"height,omitempty"`
	Focal     *[2]float64 `json:"focal,omitempty"`
}

type emojiJSON struct {
	Shortcode string `json:"shortcode"`
	IconURL   string `json:"icon_url"`
	MediaType string `json:"media_type,omitempty"`
}

type pollJSON struct {
	Multiple bool         `json:"multiple,omitempty"`
	Options  []optionJSON `json:"options"`
	Voters   int          `json:"voters"`
	EndTime  *time.Time   `json:"end_time,omitempty"`
	Closed   *time.Time   `json:"closed,omitempty"`
}

type optionJSON struct {
	Name  string `json:"name"`
	Votes int    `json:"votes"`
}

// EncodeExtras is the JSON of e without its poll; nil when it carries
// nothing else.
func EncodeExtras(e domain.Extras) ([]byte, error) {
	e.Poll = nil
	if e.Empty() {
		return nil, nil
	}
	j := extrasJSON{Summary: e.Summary, Sensitive: e.Sensitive, Language: e.Language, URL: e.URL, Hashtags: e.Hashtags}
	for _, a := range e.Attachments {
		j.Attachments = append(j.Attachments, attachmentJSON{Kind: string(a.Kind), MediaType: a.MediaType, URL: a.URL,
			Name: a.Name, Blurhash: a.Blurhash, Width: a.Width, Height: a.Height, Focal: a.Focal})
	}
	for _, em := range e.Emojis {
		j.Emojis = append(j.Emojis, emojiJSON{Shortcode: em.Shortcode, IconURL: em.IconURL, MediaType: em.MediaType})
	}
	return json.Marshal(j)
}

// DecodeExtras reads what EncodeExtras wrote (nothing: no extras), the
// poll left nil.
func DecodeExtras(data []byte) (domain.Extras, error) {
	if len(data) == 0 || string(data) == "null" {
		return domain.Extras{}, nil
	}
	var j extrasJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return domain.Extras{}, fmt.Errorf("extras: %w", err)
	}
	e := domain.Extras{Summary: j.Summary, Sensitive: j.Sensitive, Language: j.Language, URL: j.URL, Hashtags: j.Hashtags}
	for _, a := range j.Attachments {
		e.Attachments = append(e.Attachments, domain.Attachment{Kind: domain.MediaKind(a.Kind), MediaType: a.MediaType, URL: a.URL,
			Name: a.Name, Blurhash: a.Blurhash, Width: a.Width, Height: a.Height, Focal: a.Focal})
	}
	for _, em := range j.Emojis {
		e.Emojis = append(e.Emojis, domain.Emoji{Shortcode: em.Shortcode, IconURL: em.IconURL, MediaType: em.MediaType})
	}
	return e, nil
}

// EncodePoll is the JSON of p; nil for no poll.
func EncodePoll(p *domain.Poll) ([]byte, error) {
	if p == nil {
		return nil, nil
	}
	j := pollJSON{Multiple: p.Multiple, Voters: p.Voters, Options: []optionJSON{}, EndTime: timePtr(p.EndTime), Closed: timePtr(p.Closed)}
	for _, o := range p.Options {
		j.Options = append(j.Options, optionJSON{Name: o.Name, Votes: o.Votes})
	}
	return json.Marshal(j)
}

// DecodePoll reads what EncodePoll wrote; nil for nothing.
func DecodePoll(data []byte) (*domain.Poll, error) {
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	var j pollJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("poll: %w", err)
	}
	p := &domain.Poll{Multiple: j.Multiple, Voters: j.Voters}
	if j.EndTime != nil {
		p.EndTime = j.EndTime.UTC()
	}
	if j.Closed != nil {
		p.Closed = j.Closed.UTC()
	}
	for _, o := range j.Options {
		p.Options = append(p.Options, domain.PollOption{Name: o.Name, Votes: o.Votes})
	}
	return p, nil
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// VoteSlot is the part of a poll vote's unique key beside the poll and the
// voter: the option in a multiple-choice poll, "" in a single-choice one,
// so a store's unique key on (poll, voter, slot) admits one vote per voter
// and option there, one per voter here.
func VoteSlot(p domain.Poll, option string) string {
	if p.Multiple {
		return option
	}
	return ""
}

// Recount sets p's counts from votes (the option each vote names, with
// its voter): an option's votes, and the distinct voters of any option.
func Recount(p *domain.Poll, votes []PollVote) {
	voters := map[string]bool{}
	for i := range p.Options {
		p.Options[i].Votes = 0
	}
	for _, v := range votes {
		if i := p.Option(v.Choice); i >= 0 {
			p.Options[i].Votes++
			voters[v.Voter] = true
		}
	}
	p.Voters = len(voters)
}

// PollVote is one vote as a store reads it back to count a poll.
type PollVote struct{ Voter, Choice string }
