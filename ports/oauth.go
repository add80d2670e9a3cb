package ports

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
)

// OAuthStore keeps the client API's OAuth 2 state: registered
// applications, the one-time grants of the authorization flow (consents
// and codes) and access tokens. Secrets are never stored: grants and
// tokens are kept and found by the hex SHA-256 of their secret
// (domain.HashToken), applications by their public client id with the
// secret's hash beside it.
type OAuthStore interface {
	// CreateApp inserts an application; domain.ErrAlreadyExists if its
	// client id is taken.
	CreateApp(ctx context.Context, a domain.OAuthApp) error
	// AppByClientID returns the application or domain.ErrNotFound.
	AppByClientID(ctx context.Context, clientID string) (domain.OAuthApp, error)

	// CreateGrant inserts a grant (after g.Check); domain.ErrAlreadyExists
	// if its hash is taken.
	CreateGrant(ctx context.Context, g domain.OAuthGrant) error
	// UseGrant marks the grant with this hash used at `at`, if it was not
	// used yet, and returns it as stored after the call. first is true
	// for the one call that marked it: of concurrent uses of one grant
	// exactly one is first. domain.ErrNotFound if there is no such grant.
	UseGrant(ctx context.Context, hash string, at time.Time) (g domain.OAuthGrant, first bool, err error)
	// DeleteExpiredGrants removes the grants that expired before `before`,
	// used or not, and returns how many went.
	DeleteExpiredGrants(ctx context.Context, before time.Time) (int, error)

	// CreateToken inserts an access token (after t.Check);
	// domain.ErrAlreadyExists if its hash is taken.
	CreateToken(ctx context.Context, t domain.OAuthToken) error
	// TokenByHash returns the token or domain.ErrNotFound.
	TokenByHash(ctx context.Context, hash string) (domain.OAuthToken, error)
	// RevokeToken deletes the token; domain.ErrNotFound if there was none.
	RevokeToken(ctx context.Context, hash string) error
	// RevokeGrantTokens deletes every token issued for the grant with
	// this hash (a reused authorization code revokes what it gave, RFC
	// 6749 §4.1.2) and returns how many went.
	RevokeGrantTokens(ctx context.Context, grantHash string) (int, error)
}

// AccountIDStore gives remote actors the account ids of the client API:
// strings that sort by when Herald first showed the actor (the caller
// hands a fresh UUIDv7 in), one per actor URI for good. Local personas
// keep their own ids and are not in it.
type AccountIDStore interface {
	// AccountID returns the id of actorURI, storing newID as it when the
	// actor has none yet. Of concurrent first calls for one actor all get
	// the one id that was stored. A newID already held by another actor is
	// domain.ErrAlreadyExists.
	AccountID(ctx context.Context, actorURI, newID string) (string, error)
	// AccountURI returns the actor URI of id, or domain.ErrNotFound.
	AccountURI(ctx context.Context, id string) (string, error)
}
