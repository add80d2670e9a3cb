package httpapi

import (
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// PostRoutes is the client API of posts, on one handler type: publishing,
// reading (by author, by hashtag, a persona's mentions and direct
// threads), editing and deleting, boosts and poll votes. New registers
// publishing; NewFollowRoutes registers the rest, which call the
// federation's use cases.
type PostRoutes struct {
	authenticator
	fed *application.Federation // app's
}

// NewPostRoutes builds the routes; app authenticates and publishes, its
// Federation does the rest.
func NewPostRoutes(app *application.Application, log *slog.Logger) *PostRoutes {
	return &PostRoutes{authenticator: newAuthenticator(app, log), fed: &app.Federation}
}

// registerPublish registers POST /api/v1/posts.
func (p *PostRoutes) registerPublish(r *mux.Router) {
	r.Handle("/api/v1/posts", p.authed(p.publish)).Methods(http.MethodPost)
}

// Register implements Routes: every route but publishing's.
func (p *PostRoutes) Register(r *mux.Router) {
	r.Handle("/api/v1/posts", p.authed(p.listPosts)).Methods(http.MethodGet)
	r.Handle("/api/v1/posts/{id}", p.authed(p.editPost)).Methods(http.MethodPatch)
	r.Handle("/api/v1/posts/{id}", p.authed(p.deletePost)).Methods(http.MethodDelete)
	r.Handle("/api/v1/tags/{tag}/posts", p.authed(p.tagged)).Methods(http.MethodGet)
	r.Handle("/api/v1/polls/votes", p.authed(p.vote)).Methods(http.MethodPost)
	r.Handle("/api/v1/boosts", p.authed(p.boost)).Methods(http.MethodPost)
	r.Handle("/api/v1/boosts", p.authed(p.unboost)).Methods(http.MethodDelete)
	r.Handle("/api/v1/direct", p.authed(p.directThread)).Methods(http.MethodGet)
	r.Handle("/api/v1/mentions", p.authed(p.mentions)).Methods(http.MethodGet)
}

// postJSON is a post to publish. spoiler_text (Mastodon's name) and
// summary both set the content warning.
type postJSON struct {
	As          string      `json:"as"`
	Content     string      `json:"content"`
	Visibility  string      `json:"visibility"`
	To          []string    `json:"to"`
	InReplyTo   string      `json:"in_reply_to"`
	SpoilerText string      `json:"spoiler_text"`
	Summary     string      `json:"summary"`
	Sensitive   bool        `json:"sensitive"`
	Language    string      `json:"language"`
	Media       []mediaJSON `json:"media"`
	Poll        *pollJSON   `json:"poll"`
}

// mediaJSON is an attachment, hosted by the application in front of
// Herald. description (Mastodon's name) and alt both set the alt text.
type mediaJSON struct {
	URL         string     `json:"url"`
	Description string     `json:"description,omitempty"`
	Alt         string     `json:"alt,omitempty"`
	Type        string     `json:"type,omitempty"` // image, video, audio, document; from media_type when absent
	MediaType   string     `json:"media_type,omitempty"`
	Blurhash    string     `json:"blurhash,omitempty"`
	Width       int        `json:"width,omitempty"`
	Height      int        `json:"height,omitempty"`
	Focus       *focusJSON `json:"focus,omitempty"`
}

type focusJSON struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// pollJSON is a poll to publish: expires_in in seconds, as Mastodon's.
type pollJSON struct {
	Options   []string `json:"options"`
	Multiple  bool     `json:"multiple"`
	ExpiresIn int      `json:"expires_in"`
}

var mediaKinds = map[string]domain.MediaKind{"image": domain.MediaImage, "video": domain.MediaVideo, "audio": domain.MediaAudio,
	"document": domain.MediaDocument, "unknown": domain.MediaDocument}

func (m mediaJSON) attachment() (domain.Attachment, error) {
	a := domain.Attachment{URL: m.URL, Name: m.Description, MediaType: m.MediaType, Blurhash: m.Blurhash, Width: m.Width, Height: m.Height}
	if a.Name == "" {
		a.Name = m.Alt
	}
	if m.Type != "" {
		kind, ok := mediaKinds[m.Type]
		if !ok {
			return domain.Attachment{}, fmt.Errorf("%w: media type %q is not image, video, audio or document", domain.ErrInvalidInput, m.Type)
		}
		a.Kind = kind
	}
	if m.Focus != nil {
		a.Focal = &[2]float64{m.Focus.X, m.Focus.Y}
	}
	return a, nil
}

type publishedJSON struct {
	ID            string `json:"id"` // for PATCH and DELETE /api/v1/posts/{id}
	URI           string `json:"uri"`
	Activity      string `json:"activity"`
	Inboxes       int    `json:"inboxes"`
	Queued        int    `json:"queued"`
	AlreadyQueued int    `json:"already_queued"`
}

// publish posts a note as one of the account's personas (POST
// /api/v1/posts): 201; 422 for what breaks a rule of SPEC §12, naming it.
func (p *PostRoutes) publish(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in postJSON
	if !decode(w, r, p.log, &in) {
		return
	}
	cmd := application.Publish{
		UserID: u.ID, As: in.As, Content: in.Content, Visibility: domain.Visibility(in.Visibility), To: in.To, InReplyTo: in.InReplyTo,
		Summary: in.SpoilerText, Sensitive: in.Sensitive, Language: in.Language,
	}
	if cmd.Summary == "" {
		cmd.Summary = in.Summary
	}
	for _, m := range in.Media {
		a, err := m.attachment()
		if err != nil {
			writeError(w, r, p.log, err)
			return
		}
		cmd.Media = append(cmd.Media, a)
	}
	if in.Poll != nil {
		cmd.Poll = &application.NewPoll{Options: in.Poll.Options, Multiple: in.Poll.Multiple, Duration: time.Duration(in.Poll.ExpiresIn) * time.Second}
	}
	res, err := p.app.Publish.Handle(r.Context(), cmd)
	if err != nil {
		writeError(w, r, p.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, publishedJSON{ID: res.ID, URI: res.ObjectURI, Activity: res.ActivityID, Inboxes: res.Inboxes,
		Queued: res.Queued, AlreadyQueued: res.AlreadyQueued})
}

// postOutJSON is a post as the API returns it. content is sanitized HTML;
// the plain-text fields (summary, a medium's description, a poll option's
// title) come HTML-escaped, so that every text field can be put in a page
// as it is; URLs are http(s) only (SPEC §10, §12).
type postOutJSON struct {
	URI        string `json:"uri"`
	Author     string `json:"author"`
	Content    string `json:"content"`
	Visibility string `json:"visibility"`
	Group      string `json:"group,omitempty"`
	InReplyTo  string `json:"in_reply_to,omitempty"`
	extrasOutJSON
	Mentions  []string  `json:"mentions,omitempty"`
	Published time.Time `json:"published"`
	Updated   string    `json:"updated,omitempty"` // RFC 3339, when its author last edited it
	Local     bool      `json:"local"`
	// Likes and Announces by remote actors, counted for our own posts.
	Likes     *int `json:"likes,omitempty"`
	Announces *int `json:"announces,omitempty"`
	// Boost is set when the listed actor boosted this post (by someone
	// else, or itself) rather than wrote it.
	Boost *boostOutJSON `json:"boost,omitempty"`
}

// extrasOutJSON is what a post carries beside its text (SPEC §12).
type extrasOutJSON struct {
	Summary   string         `json:"summary,omitempty"`
	Sensitive bool           `json:"sensitive"`
	Language  string         `json:"language,omitempty"`
	URL       string         `json:"url,omitempty"`
	Media     []mediaOutJSON `json:"media,omitempty"`
	Hashtags  []string       `json:"hashtags,omitempty"`
	Emojis    []emojiOutJSON `json:"emojis,omitempty"`
	Poll      *pollOutJSON   `json:"poll,omitempty"`
}

type mediaOutJSON struct {
	Type        string     `json:"type"` // image, video, audio, document
	MediaType   string     `json:"media_type,omitempty"`
	URL         string     `json:"url"`
	Description string     `json:"description,omitempty"`
	Blurhash    string     `json:"blurhash,omitempty"`
	Width       int        `json:"width,omitempty"`
	Height      int        `json:"height,omitempty"`
	Focus       *focusJSON `json:"focus,omitempty"`
}

type emojiOutJSON struct {
	Shortcode string `json:"shortcode"`
	URL       string `json:"url"`
}

type pollOutJSON struct {
	Options     []pollOptionOutJSON `json:"options"`
	Multiple    bool                `json:"multiple"`
	VotesCount  int                 `json:"votes_count"`
	VotersCount int                 `json:"voters_count"`
	ExpiresAt   string              `json:"expires_at,omitempty"`
	Expired     bool                `json:"expired"`
	ClosedAt    string              `json:"closed_at,omitempty"`
}

type pollOptionOutJSON struct {
	Title      string `json:"title"`
	VotesCount int    `json:"votes_count"`
}

var mediaKindNames = map[domain.MediaKind]string{domain.MediaImage: "image", domain.MediaVideo: "video", domain.MediaAudio: "audio", domain.MediaDocument: "document"}

func extrasOut(e domain.Extras) extrasOutJSON {
	out := extrasOutJSON{Summary: html.EscapeString(e.Summary), Sensitive: e.Sensitive, Language: e.Language, URL: e.URL, Hashtags: e.Hashtags}
	for _, a := range e.Attachments {
		m := mediaOutJSON{Type: mediaKindNames[a.Kind], MediaType: a.MediaType, URL: a.URL, Description: html.EscapeString(a.Name),
			Blurhash: a.Blurhash, Width: a.Width, Height: a.Height}
		if m.Type == "" {
			m.Type = "document"
		}
		if a.Focal != nil {
			m.Focus = &focusJSON{X: a.Focal[0], Y: a.Focal[1]}
		}
		out.Media = append(out.Media, m)
	}
	for _, em := range e.Emojis {
		out.Emojis = append(out.Emojis, emojiOutJSON{Shortcode: em.Shortcode, URL: em.IconURL})
	}
	if e.Poll != nil {
		out.Poll = pollOut(*e.Poll)
	}
	return out
}

// pollOut is a poll as the API shows it: expired once closed (Herald
// closes its own within PollInterval of their end; a remote one when its
// author's Update says so).
func pollOut(p domain.Poll) *pollOutJSON {
	out := &pollOutJSON{Options: []pollOptionOutJSON{}, Multiple: p.Multiple, VotersCount: p.Voters, ExpiresAt: rfc3339(p.EndTime),
		Expired: !p.Closed.IsZero(), ClosedAt: rfc3339(p.Closed)}
	for _, o := range p.Options {
		out.Options = append(out.Options, pollOptionOutJSON{Title: html.EscapeString(o.Name), VotesCount: o.Votes})
		out.VotesCount += o.Votes
	}
	return out
}

func (p *PostRoutes) postOut(post domain.Post) postOutJSON {
	return postOutJSON{URI: post.ObjectURI, Author: post.AuthorURI, Content: post.Content, Visibility: string(post.Visibility),
		Group: post.GroupURI, InReplyTo: post.InReplyTo, Mentions: post.Mentions, Published: post.Published, Updated: rfc3339(post.Updated),
		Local: post.Local, extrasOutJSON: extrasOut(post.Extras)}
}

type boostOutJSON struct {
	By       string    `json:"by"`
	Activity string    `json:"activity"`
	At       time.Time `json:"at"`
}

// listPosts lists the public posts held by ?author=<actor URI> and the
// posts that actor boosted (with "boost" set), newest first (a boost at
// its time), ?before=<RFC 3339> paging and ?limit=<n> (20 by default).
func (p *PostRoutes) listPosts(w http.ResponseWriter, r *http.Request, _ domain.RootUser) {
	q := r.URL.Query()
	author := q.Get("author")
	if author == "" {
		writeError(w, r, p.log, fmt.Errorf("%w: the author parameter is missing", errMalformed))
		return
	}
	before, limit, err := pageParams(q)
	if err != nil {
		writeError(w, r, p.log, err)
		return
	}
	items, err := p.fed.Collections.PostsAndBoostsBy(r.Context(), author, before, limit)
	if err != nil {
		writeError(w, r, p.log, err)
		return
	}
	out := make([]postOutJSON, 0, len(items))
	for _, it := range items {
		po := p.postOut(it.Post)
		if it.Post.Local {
			c, err := p.fed.Collections.Reactions(r.Context(), it.Post.ObjectURI)
			if err != nil {
				writeError(w, r, p.log, err)
				return
			}
			likes, announces := c[domain.ReactionLike], c[domain.ReactionAnnounce]
			po.Likes, po.Announces = &likes, &announces
		}
		if b := it.Boost; b != nil {
			po.Boost = &boostOutJSON{By: b.ActorURI, Activity: b.ActivityURI, At: b.CreatedAt}
		}
		out = append(out, po)
	}
	writeJSON(w, http.StatusOK, map[string]any{"posts": out})
}

// tagged lists the public posts held here, local or received, that carry
// the hashtag {tag} (with or without "#", any case), newest first, with
// ?before= and ?limit= as the posts listing: 200 {"tag","posts"}; 422
// for a tag that is not a hashtag.
func (p *PostRoutes) tagged(w http.ResponseWriter, r *http.Request, _ domain.RootUser) {
	tag := domain.NormalizeHashtag(mux.Vars(r)["tag"])
	if tag == "" {
		writeError(w, r, p.log, fmt.Errorf("%w: %q is not a hashtag (letters, digits and _, not only digits, at most %d)",
			domain.ErrInvalidInput, mux.Vars(r)["tag"], domain.MaxHashtagChars))
		return
	}
	before, limit, err := pageParams(r.URL.Query())
	if err != nil {
		writeError(w, r, p.log, err)
		return
	}
	posts, err := p.fed.Collections.Tagged(r.Context(), tag, before, limit)
	if err != nil {
		writeError(w, r, p.log, err)
		return
	}
	out := make([]postOutJSON, 0, len(posts))
	for _, post := range posts {
		out = append(out, p.postOut(post))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tag": tag, "posts": out})
}

// voteJSON is a persona's vote: the poll's URI, and the options by index
// (choices, as Mastodon's) or by name (options).
type voteJSON struct {
	As      string   `json:"as"`
	Poll    string   `json:"poll"`
	Choices []int    `json:"choices"`
	Options []string `json:"options"`
}

type votedJSON struct {
	Poll    *pollOutJSON `json:"poll"`
	Voted   []string     `json:"voted"` // HTML-escaped, as the poll's titles
	Created bool         `json:"created"`
	Queued  int          `json:"queued"`
}

// vote makes a persona vote in a poll held here (POST /api/v1/polls/votes
// {"as","poll","choices"|"options"}): 200, created false when it had voted
// so already (nothing sent); 404 a poll not held here; 422 a closed poll
// or choices that are not its options.
func (p *PostRoutes) vote(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in voteJSON
	if !decode(w, r, p.log, &in) {
		return
	}
	res, err := p.fed.Vote.Handle(r.Context(), application.Vote{UserID: u.ID, As: in.As, Poll: in.Poll, Choices: in.Options, Indexes: in.Choices})
	if err != nil {
		writeError(w, r, p.log, err)
		return
	}
	voted := make([]string, 0, len(res.Choices))
	for _, c := range res.Choices {
		voted = append(voted, html.EscapeString(c))
	}
	writeJSON(w, http.StatusOK, votedJSON{Poll: pollOut(res.Poll), Voted: voted, Created: res.Created, Queued: res.Queued})
}

type editJSON struct {
	Content string `json:"content"`
}

type ownPostJSON struct {
	URI      string `json:"uri"`
	Activity string `json:"activity"`
	Content  string `json:"content,omitempty"`
	Updated  string `json:"updated,omitempty"`
	Queued   int    `json:"queued"`
}

// editPost replaces the content of one of the account's posts
// (PATCH /api/v1/posts/{id} {"content"}) and sends its Update: 200; 404
// for a post that is not the account's.
func (p *PostRoutes) editPost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in editJSON
	if !decode(w, r, p.log, &in) {
		return
	}
	res, err := p.fed.OwnPosts.Edit(r.Context(), application.EditPost{UserID: u.ID, ID: mux.Vars(r)["id"], Content: in.Content})
	if err != nil {
		writeError(w, r, p.log, err)
		return
	}
	writeJSON(w, http.StatusOK, ownPostJSON{URI: res.ObjectURI, Activity: res.ActivityID, Content: res.Content,
		Updated: res.Updated.UTC().Format(time.RFC3339Nano), Queued: res.Queued})
}

// deletePost deletes one of the account's posts (DELETE
// /api/v1/posts/{id}) and sends its Delete: 200 with what was queued; 404
// for a post that is not the account's.
func (p *PostRoutes) deletePost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	res, err := p.fed.OwnPosts.Delete(r.Context(), application.DeletePost{UserID: u.ID, ID: mux.Vars(r)["id"]})
	reply(w, r, p.log, err, http.StatusOK, ownPostJSON{URI: res.ObjectURI, Activity: res.ActivityID, Queued: res.Queued})
}

type boostJSON struct {
	As     string `json:"as"`
	Object string `json:"object"`
}

type boostedJSON struct {
	Object   string `json:"object"`
	Activity string `json:"activity,omitempty"`
	Created  bool   `json:"created"`
	Queued   int    `json:"queued"`
}

// boost makes a persona boost a note (POST /api/v1/boosts {"as",
// "object"}): 201 for a new boost, 200 when it was boosted already.
func (p *PostRoutes) boost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	var in boostJSON
	if !decode(w, r, p.log, &in) {
		return
	}
	res, err := p.fed.Boost.Handle(r.Context(), application.Boost{UserID: u.ID, As: in.As, Object: in.Object})
	reply(w, r, p.log, err, createdOrOK(res.Created), boostedJSON{Object: res.ObjectURI, Activity: res.ActivityID, Created: res.Created, Queued: res.Queued})
}

// unboost takes a persona's boost back (DELETE
// /api/v1/boosts?as=<persona>&object=<note URI>) and sends the Undo: 200,
// with created false when there was no such boost.
func (p *PostRoutes) unboost(w http.ResponseWriter, r *http.Request, u domain.RootUser) {
	q := r.URL.Query()
	res, err := p.fed.Boost.Undo(r.Context(), application.Boost{UserID: u.ID, As: q.Get("as"), Object: q.Get("object")})
	reply(w, r, p.log, err, http.StatusOK, boostedJSON{Object: res.ObjectURI, Activity: res.ActivityID, Created: res.Created, Queued: res.Queued})
}
