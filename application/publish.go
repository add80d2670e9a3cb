package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Publish asks to post a note as one of the account's personas.
type Publish struct {
	UserID     string
	As         string // persona name; "" for the account's only persona
	Content    string
	Visibility domain.Visibility
	To         []string // direct recipients (actor URIs), or extra addressees
	// InReplyTo is the object URI of the note it answers, if any. When we
	// hold that note and its author is remote, the author is addressed
	// (cc), mentioned and delivered to, so the reply reaches its thread.
	InReplyTo string
	// What the post carries beside its text (SPEC §12): a content warning,
	// the sensitive flag, the text's language (BCP 47), media hosted by
	// the application in front of Herald (URLs, with alt text), and a
	// poll. Hashtags come from the text (#tag).
	Summary   string
	Sensitive bool
	Language  string
	Media     []domain.Attachment
	Poll      *NewPoll
}

// NewPoll is the poll of a post being published.
type NewPoll struct {
	Options  []string
	Multiple bool
	// Duration is how long it takes votes: domain.MinPollDuration to
	// domain.MaxPollDuration.
	Duration time.Duration
}

// Published says what was posted and how many deliveries were queued.
type Published struct {
	ID         string // the post's id: EditPost and DeletePost take it
	ObjectURI  string
	ActivityID string
	Inboxes    int // distinct inboxes the activity goes to
	EnqueueResult
}

// Resolver finds a remote actor by URI, fetching it when it is not cached
// (the ActivityPub adapter's job); CacheResolver only reads the cache.
type Resolver interface {
	Resolve(ctx context.Context, actorURI string) (domain.ForeignAvatar, error)
}

// CacheResolver resolves actors from the ForeignActorStore only.
type CacheResolver struct{ Foreign ports.ForeignActorStore }

// Resolve implements Resolver.
func (r CacheResolver) Resolve(ctx context.Context, uri string) (domain.ForeignAvatar, error) {
	return r.Foreign.ByActorURI(ctx, uri)
}

// followerPage is how many followers are read per store call during
// fan-out.
const followerPage = 1000

// PublishHandler stores a post and fans its Create out to every inbox.
type PublishHandler struct {
	deps     Deps
	urls     URLs
	enqueue  EnqueueHandler
	fanOut   FanOutHandler
	Resolver Resolver // nil: the cache only
}

func newPublishHandler(deps Deps, urls URLs, enq EnqueueHandler) PublishHandler {
	h := PublishHandler{deps: deps, urls: urls, enqueue: enq}
	h.fanOut = FanOutHandler{deps: deps, enqueue: enq, local: h.local}
	return h
}

// Handle checks that the persona is the account's, stores the post, and
// enqueues one delivery per distinct inbox (shared inboxes preferred), in
// batches. cmd.Content is plain text (at most domain.MaxPostLength bytes):
// the post keeps, and sends, its HTML rendering (domain.RenderText), with
// @-mentions of the addressed actors linked.
func (h PublishHandler) Handle(ctx context.Context, cmd Publish) (Published, error) {
	d := h.deps
	as, err := personaOrOnly(ctx, d, cmd.UserID, cmd.As)
	if err != nil {
		return Published{}, err
	}
	cmd.As = as
	a, err := d.Actors.AvatarByName(ctx, strings.ToLower(strings.TrimSpace(cmd.As)))
	if errors.Is(err, domain.ErrNotFound) {
		return Published{}, fmt.Errorf("%w: no persona %q", domain.ErrInvalidInput, cmd.As)
	}
	if err != nil {
		return Published{}, err
	}
	if a.RootUserID == "" || a.RootUserID != cmd.UserID {
		return Published{}, fmt.Errorf("%w: persona %q is not yours", domain.ErrForbidden, cmd.As)
	}
	if cmd.Visibility == "" {
		cmd.Visibility = domain.VisibilityPublic
	}
	if !cmd.Visibility.Valid() {
		return Published{}, fmt.Errorf("%w: visibility %q is not public, followers or direct", domain.ErrInvalidInput, cmd.Visibility)
	}
	actor := h.urls.Persona(a.Name)
	id := d.IDs.NewID()
	now := d.Clock.Now()
	noteURI := h.urls.Note(actor, id)
	to, cc := addressing(cmd.Visibility, h.urls.Followers(actor), cmd.To)

	if cmd.InReplyTo != "" {
		if !httpURL(cmd.InReplyTo) {
			return Published{}, fmt.Errorf("%w: in_reply_to %q is not an http(s) URI", domain.ErrInvalidInput, clip(cmd.InReplyTo))
		}
		if cmd.Visibility == domain.VisibilityDirect {
			// A direct post keeps no reply link (DmPost has none): refuse
			// rather than send a link we would then forget.
			return Published{}, fmt.Errorf("%w: a direct post cannot be a reply yet", domain.ErrInvalidInput)
		}
	}
	var inboxes []string    // addressed recipients' inboxes
	var tags []Tag          // a Mention per remote actor addressed
	var groups []LocalActor // local groups addressed: they announce the post
	toFollowers := cmd.Visibility != domain.VisibilityDirect
	var content string // the post's text rendered to HTML, as stored and sent
	extras, err := h.extras(cmd, now)
	if err != nil {
		return Published{}, err
	}
	if !toFollowers {
		dm, err := domain.NewLocalDmNote(id, noteURI, actor, cmd.Content, cmd.To, now, extras)
		if err != nil {
			return Published{}, err
		}
		if inboxes, tags, err = h.recipientInboxes(ctx, actor, cmd.To); err != nil {
			return Published{}, err
		}
		content = domain.RenderPost(cmd.Content, h.mentionLinks(tags, cmd.To), h.urls.Tag)
		dm.Content, dm.Local = content, true
		if _, err := d.Posts.CreateDm(ctx, dm); err != nil {
			return Published{}, err
		}
		conversations{store: d.Notifications, actors: d.Actors, urls: h.urls, log: d.Log}.add(ctx, dm)
	} else {
		p, err := domain.NewLocalNote(id, noteURI, actor, cmd.Content, cmd.Visibility, now, extras)
		if err != nil {
			return Published{}, err
		}
		if groups, err = h.addressedGroups(ctx, cmd.To); err != nil {
			return Published{}, err
		} else if len(groups) > 0 {
			p.GroupURI = groups[0].URI
		}
		p.InReplyTo = cmd.InReplyTo
		if author, ok := h.replyAuthor(ctx, cmd.InReplyTo); ok && !slices.Contains(cmd.To, author) {
			// Best effort: a reply whose author cannot be resolved now still
			// goes to the followers.
			if extra, mentions, err := h.recipientInboxes(ctx, actor, []string{author}); err == nil {
				tags = mentions
				inboxes = distinct(append(inboxes, extra...))
				cc = append(cc, author)
			} else {
				d.Log.WarnContext(ctx, "the author replied to is not addressed", "author", author, "err", err)
			}
		}
		if len(cmd.To) > 0 {
			extra, mentions, err := h.recipientInboxes(ctx, actor, cmd.To)
			if err != nil {
				return Published{}, err
			}
			tags = append(tags, mentions...)
			inboxes = distinct(append(inboxes, extra...))
			to = append(to, cmd.To...)
		}
		content = domain.RenderPost(cmd.Content, h.mentionLinks(tags, cmd.To), h.urls.Tag)
		p.Content, p.Local = content, true
		p.Mentions = mentioned(tags, cmd.To, groups)
		if _, err := d.Posts.CreatePost(ctx, p); err != nil {
			return Published{}, err
		}
	}

	touch(ctx, d, a.ID)

	note := Note{ID: noteURI, Type: "Note", AttributedTo: actor, Content: content, Published: asTime(now), To: to, CC: cc, InReplyTo: cmd.InReplyTo, Tag: tags}
	act := noteActivity(Activity{ID: h.urls.Activity(actor, id), Type: "Create", Actor: actor, Published: asTime(now), To: to, CC: cc},
		note.withExtras(extras, h.urls.Tag))
	payload, err := act.Marshal()
	if err != nil {
		return Published{}, err
	}
	// The addressed recipients first (a few), then the followers, streamed.
	res, err := h.fanOutTo(ctx, act.ID, payload, a.ID, h.urls.Key(actor), inboxes)
	if err != nil {
		return Published{}, err
	}
	n := len(inboxes)
	if toFollowers {
		fr, err := h.fanOut.Start(ctx, FanOutOf{ActivityID: act.ID, ActorURI: actor, SenderID: a.ID, KeyID: h.urls.Key(actor),
			Payload: payload, Skip: inboxes})
		res.Queued += fr.Queued
		res.AlreadyQueued += fr.AlreadyQueued
		n += fr.Inboxes
		if err != nil {
			return Published{}, err
		}
	}
	if err := h.announceInGroups(ctx, groups, act, cmd.Visibility == domain.VisibilityPublic); err != nil {
		return Published{}, err
	}
	d.Log.Info("post published", "object", noteURI, "inboxes", n, "queued", res.Queued)
	return Published{ID: id, ObjectURI: noteURI, ActivityID: act.ID, Inboxes: n, EnqueueResult: res}, nil
}

// extras checks what the post carries beside its text (SPEC §12) and
// returns it as kept: its hashtags from the text, a poll open for its
// duration from now.
func (h PublishHandler) extras(cmd Publish, now time.Time) (domain.Extras, error) {
	e := domain.Extras{Summary: cmd.Summary, Sensitive: cmd.Sensitive, Language: cmd.Language, Attachments: cmd.Media,
		Hashtags: domain.Hashtags(cmd.Content)}
	if p := cmd.Poll; p != nil {
		if p.Duration < domain.MinPollDuration || p.Duration > domain.MaxPollDuration {
			return domain.Extras{}, fmt.Errorf("%w: a poll runs from %s to %s, not %s", domain.ErrInvalidInput,
				domain.MinPollDuration, domain.MaxPollDuration, p.Duration)
		}
		e.Poll = &domain.Poll{Multiple: p.Multiple, EndTime: now.Add(p.Duration).UTC()}
		for _, o := range p.Options {
			e.Poll.Options = append(e.Poll.Options, domain.PollOption{Name: o})
		}
	}
	return domain.CheckLocalExtras(e)
}

// fanOutTo enqueues one job per inbox for the activity (a short list: the
// addressed recipients).
func (h PublishHandler) fanOutTo(ctx context.Context, activityID string, payload []byte, senderID, keyID string, inboxes []string) (EnqueueResult, error) {
	now := h.deps.Clock.Now()
	jobs := make([]domain.Job, 0, len(inboxes))
	for _, inbox := range inboxes {
		j, err := domain.NewJob(h.deps.IDs.NewID(), activityID, inbox, senderID, keyID, payload, now)
		if err != nil {
			h.deps.Log.Warn("skipping an inbox that is not a valid URL", "inbox", inbox, "err", err)
			continue
		}
		jobs = append(jobs, j)
	}
	return h.enqueue.Handle(ctx, jobs)
}

// recipientInboxes resolves the actors from addresses to their inboxes,
// and gives the Mention of each remote one. An actor blocked either way
// (SPEC §11 "Personas") keeps its Mention but gets no delivery: nothing
// of from reaches its inbox.
func (h PublishHandler) recipientInboxes(ctx context.Context, from string, uris []string) ([]string, []Tag, error) {
	r := h.Resolver
	if r == nil {
		r = CacheResolver{Foreign: h.deps.Foreign}
	}
	var inboxes []string
	var tags []Tag
	for _, u := range uris {
		if h.local(u) {
			continue
		}
		fa, err := r.Resolve(ctx, u)
		if errors.Is(err, domain.ErrNotFound) {
			return nil, nil, fmt.Errorf("%w: unknown recipient %q", domain.ErrInvalidInput, u)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("recipient %q: %w", u, err)
		}
		if blocked, err := blockedBetween(ctx, h.deps.Blocks, from, fa.ActorURI); err != nil {
			return nil, nil, fmt.Errorf("recipient %q: %w", u, err)
		} else if !blocked {
			inboxes = append(inboxes, fa.DeliveryInbox())
		}
		if !slices.ContainsFunc(tags, func(t Tag) bool { return t.Href == fa.ActorURI }) {
			tags = append(tags, mentionOf(fa))
		}
	}
	return distinct(inboxes), tags, nil
}

// mentioned are the actors a post of ours mentions, as its store keeps
// them: the remote actors it tags and the local ones it addresses (not
// groups, which are addressed to be announced in, nor collections).
func mentioned(tags []Tag, to []string, groups []LocalActor) []string {
	var out []string
	for _, t := range tags {
		out = append(out, t.Href)
	}
	for _, a := range to {
		if !isCollection(a) && !slices.ContainsFunc(groups, func(g LocalActor) bool { return g.URI == a }) {
			out = append(out, a)
		}
	}
	return domain.NormalizeMentions(out)
}

// mentionLinks are the actors a post's text may name with @ and get a
// link: the remote actors it tags (@user@host, as their Mention is named)
// and the local personas and groups it addresses (@name, or
// @name@our-domain).
func (h PublishHandler) mentionLinks(tags []Tag, to []string) []domain.MentionLink {
	var out []domain.MentionLink
	for _, t := range tags {
		if user, host, ok := strings.Cut(strings.TrimPrefix(t.Name, "@"), "@"); ok && user != "" && host != "" {
			out = append(out, domain.MentionLink{User: user, Host: host, Href: t.Href})
		}
	}
	for _, a := range to {
		for _, prefix := range []string{h.urls.Persona(""), h.urls.Group("")} {
			if name, ok := strings.CutPrefix(a, prefix); ok && name != "" && !strings.ContainsAny(name, "/?#") {
				out = append(out, domain.MentionLink{User: name, Host: h.urls.Domain, Href: a, Local: true})
			}
		}
	}
	return out
}

func (h PublishHandler) local(uri string) bool {
	return strings.HasPrefix(uri, h.urls.Base()+"/")
}

func distinct(s []string) []string {
	seen := make(map[string]struct{}, len(s))
	out := s[:0]
	for _, v := range s {
		if _, ok := seen[v]; !ok && v != "" {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	return out
}
