package application

import (
	"log/slog"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// ClientAPIDeps are the ports the Mastodon-compatible client API needs
// beside the federation's (issue 34).
type ClientAPIDeps struct {
	OAuth ports.OAuthStore
	// AccountIDs gives remote actors account ids; Foreign is the cache
	// of remote actors their entities are read from.
	AccountIDs ports.AccountIDStore
	Foreign    ports.ForeignActorStore
	Users      ports.UserStore
	Actors     ports.ActorStore
	Followers  ports.FollowerStore
	// Posts is read through HTML and Moderation, as the federation's is
	// (SPEC §10, §11).
	Posts      ports.PostStore
	HTML       ports.HTMLSanitizer
	Moderation *Moderation
	Passwords  ports.PasswordHasher
	Clock      ports.Clock
	IDs        ports.IDs
	Log        *slog.Logger
	URLs       URLs
	// Registrations is what the instance entity says of sign-ups.
	Registrations domain.RegistrationMode

	// Polls is the poll side of Posts (taken from it when nil); Blocks
	// the personas' blocks, which every read honours (SPEC §11).
	Polls  ports.PollStore
	Blocks ports.BlockStore

	// Notifications are what the personas were told of (recorded by the
	// federation's inbox).
	Notifications ports.NotificationStore
}

// ClientAPI gathers the use cases of the Mastodon-compatible client API:
// OAuth 2 as Mastodon has it (one token, one persona) and, on top of the
// federation's use cases, what its endpoints read and do. It lives beside
// Application and Federation; bootstrap builds it.
type ClientAPI struct {
	RegisterApp  RegisterAppHandler
	Authorize    AuthorizeHandler
	IssueToken   IssueTokenHandler
	RevokeToken  RevokeTokenHandler
	Authenticate AuthenticateTokenHandler
	Accounts     AccountsHandler
	Statuses     StatusesHandler
	URLs         URLs

	Notifications NotificationsHandler
	Conversations ConversationsHandler
	// Clock paces what polls the stores (the streaming API).
	Clock ports.Clock
}

// NewClientAPI builds the client API's use cases over deps.
func NewClientAPI(deps ClientAPIDeps) *ClientAPI {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	deps.Log = deps.Log.With("component", "clientapi")
	if deps.Polls == nil {
		deps.Polls, _ = deps.Posts.(ports.PollStore)
	}
	if deps.Posts != nil {
		deps.Posts = moderatePosts(sanitizePosts(deps.Posts, deps.HTML), deps.Moderation)
	}
	return &ClientAPI{
		RegisterApp:  RegisterAppHandler{deps: deps},
		Authorize:    AuthorizeHandler{deps: deps},
		IssueToken:   IssueTokenHandler{deps: deps},
		RevokeToken:  RevokeTokenHandler{deps: deps},
		Authenticate: AuthenticateTokenHandler{deps: deps},
		Accounts:     AccountsHandler{deps: deps},
		Statuses:     StatusesHandler{deps: deps},
		Clock:        deps.Clock,
		URLs:         deps.URLs,

		Notifications: NotificationsHandler{deps: deps},
		Conversations: ConversationsHandler{deps: deps},
	}
}
