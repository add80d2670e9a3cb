package memory

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.OAuthStore = (*OAuthStore)(nil)

// OAuthStore keeps applications, grants and tokens in maps, by client id
// and by hash.
type OAuthStore struct {
	mu     sync.Mutex
	apps   map[string]domain.OAuthApp
	grants map[string]domain.OAuthGrant
	tokens map[string]domain.OAuthToken
}

// NewOAuthStore returns an empty store.
func NewOAuthStore() *OAuthStore {
	return &OAuthStore{apps: map[string]domain.OAuthApp{}, grants: map[string]domain.OAuthGrant{}, tokens: map[string]domain.OAuthToken{}}
}

func cloneApp(a domain.OAuthApp) domain.OAuthApp {
	a.RedirectURIs, a.Scopes = slices.Clone(a.RedirectURIs), slices.Clone(a.Scopes)
	return a
}

// CreateApp implements ports.OAuthStore.
func (s *OAuthStore) CreateApp(ctx context.Context, a domain.OAuthApp) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[a.ClientID]; ok {
		return fmt.Errorf("application %s: %w", a.ClientID, domain.ErrAlreadyExists)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	s.apps[a.ClientID] = cloneApp(a)
	return nil
}

// AppByClientID implements ports.OAuthStore.
func (s *OAuthStore) AppByClientID(ctx context.Context, clientID string) (domain.OAuthApp, error) {
	if err := ctx.Err(); err != nil {
		return domain.OAuthApp{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.apps[clientID]
	if !ok {
		return domain.OAuthApp{}, fmt.Errorf("application %s: %w", clientID, domain.ErrNotFound)
	}
	return cloneApp(a), nil
}

// CreateGrant implements ports.OAuthStore.
func (s *OAuthStore) CreateGrant(ctx context.Context, g domain.OAuthGrant) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.grants[g.Hash]; ok {
		return fmt.Errorf("grant: %w", domain.ErrAlreadyExists)
	}
	g.CreatedAt, g.ExpiresAt, g.UsedAt = g.CreatedAt.UTC(), g.ExpiresAt.UTC(), g.UsedAt.UTC()
	g.Scopes = slices.Clone(g.Scopes)
	s.grants[g.Hash] = g
	return nil
}

// UseGrant implements ports.OAuthStore under the store's mutex.
func (s *OAuthStore) UseGrant(ctx context.Context, hash string, at time.Time) (domain.OAuthGrant, bool, error) {
	if err := ctx.Err(); err != nil {
		return domain.OAuthGrant{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[hash]
	if !ok {
		return domain.OAuthGrant{}, false, fmt.Errorf("grant: %w", domain.ErrNotFound)
	}
	first := g.UsedAt.IsZero()
	if first {
		g.UsedAt = at.UTC()
		s.grants[hash] = g
	}
	g.Scopes = slices.Clone(g.Scopes)
	return g, first, nil
}

// DeleteExpiredGrants implements ports.OAuthStore.
func (s *OAuthStore) DeleteExpiredGrants(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for h, g := range s.grants {
		if g.ExpiresAt.Before(before) {
			delete(s.grants, h)
			n++
		}
	}
	return n, nil
}

// CreateToken implements ports.OAuthStore.
func (s *OAuthStore) CreateToken(ctx context.Context, t domain.OAuthToken) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[t.Hash]; ok {
		return fmt.Errorf("token: %w", domain.ErrAlreadyExists)
	}
	t.CreatedAt, t.Scopes = t.CreatedAt.UTC(), slices.Clone(t.Scopes)
	s.tokens[t.Hash] = t
	return nil
}

// TokenByHash implements ports.OAuthStore.
func (s *OAuthStore) TokenByHash(ctx context.Context, hash string) (domain.OAuthToken, error) {
	if err := ctx.Err(); err != nil {
		return domain.OAuthToken{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[hash]
	if !ok {
		return domain.OAuthToken{}, fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	t.Scopes = slices.Clone(t.Scopes)
	return t, nil
}

// RevokeToken implements ports.OAuthStore.
func (s *OAuthStore) RevokeToken(ctx context.Context, hash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[hash]; !ok {
		return fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	delete(s.tokens, hash)
	return nil
}

// RevokeGrantTokens implements ports.OAuthStore.
func (s *OAuthStore) RevokeGrantTokens(ctx context.Context, grantHash string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for h, t := range s.tokens {
		if grantHash != "" && t.GrantHash == grantHash {
			delete(s.tokens, h)
			n++
		}
	}
	return n, nil
}

var _ ports.AccountIDStore = (*AccountIDStore)(nil)

// AccountIDStore maps remote actors to account ids, both ways.
type AccountIDStore struct {
	mu    sync.Mutex
	byURI map[string]string
	byID  map[string]string
}

// NewAccountIDStore returns an empty store.
func NewAccountIDStore() *AccountIDStore {
	return &AccountIDStore{byURI: map[string]string{}, byID: map[string]string{}}
}

// AccountID implements ports.AccountIDStore.
func (s *AccountIDStore) AccountID(ctx context.Context, actorURI, newID string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.byURI[actorURI]; ok {
		return id, nil
	}
	if _, ok := s.byID[newID]; ok {
		return "", fmt.Errorf("account id %s: %w", newID, domain.ErrAlreadyExists)
	}
	s.byURI[actorURI], s.byID[newID] = newID, actorURI
	return newID, nil
}

// AccountURI implements ports.AccountIDStore.
func (s *AccountIDStore) AccountURI(ctx context.Context, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	uri, ok := s.byID[id]
	if !ok {
		return "", fmt.Errorf("account id %s: %w", id, domain.ErrNotFound)
	}
	return uri, nil
}
