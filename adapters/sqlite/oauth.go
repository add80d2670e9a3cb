package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.OAuthStore = (*OAuthStore)(nil)

// OAuthStore keeps the client API's applications, grants and tokens in
// oauth_apps, oauth_grants and oauth_tokens (migration 018), each keyed
// by its client id or hash.
type OAuthStore struct{ db *DB }

// NewOAuthStore returns the store on db.
func NewOAuthStore(db *DB) *OAuthStore { return &OAuthStore{db: db} }

func splitScopes(s string) domain.Scopes {
	if s == "" {
		return nil
	}
	return domain.Scopes(strings.Split(s, " "))
}

// CreateApp implements ports.OAuthStore.
func (s *OAuthStore) CreateApp(ctx context.Context, a domain.OAuthApp) error {
	_, err := s.db.w.ExecContext(ctx, `
INSERT INTO oauth_apps (client_id, id, secret_hash, name, website, redirect_uris, scopes, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ClientID, a.ID, a.SecretHash, a.Name, a.Website, strings.Join(a.RedirectURIs, "\n"), a.Scopes.String(), nanos(a.CreatedAt))
	if err != nil {
		return fmt.Errorf("application %s: %w", a.ClientID, interpretError(err))
	}
	return nil
}

// AppByClientID implements ports.OAuthStore.
func (s *OAuthStore) AppByClientID(ctx context.Context, clientID string) (domain.OAuthApp, error) {
	var a domain.OAuthApp
	var uris, scopes string
	var created sql.NullInt64
	err := s.db.r.QueryRowContext(ctx, `
SELECT client_id, id, secret_hash, name, website, redirect_uris, scopes, created_at FROM oauth_apps WHERE client_id = ?`, clientID).
		Scan(&a.ClientID, &a.ID, &a.SecretHash, &a.Name, &a.Website, &uris, &scopes, &created)
	if err != nil {
		return domain.OAuthApp{}, fmt.Errorf("application %s: %w", clientID, interpretError(err))
	}
	a.RedirectURIs, a.Scopes, a.CreatedAt = strings.Split(uris, "\n"), splitScopes(scopes), fromNanos(created)
	return a, nil
}

const grantColumns = `hash, kind, client_id, user_id, avatar_id, redirect_uri, scopes, challenge, challenge_method, created_at, expires_at, used_at`

func scanGrant(row scanner) (domain.OAuthGrant, error) {
	var g domain.OAuthGrant
	var kind, scopes string
	var created, expires, used sql.NullInt64
	if err := row.Scan(&g.Hash, &kind, &g.ClientID, &g.UserID, &g.AvatarID, &g.RedirectURI, &scopes, &g.Challenge, &g.ChallengeMethod,
		&created, &expires, &used); err != nil {
		return domain.OAuthGrant{}, err
	}
	g.Kind, g.Scopes = domain.GrantKind(kind), splitScopes(scopes)
	g.CreatedAt, g.ExpiresAt, g.UsedAt = fromNanos(created), fromNanos(expires), fromNanos(used)
	return g, nil
}

// CreateGrant implements ports.OAuthStore.
func (s *OAuthStore) CreateGrant(ctx context.Context, g domain.OAuthGrant) error {
	_, err := s.db.w.ExecContext(ctx, `INSERT INTO oauth_grants (`+grantColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.Hash, string(g.Kind), g.ClientID, g.UserID, g.AvatarID, g.RedirectURI, g.Scopes.String(), g.Challenge, g.ChallengeMethod,
		nanos(g.CreatedAt), stamp(g.ExpiresAt), nanos(g.UsedAt))
	if err != nil {
		return fmt.Errorf("grant: %w", interpretError(err))
	}
	return nil
}

// UseGrant implements ports.OAuthStore: one conditional UPDATE marks it
// (SQLite has one writer, and the WHERE decides who was first), then the
// row is read back on the same connection.
func (s *OAuthStore) UseGrant(ctx context.Context, hash string, at time.Time) (domain.OAuthGrant, bool, error) {
	res, err := s.db.w.ExecContext(ctx, `UPDATE oauth_grants SET used_at = ? WHERE hash = ? AND used_at IS NULL`, stamp(at), hash)
	if err != nil {
		return domain.OAuthGrant{}, false, fmt.Errorf("grant: %w", interpretError(err))
	}
	g, err := scanGrant(s.db.w.QueryRowContext(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE hash = ?`, hash))
	if err != nil {
		return domain.OAuthGrant{}, false, fmt.Errorf("grant: %w", interpretError(err))
	}
	return g, affected(res) == 1, nil
}

// DeleteExpiredGrants implements ports.OAuthStore along oauth_grants_expires.
func (s *OAuthStore) DeleteExpiredGrants(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM oauth_grants WHERE expires_at < ?`, stamp(before))
	if err != nil {
		return 0, fmt.Errorf("expired grants: %w", interpretError(err))
	}
	return affected(res), nil
}

// CreateToken implements ports.OAuthStore.
func (s *OAuthStore) CreateToken(ctx context.Context, t domain.OAuthToken) error {
	_, err := s.db.w.ExecContext(ctx, `
INSERT INTO oauth_tokens (hash, client_id, user_id, avatar_id, scopes, grant_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.Hash, t.ClientID, t.UserID, t.AvatarID, t.Scopes.String(), t.GrantHash, nanos(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err))
	}
	return nil
}

// TokenByHash implements ports.OAuthStore.
func (s *OAuthStore) TokenByHash(ctx context.Context, hash string) (domain.OAuthToken, error) {
	var t domain.OAuthToken
	var scopes string
	var created sql.NullInt64
	err := s.db.r.QueryRowContext(ctx, `
SELECT hash, client_id, user_id, avatar_id, scopes, grant_hash, created_at FROM oauth_tokens WHERE hash = ?`, hash).
		Scan(&t.Hash, &t.ClientID, &t.UserID, &t.AvatarID, &scopes, &t.GrantHash, &created)
	if err != nil {
		return domain.OAuthToken{}, fmt.Errorf("token: %w", interpretError(err))
	}
	t.Scopes, t.CreatedAt = splitScopes(scopes), fromNanos(created)
	return t, nil
}

// RevokeToken implements ports.OAuthStore.
func (s *OAuthStore) RevokeToken(ctx context.Context, hash string) error {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE hash = ?`, hash)
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	return nil
}

// RevokeGrantTokens implements ports.OAuthStore along oauth_tokens_grant.
func (s *OAuthStore) RevokeGrantTokens(ctx context.Context, grantHash string) (int, error) {
	if grantHash == "" {
		return 0, nil
	}
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE grant_hash = ?`, grantHash)
	if err != nil {
		return 0, fmt.Errorf("tokens of a grant: %w", interpretError(err))
	}
	return affected(res), nil
}

var _ ports.AccountIDStore = (*AccountIDStore)(nil)

// AccountIDStore keeps remote actors' account ids in account_ids
// (migration 018): the actor URI is the primary key, the id unique.
type AccountIDStore struct{ db *DB }

// NewAccountIDStore returns the store on db.
func NewAccountIDStore(db *DB) *AccountIDStore { return &AccountIDStore{db: db} }

// AccountID implements ports.AccountIDStore: a read, and on a miss an
// insert that leaves an existing row alone, then the row read on the
// writer (SQLite's one writer orders concurrent first calls).
func (s *AccountIDStore) AccountID(ctx context.Context, actorURI, newID string) (string, error) {
	var id string
	err := s.db.r.QueryRowContext(ctx, `SELECT id FROM account_ids WHERE actor_uri = ?`, actorURI).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err))
	}
	if _, err := s.db.w.ExecContext(ctx, `INSERT INTO account_ids (actor_uri, id) VALUES (?, ?) ON CONFLICT (actor_uri) DO NOTHING`, actorURI, newID); err != nil {
		return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err))
	}
	if err := s.db.w.QueryRowContext(ctx, `SELECT id FROM account_ids WHERE actor_uri = ?`, actorURI).Scan(&id); err != nil {
		return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err))
	}
	return id, nil
}

// AccountURI implements ports.AccountIDStore.
func (s *AccountIDStore) AccountURI(ctx context.Context, id string) (string, error) {
	var uri string
	if err := s.db.r.QueryRowContext(ctx, `SELECT actor_uri FROM account_ids WHERE id = ?`, id).Scan(&uri); err != nil {
		return "", fmt.Errorf("account id %s: %w", id, interpretError(err))
	}
	return uri, nil
}
