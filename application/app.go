package application

import (
	"log/slog"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Deps is what the use cases need: the ports bootstrap fills from the
// configured adapters, and the instance's settings. One struct for every
// group of Application, so a port is given once and defaulted once.
type Deps struct {
	Users     ports.UserStore
	Tokens    ports.TokenStore
	Actors    ports.ActorStore
	Names     ports.NameRegistry
	Followers ports.FollowerStore
	// Foreign is the cache of remote actors (the client API reads their
	// entities from it); AccountIDs gives them the client API's account
	// ids.
	Foreign    ports.ForeignActorStore
	AccountIDs ports.AccountIDStore
	Posts      ports.PostStore     // read and written through HTML and Moderation, which New wraps it in
	HTML       ports.HTMLSanitizer // sanitizes every post's content written or read (SPEC §10)
	// Polls keeps the votes and counts of polls; nil takes the PostStore's
	// own (every store implements both on the same data).
	Polls      ports.PollStore
	Tombstones ports.TombstoneStore // deleted remote objects and actors (SPEC §10)
	// Moderation is the operator's federation policy (SPEC §11): it hides
	// what the policy refuses from every read of posts; nil federates
	// with everyone and hides nothing.
	Moderation *Moderation
	// Reports keeps the Flags other servers send (SPEC §11).
	Reports ports.ReportStore
	// Blocks keeps the blocks and mutes of actors, ours and theirs (SPEC
	// §11 "Personas"): no post is delivered to an actor blocked either
	// way; nil blocks no one.
	Blocks ports.BlockStore
	Jobs   ports.JobStore
	// FanOuts keeps the durable fan-out records; nil streams fan-outs
	// without them (nothing resumes one a crash interrupted).
	FanOuts ports.FanOutStore
	// JobAdmin counts a deleted persona's Delete deliveries still to run:
	// its key goes when none is left. nil keeps the keys of deleted
	// personas (their posts and follows still go).
	JobAdmin ports.JobAdmin
	// OAuth keeps the client API's applications, grants and tokens.
	OAuth ports.OAuthStore
	// Notifications are what the personas are told of (recorded by the
	// inboxes, read by the client API); a deleted persona's go with it.
	// nil: none are kept.
	Notifications ports.NotificationStore
	Passwords     ports.PasswordHasher
	// Keys makes the key pairs of new actors and of key rotations; nil
	// refuses them.
	Keys ports.KeyGenerator
	// Fetcher fetches remote documents (actors, keys, WebFinger). nil
	// fetches nothing: publishing resolves recipients from the cache
	// only, and no federation use case that fetches may be called.
	Fetcher Fetcher
	// Waker is told of each enqueue (the engine); nil: the workers poll.
	Waker Waker
	// KeyRotations is told of each rotation (the engine, which drops its
	// cached key); nil: nothing to tell.
	KeyRotations KeyRotations
	Clock        ports.Clock
	IDs          ports.IDs
	Log          *slog.Logger // nil: nothing is logged

	URLs URLs
	// NamePolicy says which names are never available; InstanceActor is
	// the instance actor's name (it signs fetches).
	NamePolicy    domain.NamePolicy
	InstanceActor string
	// Registrations says who may sign up (SPEC §11); empty is open.
	Registrations domain.RegistrationMode
}

// logAs is deps with its log tagged by component, so a group's lines
// say whose they are.
func (d Deps) logAs(component string) Deps {
	d.Log = d.Log.With("component", component)
	return d
}

// Waker is told when jobs were enqueued; the delivery engine is one.
type Waker interface{ Wake() }

// Application is every use case the inbound adapters call, built once by
// New. What every surface uses (accounts, personas, publishing, the
// passes that run next to the engine) sits at its top; the ActivityPub
// use cases and the Mastodon client API's are grouped in Federation and
// ClientAPI. Groups rather than one flat list of some fifty handlers: the
// session's Authenticate and the client API's would collide, a flat list
// hides which surface a handler serves, and an adapter that serves one
// surface keeps its group (the ActivityPub handler holds
// &app.Federation), so its call sites stay h.fed.Inbox as before.
type Application struct {
	SignUp        SignUpHandler
	Login         LoginHandler
	Authenticate  AuthenticateHandler
	CreatePersona CreatePersonaHandler
	CreateGroup   CreateGroupHandler
	InstanceActor InstanceActorHandler
	Publish       PublishHandler
	Enqueue       EnqueueHandler
	// FanOuts resumes the fan-outs a crash interrupted (bootstrap runs its
	// resumer next to the engine).
	FanOuts FanOutHandler
	// DeletePersona begins a persona's deletion; PersonaDeletions finishes
	// it (bootstrap runs it next to the engine, in every process, as it
	// runs the polls' pass, Federation.Polls).
	DeletePersona    DeletePersonaHandler
	PersonaDeletions PersonaDeletionsHandler
	URLs             URLs

	// Federation is what the inboxes do with activities, following
	// remote actors, and the reads behind actor documents, WebFinger and
	// collections.
	Federation Federation
	// ClientAPI is the Mastodon-compatible client API's: OAuth 2 and what
	// its endpoints read (issue 34).
	ClientAPI ClientAPI
}

// New builds every use case over deps.
func New(deps Deps) *Application {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Polls == nil {
		deps.Polls, _ = deps.Posts.(ports.PollStore)
	}
	deps.Posts = moderatePosts(sanitizePosts(deps.Posts, deps.HTML), deps.Moderation)
	id := identity{deps: deps, policy: deps.NamePolicy}
	enq := EnqueueHandler{jobs: deps.Jobs, waker: deps.Waker}
	fed := newFederation(deps.logAs("federation"), enq)
	pub := newPublishHandler(deps, deps.URLs, enq)
	if deps.Fetcher != nil {
		// Recipients not cached yet are fetched, as the federation
		// resolves actors.
		pub.Resolver = fed.Resolver
	}
	deletions := PersonaDeletionsHandler{deps: deps, urls: deps.URLs, fanOut: pub.fanOut, enqueue: enq, local: pub.local, wake: make(chan struct{}, 1)}
	return &Application{
		SignUp:        SignUpHandler{identity: id},
		Login:         LoginHandler{deps: deps},
		Authenticate:  AuthenticateHandler{deps: deps},
		CreatePersona: CreatePersonaHandler{identity: id},
		CreateGroup:   CreateGroupHandler{identity: id},
		InstanceActor: InstanceActorHandler{identity: id, name: deps.InstanceActor},
		Publish:       pub,
		FanOuts:       pub.fanOut,
		Enqueue:       enq,
		URLs:          deps.URLs,

		DeletePersona:    NewDeletePersonaHandler(deps.Actors, deps.Names, deps.URLs, deps.Clock, deps.Log, deletions),
		PersonaDeletions: deletions,

		Federation: fed,
		ClientAPI:  newClientAPI(deps.logAs("clientapi")),
	}
}
