package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// FetchRequest is one GET of a document on another server (an actor, a
// key, a WebFinger answer), signed as a local actor when a key is given.
type FetchRequest struct {
	URL    string
	Accept string
	// KeyID and PrivateKeyPEM sign the request (draft-cavage,
	// "(request-target) host date"); empty: unsigned.
	KeyID         string
	PrivateKeyPEM string
	// CheckHost, if set, is asked before each request, the first one's
	// and every redirect's, with the host[:port] it goes to: an error
	// refuses the fetch with that error (the federation policy: nothing
	// is fetched from a suspended domain, SPEC §11).
	CheckHost func(host string) error
}

// Fetched is a document another server answered with.
type Fetched struct {
	Body []byte
	// URL is the URL that finally answered, after redirects: the only
	// origin the document can speak for (SPEC §10).
	URL string
	// ContentType is the answer's media type, lower-cased, with its
	// parameters (a profile) as sent.
	ContentType string
}

// Fetcher GETs documents from other servers, following at most 3
// redirects, each through the address guard. It returns the answer
// (its body bounded in size), or an error wrapping domain.ErrNotFound
// (404, 410), domain.ErrForbidden (refused by the remote, or an address we
// refuse), domain.ErrInvalidInput (a document over the size limit) or
// domain.ErrUnavailable (anything else). The delivery adapter implements it
// over the same guarded transport as deliveries. It judges nothing of the
// document: the dereferencer does.
type Fetcher interface {
	Fetch(ctx context.Context, r FetchRequest) (Fetched, error)
}

// Media types of ActivityPub documents.
const (
	ActivityJSON = "application/activity+json"
	LDJSON       = `application/ld+json; profile="https://www.w3.org/ns/activitystreams"`
	// acceptActor is what Herald asks remote servers for.
	acceptActor = ActivityJSON + ", " + LDJSON
	acceptJRD   = "application/jrd+json, application/json"
)

// Federation gathers the ActivityPub use cases: what the inboxes do with
// activities, following remote actors, and the reads behind actor
// documents, WebFinger and collections. It is Application's Federation,
// built by New.
type Federation struct {
	Inbox        InboxHandler
	FollowRemote FollowRemoteHandler
	// AnswerFollow accepts or rejects a follow waiting for approval.
	AnswerFollow AnswerFollowRequestHandler
	Followers    ListFollowersHandler
	Collections  CollectionsHandler
	Actors       LocalActorsHandler
	Boost        BoostHandler
	Favourite    FavouriteHandler
	OwnPosts     OwnPostsHandler
	Direct       DirectThreadHandler
	Mentions     MentionsHandler
	Report       ReportRemoteHandler
	// SetLocked and RotateKey change a persona's or group's settings
	// (manuallyApprovesFollowers, its key pair) and tell its followers.
	SetLocked  SetLockedHandler
	RotateKey  RotateKeyHandler
	Resolver   *ActorResolver
	moderation *Moderation

	// UpdateProfile changes a persona's display name and bio.
	UpdateProfile UpdateProfileHandler

	// A persona's blocks, mutes, unfollows and removals of followers
	// (SPEC §11 "Personas").
	Block          BlockActorHandler
	Unblock        UnblockActorHandler
	Blocks         ListBlocksHandler
	Mute           MuteActorHandler
	Unfollow       UnfollowHandler
	RemoveFollower RemoveFollowerHandler

	// Vote makes a persona vote in a poll; Polls tells the followers of
	// our polls of their counts and their close (SPEC §12 "Polls").
	Vote  VoteHandler
	Polls PollsHandler

	// Relationships and Search serve the Mastodon client API's accounts
	// graph and search (issue 34).
	Relationships RelationshipsHandler
	Search        SearchHandler
}

// fedCore is what the federation use cases share.
type fedCore struct {
	deps Deps
	// pub reuses the publishing fan-out (followers paged, inboxes
	// distinct, jobs enqueued in batches) for Accepts, Follows and
	// Announces.
	pub PublishHandler
	// resolver finds remote actors (from the cache, else fetched): the
	// one every federation use case that names one uses.
	resolver *ActorResolver
}

// newFederation builds the ActivityPub use cases over deps (New's,
// defaulted and wrapped already).
func newFederation(deps Deps, enq EnqueueHandler) Federation {
	core := &fedCore{deps: deps, pub: newPublishHandler(deps, deps.URLs, enq)}
	actors := LocalActorsHandler{core: core}
	resolver := &ActorResolver{core: core, deref: Dereferencer{core: core}, failing: newFailingHosts(deps.Clock)}
	core.resolver, core.pub.Resolver = resolver, resolver
	return Federation{
		Inbox:        InboxHandler{core: core},
		FollowRemote: FollowRemoteHandler{core: core},
		AnswerFollow: AnswerFollowRequestHandler{core: core},
		Followers:    ListFollowersHandler{core: core},
		Collections:  CollectionsHandler{core: core},
		Actors:       actors,
		Boost:        BoostHandler{core: core},
		Favourite:    FavouriteHandler{core: core},
		OwnPosts:     OwnPostsHandler{core: core},
		Direct:       DirectThreadHandler{core: core},
		Mentions:     MentionsHandler{core: core},
		Report:       ReportRemoteHandler{core: core},
		SetLocked:    SetLockedHandler{core: core},
		RotateKey:    RotateKeyHandler{core: core},
		Resolver:     resolver,
		moderation:   deps.Moderation,

		UpdateProfile: UpdateProfileHandler{core: core},

		Block:          BlockActorHandler{core: core},
		Unblock:        UnblockActorHandler{core: core},
		Blocks:         ListBlocksHandler{core: core},
		Mute:           MuteActorHandler{core: core},
		Unfollow:       UnfollowHandler{core: core},
		RemoveFollower: RemoveFollowerHandler{core: core},

		Vote:  VoteHandler{core: core},
		Polls: PollsHandler{core: core},

		Relationships: RelationshipsHandler{core: core},
		Search:        SearchHandler{core: core},
	}
}

// Admit is the gate every inbound request passes first (SPEC §11, as
// GoToSocial's Blocked): the hosts that speak in it (its signature's key
// id, its activity's actor) must not be refused by the federation policy.
// It runs before any signature work, so a suspended domain costs no key
// fetch. The error wraps ErrRefusedByPolicy (403), or domain.ErrUnavailable
// (503) when the policy cannot be read.
func (f *Federation) Admit(ctx context.Context, hosts ...string) error {
	for _, h := range hosts {
		if h == "" {
			continue
		}
		if err := f.moderation.Refuse(ctx, h, RefusedInbox); err != nil {
			return err
		}
	}
	return nil
}

// LocalActor is a local actor as the ActivityPub surface shows it.
type LocalActor struct {
	Kind         domain.NameKind // persona, group or instance
	ID           string          // avatar or group id: the sender of its deliveries
	Name         string
	DisplayName  string
	URI          string
	PublicKeyPEM string
	OwnerID      string // the RootUser of a persona or group; empty for the instance actor
	// Locked: its follows wait for the owner's approval
	// (manuallyApprovesFollowers).
	Locked bool
	// Summary is a persona's bio as sanitized HTML (bioHTML); empty
	// when it has none.
	Summary string
}

// KeyID is the actor's public key id.
func (a LocalActor) KeyID(u URLs) string { return u.Key(a.URI) }

// LocalActorsHandler finds local actors by kind and name, by URI, or by
// name alone (WebFinger).
type LocalActorsHandler struct{ core *fedCore }

// ByName returns the local actor of that kind; domain.ErrNotFound if there
// is none (also for a name that is not a valid name).
func (h LocalActorsHandler) ByName(ctx context.Context, kind domain.NameKind, name string) (LocalActor, error) {
	d := h.core.deps
	n, err := domain.NormalizeName(name)
	if err != nil {
		return LocalActor{}, fmt.Errorf("%w: no %s %q", domain.ErrNotFound, kind, clip(name))
	}
	switch kind {
	case domain.NameKindPersona, domain.NameKindInstance:
		a, err := d.Actors.AvatarByName(ctx, n)
		if notFound(err) && kind == domain.NameKindPersona {
			if g := h.gone(ctx, kind, n); g != nil {
				return LocalActor{}, g
			}
		}
		if err != nil {
			return LocalActor{}, err
		}
		// The instance actor is an Avatar without owner: it is /actor,
		// never /users/{name}, and a persona is never /actor.
		if (kind == domain.NameKindInstance) != (a.RootUserID == "") {
			return LocalActor{}, fmt.Errorf("%w: no %s %q", domain.ErrNotFound, kind, n)
		}
		uri := d.URLs.Persona(a.Name)
		if kind == domain.NameKindInstance {
			uri = d.URLs.InstanceActor()
		}
		return LocalActor{Kind: kind, ID: a.ID, Name: a.Name, DisplayName: a.DisplayName, URI: uri,
			PublicKeyPEM: a.Keys.PublicPEM, OwnerID: a.RootUserID, Locked: a.Locked, Summary: bioHTML(d.HTML, a.Note)}, nil
	case domain.NameKindGroup:
		g, err := d.Actors.GroupByName(ctx, n)
		if err != nil {
			return LocalActor{}, err
		}
		return LocalActor{Kind: kind, ID: g.ID, Name: g.Name, DisplayName: g.DisplayName, URI: d.URLs.Group(g.Name),
			PublicKeyPEM: g.Keys.PublicPEM, OwnerID: g.OwnerID, Locked: g.Locked}, nil
	}
	return LocalActor{}, fmt.Errorf("%w: no actor of kind %q", domain.ErrNotFound, kind)
}

// Instance is the instance actor.
func (h LocalActorsHandler) Instance(ctx context.Context) (LocalActor, error) {
	return h.ByName(ctx, domain.NameKindInstance, h.core.deps.InstanceActor)
}

// ByAccount finds the actor a WebFinger name stands for, whatever its
// kind (one username space holds personas, groups and the instance actor).
func (h LocalActorsHandler) ByAccount(ctx context.Context, name string) (LocalActor, error) {
	n, err := domain.NormalizeName(name)
	if err != nil {
		return LocalActor{}, fmt.Errorf("%w: no account %q", domain.ErrNotFound, clip(name))
	}
	rn, err := h.core.deps.Names.Get(ctx, n)
	if err != nil {
		return LocalActor{}, err
	}
	if rn.Kind == domain.NameKindSystem {
		return LocalActor{}, fmt.Errorf("%w: %q is a reserved name", domain.ErrNotFound, n)
	}
	if rn.Deleted() {
		return LocalActor{}, h.goneOf(rn)
	}
	return h.ByName(ctx, rn.Kind, n)
}

// ByURI finds a local actor by its actor URI.
func (h LocalActorsHandler) ByURI(ctx context.Context, uri string) (LocalActor, error) {
	kind, name, ok := h.core.parseLocal(uri)
	if !ok {
		return LocalActor{}, fmt.Errorf("%w: %q is not a local actor", domain.ErrNotFound, clip(uri))
	}
	if kind == domain.NameKindInstance {
		return h.Instance(ctx)
	}
	return h.ByName(ctx, kind, name)
}

// byName is our actor a client names by URI or as user@host.
func (h LocalActorsHandler) byName(ctx context.Context, n actorName) (LocalActor, error) {
	if n.uri != "" {
		return h.ByURI(ctx, n.uri)
	}
	return h.ByAccount(ctx, n.user)
}

// IsLocal reports whether uri is under this instance's origin.
func (h LocalActorsHandler) IsLocal(uri string) bool { return h.core.local(uri) }

func (c *fedCore) local(uri string) bool {
	return strings.HasPrefix(uri, c.deps.URLs.Base()+"/")
}

// parseLocal splits a local actor URI into kind and name.
func (c *fedCore) parseLocal(uri string) (domain.NameKind, string, bool) {
	u := c.deps.URLs
	if uri == u.InstanceActor() {
		return domain.NameKindInstance, c.deps.InstanceActor, true
	}
	for _, p := range []struct {
		prefix string
		kind   domain.NameKind
	}{{u.Base() + "/users/", domain.NameKindPersona}, {u.Base() + "/groups/", domain.NameKindGroup}} {
		if name, ok := strings.CutPrefix(uri, p.prefix); ok && name != "" && !strings.ContainsAny(name, "/?#") {
			return p.kind, name, true
		}
	}
	return "", "", false
}

// localActivityActor returns the local actor an activity id of ours
// belongs to (ids are URLs.Activity(actor, id)).
func (c *fedCore) localActivityActor(activityID string) (string, bool) {
	return c.localOwner(activityID, "/activities/")
}

// localOwner returns the local actor a URI of ours stands under: the
// actor's URI, then segment ("/activities/", "/statuses/"), then an id.
func (c *fedCore) localOwner(uri, segment string) (string, bool) {
	actor, _, ok := strings.Cut(uri, segment)
	if !ok || !c.local(uri) {
		return "", false
	}
	_, _, isActor := c.parseLocal(actor)
	return actor, isActor
}

// instanceSigner is the key the instance actor signs fetches with.
func (c *fedCore) instanceSigner(ctx context.Context) (keyID, pemText string, err error) {
	name, err := domain.NormalizeName(c.deps.InstanceActor)
	if err != nil {
		return "", "", fmt.Errorf("instance actor name: %w", err)
	}
	a, err := c.deps.Actors.AvatarByName(ctx, name)
	if err != nil {
		return "", "", fmt.Errorf("instance actor: %w", err)
	}
	return c.deps.URLs.Key(c.deps.URLs.InstanceActor()), a.Keys.PrivatePEM, nil
}

// send enqueues one activity to the given inboxes, signed by a local
// actor.
func (c *fedCore) send(ctx context.Context, from LocalActor, act Activity, inboxes []string) (EnqueueResult, error) {
	payload, err := act.Marshal()
	if err != nil {
		return EnqueueResult{}, err
	}
	return c.pub.fanOutTo(ctx, act.ID, payload, from.ID, from.KeyID(c.deps.URLs), distinct(inboxes))
}

// broadcast sends act to the inboxes given (the addressed actors: a few)
// and then to every accepted follower of from, streamed a page at a time
// by the fan-out, which records its progress so that a crash mid-way
// resumes where it stopped; an inbox in both gets one job.
func (c *fedCore) broadcast(ctx context.Context, from LocalActor, act Activity, inboxes []string) (EnqueueResult, error) {
	payload, err := act.Marshal()
	if err != nil {
		return EnqueueResult{}, err
	}
	inboxes = distinct(inboxes)
	keyID := from.KeyID(c.deps.URLs)
	res, err := c.pub.fanOutTo(ctx, act.ID, payload, from.ID, keyID, inboxes)
	if err != nil {
		return res, err
	}
	fr, err := c.pub.fanOut.Start(ctx, FanOutOf{ActivityID: act.ID, ActorURI: from.URI, SenderID: from.ID, KeyID: keyID,
		Payload: payload, Skip: inboxes})
	res.Queued += fr.Queued
	res.AlreadyQueued += fr.AlreadyQueued
	return res, err
}

// ignore is the result of an activity that is accepted and dropped.
func (c *fedCore) ignore(ctx context.Context, act Incoming, why string) InboxResult {
	c.deps.Log.DebugContext(ctx, "activity ignored", "type", clip(act.Type), "activity", clip(act.ID), "actor", act.Actor, "reason", why)
	return InboxResult{Ignored: true, Reason: why}
}

func notFound(err error) bool { return errors.Is(err, domain.ErrNotFound) }

// deleted returns an error wrapping domain.ErrNotFound when uri was
// deleted by `by`, nil when it was not, and a cacheError when the store
// cannot say. A tombstone stands only for the actor who left it (as
// Mastodon's delete-upon-arrival is kept per account): the author's
// tombstone of its note refuses the author's later Create of it, and an
// actor's own (URI and ActorURI both the actor, or both its key id, as
// Delete{Person} leaves them) refuses that actor and its key. So an actor
// deleting, ahead of time, URIs of its host that are not its own (another
// account's next note, or its key) changes nothing for their owner.
func (c *fedCore) deleted(ctx context.Context, uri, by string) error {
	t, err := c.deps.Tombstones.Tombstoned(ctx, uri)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return cacheError{fmt.Errorf("tombstone of %s: %w", clip(uri), err)}
	}
	if t.ActorURI != by {
		return nil
	}
	return fmt.Errorf("%w: %s was deleted", domain.ErrNotFound, clip(uri))
}

// Count is the number of local actors of one kind (NodeInfo's users are
// the personas), the deleted ones left out.
func (h LocalActorsHandler) Count(ctx context.Context, kind domain.NameKind) (int, error) {
	names, err := h.core.deps.Names.List(ctx, kind)
	n := 0
	for _, rn := range names {
		if !rn.Deleted() { // a deleted persona's name stays, its user does not
			n++
		}
	}
	return n, err
}
