package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Visibility of a post.
type Visibility string

const (
	VisibilityPublic    Visibility = "public"    // to followers and the public collection
	VisibilityFollowers Visibility = "followers" // to followers only
	VisibilityDirect    Visibility = "direct"    // to the listed participants only (a DmPost)
)

// Valid reports whether v is known.
func (v Visibility) Valid() bool {
	return v == VisibilityPublic || v == VisibilityFollowers || v == VisibilityDirect
}

// Post is a note, local or remote, unique by ObjectURI.
type Post struct {
	ID         string
	ObjectURI  string
	AuthorURI  string
	GroupURI   string // the group it was addressed to, if any
	Content    string
	Visibility Visibility
	InReplyTo  string
	// Mentions are the actors the note mentions (its Mention tags):
	// sorted, distinct, at most MaxMentions. A store keeps them with the
	// post, so that an actor's mentions can be listed and an edit or a
	// delete reaches whom the note mentioned.
	Mentions  []string
	Published time.Time
	// Updated is when its author last edited it; zero if never.
	Updated time.Time
	Local   bool
	// Extras are what it carries beside its text (SPEC §12).
	Extras
}

// DmPost is a note addressed to listed participants, threaded by
// ParticipantsKey.
type DmPost struct {
	ID              string
	ObjectURI       string
	AuthorURI       string
	Participants    []string // sorted, including the author
	ParticipantsKey string
	Content         string
	Published       time.Time
	Updated         time.Time // last edit by its author; zero if never
	Local           bool
	// Extras are what it carries beside its text (SPEC §12); a direct
	// post keeps no poll.
	Extras
}

// MaxPostLength bounds the plain text of a post written here, in bytes
// (Mastodon's default is 500 characters). The HTML Herald renders from it
// (RenderText) and keeps as the post's content may be longer.
const MaxPostLength = 5000

// Limits on remote content. Other servers count their limits in
// characters of text (GoToSocial 5000, Mastodon 500, Misskey 3000, some
// none) and send HTML whose markup and entities can be several times the
// text, so a remote note is measured as its users count: characters of
// text (TextLength), generously bounded; a separate byte cap on the HTML
// keeps a crafted one from costing storage (the inbox takes 1 MiB bodies).
// Our own posts keep MaxPostLength.
const (
	MaxRemoteTextChars    = 100_000
	MaxRemoteContentBytes = 512 << 10
)

// MaxMentions bounds the mentions kept with a post. A note with more (a
// spam pattern; servers cap theirs, Mastodon's spam filters well below)
// is kept with the first MaxMentions in byte order, so the post itself is
// never lost for it.
const MaxMentions = 100

// NormalizeMentions returns uris trimmed, without empties, sorted,
// distinct and cut to MaxMentions, as Post.Mentions holds them; nil when
// none is left.
func NormalizeMentions(uris []string) []string {
	out := normalizeParticipants(uris)
	if len(out) == 0 {
		return nil
	}
	if len(out) > MaxMentions {
		out = out[:MaxMentions]
	}
	return out
}

// NewPost validates a post written here: content is its author's plain
// text (at most MaxPostLength bytes), which publishing then replaces by
// its rendering (RenderText).
func NewPost(id, objectURI, authorURI, content string, vis Visibility, published time.Time) (Post, error) {
	return newPost(id, objectURI, authorURI, content, vis, published, checkContent)
}

// NewLocalNote is NewPost for a post that carries extras, checked by
// CheckLocalExtras first: its text may be empty when they hold media or a
// poll.
func NewLocalNote(id, objectURI, authorURI, content string, vis Visibility, published time.Time, e Extras) (Post, error) {
	p, err := newPost(id, objectURI, authorURI, content, vis, published, func(c string) error { return CheckLocalBody(c, e) })
	p.Extras = e
	return p, err
}

// NewLocalDmNote is NewDmPost for a direct post that carries extras (no
// poll), as NewLocalNote.
func NewLocalDmNote(id, objectURI, authorURI, content string, to []string, published time.Time, e Extras) (DmPost, error) {
	if e.Poll != nil {
		return DmPost{}, fmt.Errorf("%w: a direct post cannot hold a poll", ErrInvalidInput)
	}
	d, err := newDmPost(id, objectURI, authorURI, content, to, published, func(c string) error { return CheckLocalBody(c, e) })
	d.Extras = e
	return d, err
}

// CheckLocalBody is CheckLocalContent for a post with extras: its text may
// be empty when they hold media or a poll.
func CheckLocalBody(content string, e Extras) error {
	if strings.TrimSpace(content) == "" && (len(e.Attachments) > 0 || e.Poll != nil) {
		return nil
	}
	return checkContent(content)
}

// NewRemotePost validates a post received from another server: its
// content is bounded by the remote content limits instead.
func NewRemotePost(id, objectURI, authorURI, content string, vis Visibility, published time.Time) (Post, error) {
	return NewRemoteNote(id, objectURI, authorURI, content, vis, published, Extras{})
}

// NewRemoteNote is NewRemotePost for a note that carries extras: they are
// kept within the limits of SPEC §12 (NormalizeRemoteExtras), and its
// text may be empty when they hold media, a poll or a content warning (a
// photo posted without a caption).
func NewRemoteNote(id, objectURI, authorURI, content string, vis Visibility, published time.Time, e Extras) (Post, error) {
	e = NormalizeRemoteExtras(e)
	p, err := newPost(id, objectURI, authorURI, content, vis, published, func(c string) error { return CheckRemoteBody(c, e) })
	p.Extras = e
	return p, err
}

func newPost(id, objectURI, authorURI, content string, vis Visibility, published time.Time, check func(string) error) (Post, error) {
	if id == "" || objectURI == "" || authorURI == "" {
		return Post{}, fmt.Errorf("%w: a post needs an id, an object URI and an author", ErrInvalidInput)
	}
	if !vis.Valid() || vis == VisibilityDirect {
		return Post{}, fmt.Errorf("%w: visibility %q is not one of public, followers", ErrInvalidInput, vis)
	}
	if err := check(content); err != nil {
		return Post{}, err
	}
	return Post{ID: id, ObjectURI: objectURI, AuthorURI: authorURI, Content: content,
		Visibility: vis, Published: published.UTC()}, nil
}

// NewDmPost validates a direct post written here; the author is always a
// participant.
func NewDmPost(id, objectURI, authorURI, content string, to []string, published time.Time) (DmPost, error) {
	return newDmPost(id, objectURI, authorURI, content, to, published, checkContent)
}

// NewRemoteDmPost validates a direct post received from another server,
// bounded by the remote content limits.
func NewRemoteDmPost(id, objectURI, authorURI, content string, to []string, published time.Time) (DmPost, error) {
	return NewRemoteDmNote(id, objectURI, authorURI, content, to, published, Extras{})
}

// NewRemoteDmNote is NewRemoteDmPost for a note that carries extras, as
// NewRemoteNote; a direct post keeps no poll.
func NewRemoteDmNote(id, objectURI, authorURI, content string, to []string, published time.Time, e Extras) (DmPost, error) {
	e.Poll = nil
	e = NormalizeRemoteExtras(e)
	d, err := newDmPost(id, objectURI, authorURI, content, to, published, func(c string) error { return CheckRemoteBody(c, e) })
	d.Extras = e
	return d, err
}

func newDmPost(id, objectURI, authorURI, content string, to []string, published time.Time, check func(string) error) (DmPost, error) {
	if id == "" || objectURI == "" || authorURI == "" {
		return DmPost{}, fmt.Errorf("%w: a post needs an id, an object URI and an author", ErrInvalidInput)
	}
	if len(to) == 0 {
		return DmPost{}, fmt.Errorf("%w: a direct post needs at least one recipient", ErrInvalidInput)
	}
	if err := check(content); err != nil {
		return DmPost{}, err
	}
	parts := normalizeParticipants(append([]string{authorURI}, to...))
	return DmPost{ID: id, ObjectURI: objectURI, AuthorURI: authorURI, Participants: parts,
		ParticipantsKey: ParticipantsKey(parts), Content: content, Published: published.UTC()}, nil
}

func checkContent(content string) error {
	if strings.TrimSpace(content) == "" {
		return fmt.Errorf("%w: empty content", ErrInvalidInput)
	}
	if len(content) > MaxPostLength {
		return fmt.Errorf("%w: content longer than %d bytes", ErrInvalidInput, MaxPostLength)
	}
	return nil
}

// CheckLocalContent applies our own posts' limit to a post's content (a
// new post's, or an edit's).
func CheckLocalContent(content string) error { return checkContent(content) }

// CheckRemoteContent applies the remote content limits to a note's
// content (a Create's, or an Update's new text).
func CheckRemoteContent(content string) error { return checkRemoteContent(content) }

// CheckRemoteBody is CheckRemoteContent for a note with extras (kept as
// NormalizeRemoteExtras keeps them): its text may be empty when it carries
// media, a poll or a content warning.
func CheckRemoteBody(content string, e Extras) error {
	if strings.TrimSpace(content) == "" && (len(e.Attachments) > 0 || e.Poll != nil || e.Summary != "") {
		return nil
	}
	return checkRemoteContent(content)
}

func checkRemoteContent(content string) error {
	if strings.TrimSpace(content) == "" {
		return fmt.Errorf("%w: empty content", ErrInvalidInput)
	}
	if len(content) > MaxRemoteContentBytes {
		return fmt.Errorf("%w: content of %d bytes is over %d", ErrInvalidInput, len(content), MaxRemoteContentBytes)
	}
	if n := TextLength(content); n > MaxRemoteTextChars {
		return fmt.Errorf("%w: %d characters of text is over %d", ErrInvalidInput, n, MaxRemoteTextChars)
	}
	return nil
}

// TextLength is how many characters a reader sees in HTML content: the
// runes outside tags, an entity (&amp;, &#233;) counting as one.
func TextLength(html string) int {
	n := 0
	inTag, inEntity := false, false
	for _, r := range html {
		switch {
		case inTag:
			inTag = r != '>'
		case r == '<':
			inTag, inEntity = true, false
		case inEntity:
			// An entity ends at ';'; anything that cannot be in one ends
			// it too (a bare '&' followed by text), counting its runes.
			if r == ';' {
				inEntity = false
			} else if r == ' ' || r == '&' {
				inEntity = r == '&'
				n++
			}
		case r == '&':
			inEntity = true
			n++
		default:
			n++
		}
	}
	return n
}

func normalizeParticipants(uris []string) []string {
	out := make([]string, 0, len(uris))
	for _, u := range uris {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParticipantsKey identifies a DM thread by its participants whatever their
// order or repetition: the hex SHA-256 of the sorted, distinct URIs joined by
// newlines (a newline cannot appear in a URI).
func ParticipantsKey(participants []string) string {
	parts := normalizeParticipants(participants)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:])
}

// ReactionKind is what a remote actor did to a post: liked or boosted it.
type ReactionKind string

const (
	ReactionLike     ReactionKind = "like"     // an incoming Like
	ReactionAnnounce ReactionKind = "announce" // an incoming Announce (boost)
)

// Reaction is one actor's Like or Announce of a post, kept once per (post,
// actor, kind): the post's counts are how many there are.
type Reaction struct {
	ObjectURI string
	ActorURI  string
	Kind      ReactionKind
	CreatedAt time.Time
}

// NewReaction validates a reaction.
func NewReaction(objectURI, actorURI string, kind ReactionKind, at time.Time) (Reaction, error) {
	if objectURI == "" || actorURI == "" {
		return Reaction{}, fmt.Errorf("%w: a reaction needs a post and an actor", ErrInvalidInput)
	}
	if kind != ReactionLike && kind != ReactionAnnounce {
		return Reaction{}, fmt.Errorf("%w: reaction %q is not like or announce", ErrInvalidInput, kind)
	}
	return Reaction{ObjectURI: objectURI, ActorURI: actorURI, Kind: kind, CreatedAt: at.UTC()}, nil
}

// Boost is an actor's Announce of a note held here: a remote actor that
// one of our personas follows boosting a remote note, or one of our
// personas boosting a note. It is kept once per (actor, note) and shown
// among the actor's posts, at the time of the boost.
type Boost struct {
	ActivityURI string // the Announce's id
	ActorURI    string // who boosted
	ObjectURI   string // the note boosted: a Post held here
	CreatedAt   time.Time
}

// NewBoost validates a boost.
func NewBoost(activityURI, actorURI, objectURI string, at time.Time) (Boost, error) {
	if activityURI == "" || actorURI == "" || objectURI == "" {
		return Boost{}, fmt.Errorf("%w: a boost needs an activity id, an actor and a note", ErrInvalidInput)
	}
	return Boost{ActivityURI: activityURI, ActorURI: actorURI, ObjectURI: objectURI, CreatedAt: at.UTC()}, nil
}
