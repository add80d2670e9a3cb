package application

import (
	"context"
	"errors"

	"github.com/heraldfed/herald/domain"
)

// Revoke ends the session of token (logout): its hash is deleted, so the
// token is refused from then on. Only the presented token is revoked, never
// another one of the same account; a token that is unknown or already
// revoked is domain.ErrUnauthorized.
func (h AuthenticateHandler) Revoke(ctx context.Context, token string) error {
	if token == "" {
		return domain.ErrUnauthorized
	}
	err := h.deps.Tokens.RevokeToken(ctx, domain.HashToken(token))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ErrUnauthorized
	}
	return err
}
