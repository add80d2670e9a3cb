package domain

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Extras are what a post carries beside its text (SPEC §12): a content
// warning, a language, a link to its page, media, hashtags, custom emoji
// and a poll. Media stay where their server hosts them: a post keeps
// their metadata and URLs, never the files.
type Extras struct {
	// Summary is the content warning (ActivityStreams summary), plain
	// text; Sensitive hides the media (and, with a summary, the text)
	// until the reader asks.
	Summary   string
	Sensitive bool
	// Language is the BCP 47 tag of the text (contentMap's key); "" when
	// unknown.
	Language string
	// URL is the note's page for people (ActivityStreams url), http(s).
	URL         string
	Attachments []Attachment
	// Hashtags are the post's hashtags, lower-cased, without "#",
	// distinct, in the order the note gave them.
	Hashtags []string
	Emojis   []Emoji
	// Poll is set for a Question; nil otherwise. Only the poll store
	// methods change it once the post is stored.
	Poll *Poll
}

// Empty reports whether the extras carry nothing.
func (e Extras) Empty() bool {
	return e.Summary == "" && !e.Sensitive && e.Language == "" && e.URL == "" && len(e.Attachments) == 0 &&
		len(e.Hashtags) == 0 && len(e.Emojis) == 0 && e.Poll == nil
}

// Clone is a deep copy.
func (e Extras) Clone() Extras {
	e.Attachments = slices.Clone(e.Attachments)
	e.Hashtags = slices.Clone(e.Hashtags)
	e.Emojis = slices.Clone(e.Emojis)
	if e.Poll != nil {
		p := e.Poll.Clone()
		e.Poll = &p
	}
	return e
}

// MediaKind is the ActivityStreams type of an attachment.
type MediaKind string

const (
	MediaImage    MediaKind = "Image"
	MediaVideo    MediaKind = "Video"
	MediaAudio    MediaKind = "Audio"
	MediaDocument MediaKind = "Document"
)

// Attachment is a media file a post links to (ActivityStreams attachment,
// with Mastodon's blurhash and focalPoint).
type Attachment struct {
	Kind      MediaKind
	MediaType string // "image/png"; "" when not said
	URL       string // http(s), where its server hosts it
	// Name is the alt text, plain text.
	Name     string
	Blurhash string
	Width    int
	Height   int
	// Focal is the focal point (x, y), each in [-1, 1]; nil when not set.
	Focal *[2]float64
}

// Emoji is a custom emoji a post's text names as :shortcode:.
type Emoji struct {
	Shortcode string // without colons: [A-Za-z0-9_]
	IconURL   string // http(s)
	MediaType string
}

// PollOption is one answer of a poll and how many votes it has.
type PollOption struct {
	Name  string // plain text; votes name it exactly
	Votes int
}

// Poll is a Question's answers and their counts.
type Poll struct {
	Multiple bool // anyOf: a voter may pick several options
	Options  []PollOption
	// Voters counts the actors who voted (for a multiple-choice poll, less
	// than the votes).
	Voters int
	// EndTime is when it closes; zero for a poll without an end.
	EndTime time.Time
	// Closed is when it closed; zero while open.
	Closed time.Time
}

// Clone is a deep copy.
func (p Poll) Clone() Poll {
	p.Options = slices.Clone(p.Options)
	return p
}

// Open reports whether p takes votes at now.
func (p Poll) Open(now time.Time) bool {
	return p.Closed.IsZero() && (p.EndTime.IsZero() || now.Before(p.EndTime))
}

// Replaces reports whether p, a remote poll as its author's Update{Question}
// gives it, takes the place of old as stored: always, but that a closed
// poll is never reopened by a late Update that still has it open.
func (p Poll) Replaces(old Poll) bool {
	return old.Closed.IsZero() || !p.Closed.IsZero()
}

// Option returns the index of the option named name; -1 if none is.
func (p Poll) Option(name string) int {
	return slices.IndexFunc(p.Options, func(o PollOption) bool { return o.Name == name })
}

// Limits on what a post carries (SPEC §12). A remote post over one is kept
// without the excess (a 4xx would lose it for good); a post written here
// over one is refused with a message naming the limit.
const (
	MaxAttachments     = 16    // Mastodon keeps 16 of a remote post
	MaxAltTextChars    = 1_500 // Mastodon's and GoToSocial's media description
	MaxSummaryChars    = 1_000 // a content warning
	MaxHashtags        = 100   // per post, as MaxMentions
	MaxHashtagChars    = 100
	MaxEmojis          = 100
	MaxShortcodeChars  = 64
	MaxPollOptions     = 20
	MaxPollOptionChars = 200
	MaxLanguageChars   = 35 // a BCP 47 tag (RFC 5646 §4.4.1)
	MaxURLChars        = 2_048
	MaxMediaTypeChars  = 100
	MaxBlurhashChars   = 100
	MaxMediaDimension  = 100_000
	// A poll written here runs from MinPollDuration to MaxPollDuration.
	MinPollDuration = time.Minute
	MaxPollDuration = 31 * 24 * time.Hour
)

// HTTPURL reports whether s is an absolute http(s) URL with a host, at
// most MaxURLChars long: the only URLs a post keeps (SPEC §12).
func HTTPURL(s string) bool {
	if s == "" || len(s) > MaxURLChars || strings.ContainsAny(s, " \t\r\n\"'<>`") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != ""
}

// ValidLanguage reports whether tag reads as a BCP 47 tag: a 2 to 8 letter
// language, then subtags of 1 to 8 letters or digits.
func ValidLanguage(tag string) bool {
	if tag == "" || len(tag) > MaxLanguageChars {
		return false
	}
	for i, sub := range strings.Split(tag, "-") {
		if len(sub) < 1 || len(sub) > 8 || (i == 0 && len(sub) < 2) {
			return false
		}
		for _, r := range sub {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
				return false
			}
		}
	}
	return true
}

// NormalizeHashtag is the name a hashtag is kept and listed by: without
// "#", lower-cased; "" when it is not a hashtag (empty, only digits, too
// long, or holding anything but letters, marks, digits and "_").
func NormalizeHashtag(name string) string {
	name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "#"))
	if name == "" || utf8.RuneCountInString(name) > MaxHashtagChars {
		return ""
	}
	digits := true
	for _, r := range name {
		if !hashtagRune(r) {
			return ""
		}
		digits = digits && unicode.IsDigit(r)
	}
	if digits {
		return ""
	}
	return name
}

func hashtagRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}

// ValidShortcode reports whether s is a custom emoji's shortcode.
func ValidShortcode(s string) bool {
	if s == "" || len(s) > MaxShortcodeChars {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// cut returns s cut to at most n runes.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

// plain makes text one a post keeps: valid UTF-8, no control characters
// but newlines and tabs, trimmed.
func plain(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return -1
	}, s)
	return strings.TrimSpace(s)
}

// NormalizeRemoteExtras keeps what a remote note carries within the
// limits of SPEC §12, dropping the excess and what is malformed: a URL
// that is not http(s), an attachment without one, an emoji without a
// valid shortcode or icon, a hashtag that is not one; longer texts are
// cut. Plain-text fields are expected stripped of markup already (the
// sanitizer's job); this never fails, so a post is never refused for
// what it carries.
func NormalizeRemoteExtras(e Extras) Extras {
	out := Extras{Sensitive: e.Sensitive}
	out.Summary = cut(plain(e.Summary), MaxSummaryChars)
	if ValidLanguage(e.Language) {
		out.Language = e.Language
	}
	if HTTPURL(e.URL) {
		out.URL = e.URL
	}
	for _, a := range e.Attachments {
		if len(out.Attachments) == MaxAttachments {
			break
		}
		if a, ok := normalizeAttachment(a); ok {
			a.Name = cut(a.Name, MaxAltTextChars)
			out.Attachments = append(out.Attachments, a)
		}
	}
	out.Hashtags = normalizeHashtags(e.Hashtags)
	seen := map[string]bool{}
	for _, em := range e.Emojis {
		if len(out.Emojis) == MaxEmojis {
			break
		}
		em.Shortcode = strings.Trim(em.Shortcode, ":")
		if !ValidShortcode(em.Shortcode) || !HTTPURL(em.IconURL) || seen[em.Shortcode] {
			continue
		}
		seen[em.Shortcode] = true
		em.MediaType = mediaType(em.MediaType)
		out.Emojis = append(out.Emojis, em)
	}
	if e.Poll != nil {
		p := normalizePoll(*e.Poll, true)
		if len(p.Options) > 0 {
			out.Poll = &p
		}
	}
	return out
}

// CheckLocalExtras validates what a post written here carries (SPEC §12):
// an error naming the limit for anything over one or malformed, else the
// extras as kept (texts trimmed, hashtags normalized, media kinds
// defaulted).
func CheckLocalExtras(e Extras) (Extras, error) {
	bad := func(format string, args ...any) (Extras, error) {
		return Extras{}, fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
	}
	out := Extras{Sensitive: e.Sensitive, Summary: plain(e.Summary), Emojis: nil}
	if n := utf8.RuneCountInString(out.Summary); n > MaxSummaryChars {
		return bad("a content warning of %d characters is over %d", n, MaxSummaryChars)
	}
	if e.Language != "" {
		if !ValidLanguage(e.Language) {
			return bad("language %q is not a BCP 47 tag", cut(e.Language, 40))
		}
		out.Language = e.Language
	}
	if len(e.Attachments) > MaxAttachments {
		return bad("%d media attachments are over %d", len(e.Attachments), MaxAttachments)
	}
	for i, a := range e.Attachments {
		a.Name = plain(a.Name)
		if n := utf8.RuneCountInString(a.Name); n > MaxAltTextChars {
			return bad("the alt text of media %d has %d characters, over %d", i+1, n, MaxAltTextChars)
		}
		if !HTTPURL(a.URL) {
			return bad("media %d needs an http(s) URL", i+1)
		}
		if a.Focal != nil && !validFocal(*a.Focal) {
			return bad("the focal point of media %d is not within [-1, 1]", i+1)
		}
		if a.Width < 0 || a.Height < 0 || a.Width > MaxMediaDimension || a.Height > MaxMediaDimension {
			return bad("the size of media %d is out of range", i+1)
		}
		if a.Blurhash != "" && !validBlurhash(a.Blurhash) {
			return bad("the blurhash of media %d is not one", i+1)
		}
		if a.MediaType != "" && mediaType(a.MediaType) == "" {
			return bad("the media type of media %d is not type/subtype", i+1)
		}
		kept, _ := normalizeAttachment(a)
		out.Attachments = append(out.Attachments, kept)
	}
	out.Hashtags = normalizeHashtags(e.Hashtags)
	if e.Poll != nil {
		p := e.Poll
		if len(p.Options) < 2 || len(p.Options) > MaxPollOptions {
			return bad("a poll has 2 to %d options, not %d", MaxPollOptions, len(p.Options))
		}
		names := map[string]bool{}
		for i, o := range p.Options {
			name := plain(o.Name)
			if name == "" || utf8.RuneCountInString(name) > MaxPollOptionChars {
				return bad("poll option %d must have 1 to %d characters", i+1, MaxPollOptionChars)
			}
			if names[name] {
				return bad("poll option %q is there twice", cut(name, 40))
			}
			names[name] = true
		}
		kept := normalizePoll(*p, false)
		out.Poll = &kept
	}
	return out, nil
}

func validFocal(f [2]float64) bool {
	return f[0] >= -1 && f[0] <= 1 && f[1] >= -1 && f[1] <= 1
}

// validBlurhash: Base83 characters, as long as a blurhash can be.
func validBlurhash(s string) bool {
	if len(s) < 6 || len(s) > MaxBlurhashChars {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("#$%*+,-.:;=?@[]^_{|}~", r)) {
			return false
		}
	}
	return true
}

// mediaType keeps a "type/subtype" media type, lower-cased, without
// parameters; "" otherwise.
func mediaType(s string) string {
	s = strings.ToLower(strings.TrimSpace(strings.SplitN(s, ";", 2)[0]))
	typ, sub, ok := strings.Cut(s, "/")
	if !ok || typ == "" || sub == "" || len(s) > MaxMediaTypeChars {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("/+-.", r)) {
			return ""
		}
	}
	return s
}

// normalizeAttachment keeps an attachment with an http(s) URL, its other
// fields where valid.
func normalizeAttachment(a Attachment) (Attachment, bool) {
	if !HTTPURL(a.URL) {
		return Attachment{}, false
	}
	out := Attachment{URL: a.URL, Name: plain(a.Name), MediaType: mediaType(a.MediaType), Kind: a.Kind}
	switch a.Kind {
	case MediaImage, MediaVideo, MediaAudio, MediaDocument:
	default:
		out.Kind = kindOf(out.MediaType)
	}
	if validBlurhash(a.Blurhash) {
		out.Blurhash = a.Blurhash
	}
	if a.Width > 0 && a.Height > 0 && a.Width <= MaxMediaDimension && a.Height <= MaxMediaDimension {
		out.Width, out.Height = a.Width, a.Height
	}
	if a.Focal != nil && validFocal(*a.Focal) {
		f := *a.Focal
		out.Focal = &f
	}
	return out, true
}

// kindOf is the ActivityStreams type of a media type.
func kindOf(mt string) MediaKind {
	switch {
	case strings.HasPrefix(mt, "image/"):
		return MediaImage
	case strings.HasPrefix(mt, "video/"):
		return MediaVideo
	case strings.HasPrefix(mt, "audio/"):
		return MediaAudio
	}
	return MediaDocument
}

func normalizeHashtags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if len(out) == MaxHashtags {
			break
		}
		if n := NormalizeHashtag(t); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// normalizePoll keeps the first MaxPollOptions options whose names are
// plain text within MaxPollOptionChars (an option cut would no longer
// match the votes naming it, so a longer one is left out), each name
// once; counts below zero are zero.
func normalizePoll(p Poll, remote bool) Poll {
	out := Poll{Multiple: p.Multiple, Voters: max(p.Voters, 0), EndTime: utcOrZero(p.EndTime), Closed: utcOrZero(p.Closed)}
	for _, o := range p.Options {
		if len(out.Options) == MaxPollOptions {
			break
		}
		name := plain(o.Name)
		if name == "" || utf8.RuneCountInString(name) > MaxPollOptionChars || out.Option(name) >= 0 {
			continue
		}
		votes := max(o.Votes, 0)
		if !remote {
			votes = 0
		}
		out.Options = append(out.Options, PollOption{Name: name, Votes: votes})
	}
	if !remote {
		out.Voters = 0
	}
	return out
}

func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// PollDue is a poll written here that its followers must hear of
// (ports.PollStore.PollsDue).
type PollDue struct {
	ObjectURI string
	EndTime   time.Time
	Expired   bool // its end time passed and it is not closed yet
	Changed   bool // it has votes its followers have not heard of
}
