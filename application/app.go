package application

import (
	"log/slog"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Deps are the ports the use cases need. bootstrap fills it from the
// configured adapters.
type Deps struct {
	Users     ports.UserStore
	Tokens    ports.TokenStore
	Actors    ports.ActorStore
	Names     ports.NameRegistry
	Followers ports.FollowerStore
	Foreign   ports.ForeignActorStore
	Posts     ports.PostStore     // read and written through HTML, which New wraps it in
	HTML      ports.HTMLSanitizer // sanitizes every post's content written or read (SPEC §10)
	// Polls keeps the votes and counts of polls; nil takes the PostStore's
	// own (every store implements both on the same data).
	Polls ports.PollStore
	// Moderation hides what the federation policy refuses from every read
	// of posts (SPEC §11); nil hides nothing.
	Moderation *Moderation
	// Blocks keeps the personas' blocks and mutes (SPEC §11 "Personas"):
	// no post is delivered to an actor blocked either way; nil blocks
	// no one.
	Blocks ports.BlockStore
	Jobs   ports.JobStore
	// FanOuts keeps the durable fan-out records; nil streams fan-outs
	// without them (nothing resumes one a crash interrupted).
	FanOuts ports.FanOutStore
	// JobAdmin counts a deleted persona's Delete deliveries still to run:
	// its key goes when none is left. nil keeps the keys of deleted
	// personas (their posts and follows still go).
	JobAdmin  ports.JobAdmin
	Passwords ports.PasswordHasher
	Keys      ports.KeyGenerator
	Clock     ports.Clock
	IDs       ports.IDs
	Log       *slog.Logger
	// Registrations says who may sign up (SPEC §11); empty is open.
	Registrations domain.RegistrationMode
	// Notifications are the personas' (the client API's); a deleted
	// persona's go with it. nil: none are kept.
	Notifications ports.NotificationStore
}

// Waker is told when jobs were enqueued; the delivery engine is one.
type Waker interface{ Wake() }

// Application gathers the use cases the inbound adapters call.
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
	// it (bootstrap runs it next to the engine, in every process).
	DeletePersona    DeletePersonaHandler
	PersonaDeletions PersonaDeletionsHandler
	// Polls closes the polls written here and tells their followers of
	// their counts (bootstrap runs it next to the engine, in every
	// process); bootstrap sets it from the Federation, which sends them.
	Polls PollsHandler
	URLs  URLs
}

// New builds every use case over deps.
func New(deps Deps, policy domain.NamePolicy, instanceActorName string, urls URLs, waker Waker) *Application {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Polls == nil {
		deps.Polls, _ = deps.Posts.(ports.PollStore)
	}
	deps.Posts = moderatePosts(sanitizePosts(deps.Posts, deps.HTML), deps.Moderation)
	id := identity{deps: deps, policy: policy}
	enq := EnqueueHandler{jobs: deps.Jobs, waker: waker}
	pub := newPublishHandler(deps, urls, enq)
	deletions := PersonaDeletionsHandler{deps: deps, urls: urls, fanOut: pub.fanOut, enqueue: enq, local: pub.local, wake: make(chan struct{}, 1)}
	return &Application{
		SignUp:        SignUpHandler{identity: id},
		Login:         LoginHandler{deps: deps},
		Authenticate:  AuthenticateHandler{deps: deps},
		CreatePersona: CreatePersonaHandler{identity: id},
		CreateGroup:   CreateGroupHandler{identity: id},
		InstanceActor: InstanceActorHandler{identity: id, name: instanceActorName},
		Publish:       pub,
		FanOuts:       pub.fanOut,
		Enqueue:       enq,
		URLs:          urls,

		DeletePersona:    NewDeletePersonaHandler(deps.Actors, deps.Names, urls, deps.Clock, deps.Log, deletions),
		PersonaDeletions: deletions,
	}
}
