package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.OAuthStore = (*OAuthStore)(nil)

// OAuthStore keeps the client API's applications, grants and tokens in
// oauth_apps, oauth_grants and oauth_tokens (migration 027), each keyed
// by its client id or hash.
type OAuthStore struct{ pool *pgxpool.Pool }

// NewOAuthStore returns the store on pool.
func NewOAuthStore(pool *pgxpool.Pool) *OAuthStore { return &OAuthStore{pool: pool} }

func splitScopes(s string) domain.Scopes {
	if s == "" {
		return nil
	}
	return domain.Scopes(strings.Split(s, " "))
}

// CreateApp implements ports.OAuthStore.
func (s *OAuthStore) CreateApp(ctx context.Context, a domain.OAuthApp) error {
	_, err := s.pool.Exec(ctx, `
INSERT INTO oauth_apps (client_id, id, secret_hash, name, website, redirect_uris, scopes, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.ClientID, a.ID, a.SecretHash, a.Name, a.Website, a.RedirectURIs, a.Scopes.String(), a.CreatedAt)
	if err != nil {
		return fmt.Errorf("application %s: %w", a.ClientID, interpretError(err))
	}
	return nil
}

// AppByClientID implements ports.OAuthStore.
func (s *OAuthStore) AppByClientID(ctx context.Context, clientID string) (domain.OAuthApp, error) {
	var a domain.OAuthApp
	var scopes string
	err := s.pool.QueryRow(ctx, `
SELECT client_id, id, secret_hash, name, website, redirect_uris, scopes, created_at FROM oauth_apps WHERE client_id = $1`, clientID).
		Scan(&a.ClientID, &a.ID, &a.SecretHash, &a.Name, &a.Website, &a.RedirectURIs, &scopes, &a.CreatedAt)
	if err != nil {
		return domain.OAuthApp{}, fmt.Errorf("application %s: %w", clientID, interpretError(err))
	}
	a.Scopes, a.CreatedAt = splitScopes(scopes), a.CreatedAt.UTC()
	return a, nil
}

const grantColumns = `hash, kind, client_id, user_id, avatar_id, redirect_uri, scopes, challenge, challenge_method, created_at, expires_at, used_at`

// CreateGrant implements ports.OAuthStore.
func (s *OAuthStore) CreateGrant(ctx context.Context, g domain.OAuthGrant) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO oauth_grants (`+grantColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		g.Hash, string(g.Kind), g.ClientID, g.UserID, g.AvatarID, g.RedirectURI, g.Scopes.String(), g.Challenge, g.ChallengeMethod,
		g.CreatedAt, g.ExpiresAt, nullTime(g.UsedAt))
	if err != nil {
		return fmt.Errorf("grant: %w", interpretError(err))
	}
	return nil
}

// UseGrant implements ports.OAuthStore: a conditional UPDATE marks the
// grant (its row lock makes a concurrent use wait, then find used_at set
// and change nothing), and only when it marked nothing is the grant read
// by a second statement, whose snapshot sees the use that won.
func (s *OAuthStore) UseGrant(ctx context.Context, hash string, at time.Time) (domain.OAuthGrant, bool, error) {
	g, err := scanGrant(s.pool.QueryRow(ctx, `
UPDATE oauth_grants SET used_at = $2 WHERE hash = $1 AND used_at IS NULL RETURNING `+grantColumns, hash, at))
	if err == nil {
		return g, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return domain.OAuthGrant{}, false, fmt.Errorf("grant: %w", interpretError(err))
	}
	g, err = scanGrant(s.pool.QueryRow(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE hash = $1`, hash))
	if err != nil {
		return domain.OAuthGrant{}, false, fmt.Errorf("grant: %w", interpretError(err))
	}
	return g, false, nil
}

func scanGrant(row pgx.Row) (domain.OAuthGrant, error) {
	var g domain.OAuthGrant
	var kind, scopes string
	var used *time.Time
	if err := row.Scan(&g.Hash, &kind, &g.ClientID, &g.UserID, &g.AvatarID, &g.RedirectURI, &scopes, &g.Challenge, &g.ChallengeMethod,
		&g.CreatedAt, &g.ExpiresAt, &used); err != nil {
		return domain.OAuthGrant{}, err
	}
	g.Kind, g.Scopes = domain.GrantKind(kind), splitScopes(scopes)
	g.CreatedAt, g.ExpiresAt = g.CreatedAt.UTC(), g.ExpiresAt.UTC()
	if used != nil {
		g.UsedAt = used.UTC()
	}
	return g, nil
}

// DeleteExpiredGrants implements ports.OAuthStore along oauth_grants_expires.
func (s *OAuthStore) DeleteExpiredGrants(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM oauth_grants WHERE expires_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("expired grants: %w", interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}

// CreateToken implements ports.OAuthStore.
func (s *OAuthStore) CreateToken(ctx context.Context, t domain.OAuthToken) error {
	_, err := s.pool.Exec(ctx, `
INSERT INTO oauth_tokens (hash, client_id, user_id, avatar_id, scopes, grant_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		t.Hash, t.ClientID, t.UserID, t.AvatarID, t.Scopes.String(), t.GrantHash, t.CreatedAt)
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err))
	}
	return nil
}

// TokenByHash implements ports.OAuthStore.
func (s *OAuthStore) TokenByHash(ctx context.Context, hash string) (domain.OAuthToken, error) {
	var t domain.OAuthToken
	var scopes string
	err := s.pool.QueryRow(ctx, `
SELECT hash, client_id, user_id, avatar_id, scopes, grant_hash, created_at FROM oauth_tokens WHERE hash = $1`, hash).
		Scan(&t.Hash, &t.ClientID, &t.UserID, &t.AvatarID, &scopes, &t.GrantHash, &t.CreatedAt)
	if err != nil {
		return domain.OAuthToken{}, fmt.Errorf("token: %w", interpretError(err))
	}
	t.Scopes, t.CreatedAt = splitScopes(scopes), t.CreatedAt.UTC()
	return t, nil
}

// RevokeToken implements ports.OAuthStore.
func (s *OAuthStore) RevokeToken(ctx context.Context, hash string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE hash = $1`, hash)
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	return nil
}

// RevokeGrantTokens implements ports.OAuthStore along oauth_tokens_grant.
func (s *OAuthStore) RevokeGrantTokens(ctx context.Context, grantHash string) (int, error) {
	if grantHash == "" {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE grant_hash = $1`, grantHash)
	if err != nil {
		return 0, fmt.Errorf("tokens of a grant: %w", interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}

var _ ports.AccountIDStore = (*AccountIDStore)(nil)

// AccountIDStore keeps remote actors' account ids in account_ids
// (migration 027): the actor URI is the primary key, the id unique.
type AccountIDStore struct{ pool *pgxpool.Pool }

// NewAccountIDStore returns the store on pool.
func NewAccountIDStore(pool *pgxpool.Pool) *AccountIDStore { return &AccountIDStore{pool: pool} }

// AccountID implements ports.AccountIDStore: a read, and on a miss an
// insert whose conflict on the actor (a concurrent first call) does
// nothing, then a read in a new statement, which sees the winner's row.
func (s *AccountIDStore) AccountID(ctx context.Context, actorURI, newID string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id FROM account_ids WHERE actor_uri = $1`, actorURI).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err))
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO account_ids (actor_uri, id) VALUES ($1, $2) ON CONFLICT (actor_uri) DO NOTHING`, actorURI, newID); err != nil {
		return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err))
	}
	if err := s.pool.QueryRow(ctx, `SELECT id FROM account_ids WHERE actor_uri = $1`, actorURI).Scan(&id); err != nil {
		return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err))
	}
	return id, nil
}

// AccountURI implements ports.AccountIDStore.
func (s *AccountIDStore) AccountURI(ctx context.Context, id string) (string, error) {
	var uri string
	if err := s.pool.QueryRow(ctx, `SELECT actor_uri FROM account_ids WHERE id = $1`, id).Scan(&uri); err != nil {
		return "", fmt.Errorf("account id %s: %w", id, interpretError(err))
	}
	return uri, nil
}
