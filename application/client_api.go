package application

import (
	"github.com/heraldfed/herald/ports"
)

// ClientAPI gathers the use cases of the Mastodon-compatible client API:
// OAuth 2 as Mastodon has it (one token, one persona) and, on top of the
// federation's use cases, what its endpoints read and do. It is
// Application's ClientAPI, built by New.
type ClientAPI struct {
	RegisterApp  RegisterAppHandler
	Authorize    AuthorizeHandler
	IssueToken   IssueTokenHandler
	RevokeToken  RevokeTokenHandler
	Authenticate AuthenticateTokenHandler
	Accounts     AccountsHandler
	Statuses     StatusesHandler

	Notifications NotificationsHandler
	Conversations ConversationsHandler
	// Clock paces what polls the stores (the streaming API).
	Clock ports.Clock
}

// newClientAPI builds the client API's use cases over deps (New's,
// defaulted and wrapped already).
func newClientAPI(deps Deps) ClientAPI {
	return ClientAPI{
		RegisterApp:  RegisterAppHandler{deps: deps},
		Authorize:    AuthorizeHandler{deps: deps},
		IssueToken:   IssueTokenHandler{deps: deps},
		RevokeToken:  RevokeTokenHandler{deps: deps},
		Authenticate: AuthenticateTokenHandler{deps: deps},
		Accounts:     AccountsHandler{deps: deps},
		Statuses:     StatusesHandler{deps: deps},
		Clock:        deps.Clock,

		Notifications: NotificationsHandler{deps: deps},
		Conversations: ConversationsHandler{deps: deps},
	}
}
