package mastodon

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// statusJSON is Mastodon's Status entity. Its id is the post's own id (a
// UUIDv7 given when the post was written or received here), so ids sort
// by when Herald came to hold the post, local or remote alike.
type statusJSON struct {
	ID                 string          `json:"id"`
	URI                string          `json:"uri"`
	URL                string          `json:"url"`
	CreatedAt          string          `json:"created_at"`
	EditedAt           *string         `json:"edited_at"`
	Account            accountJSON     `json:"account"`
	Content            string          `json:"content"`
	Visibility         string          `json:"visibility"`
	Sensitive          bool            `json:"sensitive"`
	SpoilerText        string          `json:"spoiler_text"`
	MediaAttachments   []mediaJSON     `json:"media_attachments"`
	Mentions           []mentionJSON   `json:"mentions"`
	Tags               []tagJSON       `json:"tags"`
	Emojis             []emojiJSON     `json:"emojis"`
	ReblogsCount       int             `json:"reblogs_count"`
	FavouritesCount    int             `json:"favourites_count"`
	RepliesCount       int             `json:"replies_count"`
	InReplyToID        *string         `json:"in_reply_to_id"`
	InReplyToAccountID *string         `json:"in_reply_to_account_id"`
	Reblog             *statusJSON     `json:"reblog"`
	Poll               *pollJSON       `json:"poll"`
	Card               any             `json:"card"`
	Language           *string         `json:"language"`
	Text               *string         `json:"text,omitempty"`
	Application        *applicationRef `json:"application,omitempty"`
	Favourited         bool            `json:"favourited"`
	Reblogged          bool            `json:"reblogged"`
	Muted              bool            `json:"muted"`
	Bookmarked         bool            `json:"bookmarked"`
	Pinned             bool            `json:"pinned"`
}

type applicationRef struct {
	Name    string  `json:"name"`
	Website *string `json:"website"`
}

// mediaJSON is Mastodon's MediaAttachment, of media hosted where their
// server keeps them (Herald stores no files: SPEC §12).
type mediaJSON struct {
	ID          string     `json:"id"`
	Type        string     `json:"type"`
	URL         string     `json:"url"`
	PreviewURL  string     `json:"preview_url"`
	RemoteURL   *string    `json:"remote_url"`
	Meta        *mediaMeta `json:"meta"`
	Description *string    `json:"description"`
	Blurhash    *string    `json:"blurhash"`
}

type mediaMeta struct {
	Original *mediaSize `json:"original,omitempty"`
	Focus    *focusJSON `json:"focus,omitempty"`
}

type mediaSize struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Size   string  `json:"size"`
	Aspect float64 `json:"aspect"`
}

type focusJSON struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// tagJSON is Mastodon's Tag entity; Herald keeps no usage history, so
// its history is always empty.
type tagJSON struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	History []any  `json:"history"`
}

// emojiJSON is Mastodon's CustomEmoji.
type emojiJSON struct {
	Shortcode       string `json:"shortcode"`
	URL             string `json:"url"`
	StaticURL       string `json:"static_url"`
	VisibleInPicker bool   `json:"visible_in_picker"`
}

// pollJSON is Mastodon's Poll; its id is its status's.
type pollJSON struct {
	ID          string           `json:"id"`
	ExpiresAt   *string          `json:"expires_at"`
	Expired     bool             `json:"expired"`
	Multiple    bool             `json:"multiple"`
	VotesCount  int              `json:"votes_count"`
	VotersCount *int             `json:"voters_count"`
	Options     []pollOptionJSON `json:"options"`
	Emojis      []emojiJSON      `json:"emojis"`
	Voted       *bool            `json:"voted,omitempty"`
	OwnVotes    []int            `json:"own_votes,omitempty"`
}

type pollOptionJSON struct {
	Title      string `json:"title"`
	VotesCount *int   `json:"votes_count"`
}

// Herald's visibilities as Mastodon names them, both ways. Mastodon's
// "unlisted" has no Herald counterpart (a post is public, to followers,
// or direct) and is refused rather than made public.
var (
	toMastodonVisibility   = map[domain.Visibility]string{domain.VisibilityPublic: "public", domain.VisibilityFollowers: "private", domain.VisibilityDirect: "direct"}
	fromMastodonVisibility = map[string]domain.Visibility{"public": domain.VisibilityPublic, "private": domain.VisibilityFollowers, "direct": domain.VisibilityDirect}
)

// statusOf renders a post the viewer may see (the caller checked that:
// StatusesHandler.ByID, or a read scoped to the viewer), local or remote:
// its author's account entity, its text and what it carries, its counts,
// and what the viewer did to it (favourited, reblogged, its poll votes).
// A zero viewer (no token, or an application's) sees no own state.
func (m *Routes) statusOf(ctx context.Context, viewer application.Principal, p domain.Post) (statusJSON, error) {
	acct, err := m.accountOf(ctx, p.AuthorURI)
	if err != nil {
		return statusJSON{}, err
	}
	view, err := m.api.Statuses.View(ctx, viewer, p)
	if err != nil {
		return statusJSON{}, err
	}
	s := statusJSON{ID: p.ID, URI: p.ObjectURI, URL: p.ObjectURI, CreatedAt: mastodonTime(p.Published), Account: acct,
		Content: p.Content, Visibility: toMastodonVisibility[p.Visibility], Sensitive: p.Sensitive, SpoilerText: p.Summary,
		MediaAttachments: []mediaJSON{}, Mentions: []mentionJSON{}, Tags: []tagJSON{}, Emojis: emojisOf(p.Emojis),
		ReblogsCount: view.Announces, FavouritesCount: view.Likes, Favourited: view.Favourited, Reblogged: view.Reblogged}
	if p.URL != "" {
		s.URL = p.URL
	}
	if p.Language != "" {
		lang := p.Language
		s.Language = &lang
	}
	if !p.Updated.IsZero() {
		e := mastodonTime(p.Updated)
		s.EditedAt = &e
	}
	if view.Parent.ID != "" {
		parentAcct, err := m.accountID(ctx, view.Parent.AuthorURI)
		if err != nil {
			return statusJSON{}, err
		}
		rid := view.Parent.ID
		s.InReplyToID, s.InReplyToAccountID = &rid, &parentAcct
	}
	for i, a := range p.Attachments {
		s.MediaAttachments = append(s.MediaAttachments, mediaOf(fmt.Sprintf("%s-%d", p.ID, i+1), a))
	}
	for _, t := range p.Hashtags {
		s.Tags = append(s.Tags, tagJSON{Name: t, URL: m.app.URLs.Tag(t), History: []any{}})
	}
	for _, uri := range p.Mentions {
		mt, err := m.mention(ctx, uri)
		if err != nil {
			return statusJSON{}, err
		}
		s.Mentions = append(s.Mentions, mt)
	}
	if p.Poll != nil {
		pj := m.pollOf(p.ID, *p.Poll, viewer.HasUser(), view.OwnVotes)
		s.Poll = &pj
	}
	return s, nil
}

// accountOf is the account entity of a post's author: a local persona
// with its counts, or a remote actor by the account id Herald gives it
// (from the cache of remote actors, or its URI alone when not cached).
func (m *Routes) accountOf(ctx context.Context, actorURI string) (accountJSON, error) {
	cache, _ := ctx.Value(accountCacheKey{}).(map[string]accountJSON)
	if a, ok := cache[actorURI]; ok {
		return a, nil
	}
	a, err := m.readAccount(ctx, actorURI)
	if err == nil && cache != nil {
		cache[actorURI] = a
	}
	return a, err
}

// accountCacheKey keys a request's accounts already read (withAccounts).
type accountCacheKey struct{}

// withAccounts lets the statuses one answer renders (a timeline's, a
// thread's) read each author's account once: an account's counts cost a
// few store reads.
func withAccounts(ctx context.Context) context.Context {
	return context.WithValue(ctx, accountCacheKey{}, map[string]accountJSON{})
}

func (m *Routes) readAccount(ctx context.Context, actorURI string) (accountJSON, error) {
	a, local, err := m.api.Statuses.LocalAuthor(ctx, actorURI)
	if err != nil {
		return accountJSON{}, err
	}
	if local {
		return m.localAccount(ctx, a)
	}
	id, err := m.api.Accounts.RemoteID(ctx, actorURI)
	if err != nil {
		return accountJSON{}, err
	}
	r, err := m.api.Accounts.Remote(ctx, id)
	if err != nil {
		if !isNotFound(err) {
			return accountJSON{}, err
		}
		r = application.RemoteAccount{ID: id, Actor: domain.ForeignAvatar{ActorURI: actorURI}}
	}
	return remoteAccount(r), nil
}

// accountID is the account id of an actor, without reading its entity.
func (m *Routes) accountID(ctx context.Context, actorURI string) (string, error) {
	a, local, err := m.api.Statuses.LocalAuthor(ctx, actorURI)
	if err != nil {
		return "", err
	}
	if local {
		return a.ID, nil
	}
	return m.api.Accounts.RemoteID(ctx, actorURI)
}

// mediaTypes are Mastodon's attachment types of ActivityStreams' (a
// Document is "unknown": Mastodon shows it as a link).
var mediaTypes = map[domain.MediaKind]string{domain.MediaImage: "image", domain.MediaVideo: "video", domain.MediaAudio: "audio"}

func mediaOf(id string, a domain.Attachment) mediaJSON {
	typ := mediaTypes[a.Kind]
	if typ == "" {
		typ = "unknown"
	}
	if typ == "image" && a.MediaType == "image/gif" {
		typ = "gifv"
	}
	url := a.URL
	mj := mediaJSON{ID: id, Type: typ, URL: a.URL, PreviewURL: a.URL, RemoteURL: &url}
	if a.Name != "" {
		name := a.Name
		mj.Description = &name
	}
	if a.Blurhash != "" {
		bh := a.Blurhash
		mj.Blurhash = &bh
	}
	if a.Width > 0 && a.Height > 0 || a.Focal != nil {
		mj.Meta = &mediaMeta{}
		if a.Width > 0 && a.Height > 0 {
			mj.Meta.Original = &mediaSize{Width: a.Width, Height: a.Height, Size: fmt.Sprintf("%dx%d", a.Width, a.Height),
				Aspect: float64(a.Width) / float64(a.Height)}
		}
		if a.Focal != nil {
			mj.Meta.Focus = &focusJSON{X: a.Focal[0], Y: a.Focal[1]}
		}
	}
	return mj
}

func emojisOf(es []domain.Emoji) []emojiJSON {
	out := make([]emojiJSON, 0, len(es))
	for _, e := range es {
		out = append(out, emojiJSON{Shortcode: e.Shortcode, URL: e.IconURL, StaticURL: e.IconURL})
	}
	return out
}

// pollOf is a poll's entity: voted and own_votes only for a viewer with
// a persona (Mastodon leaves them out otherwise).
func (m *Routes) pollOf(id string, p domain.Poll, withViewer bool, ownVotes []string) pollJSON {
	now := m.api.Statuses.Now()
	pj := pollJSON{ID: id, Expired: !p.Open(now), Multiple: p.Multiple, Options: make([]pollOptionJSON, 0, len(p.Options)), Emojis: []emojiJSON{}}
	if !p.EndTime.IsZero() {
		e := mastodonTime(p.EndTime)
		pj.ExpiresAt = &e
	}
	for _, o := range p.Options {
		votes := o.Votes
		pj.Options = append(pj.Options, pollOptionJSON{Title: o.Name, VotesCount: &votes})
		pj.VotesCount += o.Votes
	}
	voters := p.Voters
	pj.VotersCount = &voters
	if withViewer {
		voted := len(ownVotes) > 0
		pj.Voted = &voted
		pj.OwnVotes = []int{}
		for _, name := range ownVotes {
			if i := p.Option(name); i >= 0 && !slices.Contains(pj.OwnVotes, i) {
				pj.OwnVotes = append(pj.OwnVotes, i)
			}
		}
	}
	return pj
}

// isNotFound reports whether err is domain.ErrNotFound.
func isNotFound(err error) bool { return errors.Is(err, domain.ErrNotFound) }
