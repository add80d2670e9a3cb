package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// RevokeToken is POST /oauth/revoke (RFC 7009).
type RevokeToken struct {
	ClientID     string
	ClientSecret string
	Token        string
}

// RevokeTokenHandler revokes an access token for the client it was issued
// to.
type RevokeTokenHandler struct{ deps Deps }

// Handle revokes the token. An unknown token is no error (RFC 7009 §2.2:
// the client cannot do anything about it); another client's token is
// domain.ErrForbidden and stays.
func (h RevokeTokenHandler) Handle(ctx context.Context, cmd RevokeToken) error {
	app, err := authenticateClient(ctx, h.deps.OAuth, cmd.ClientID, cmd.ClientSecret)
	if err != nil {
		return err
	}
	hash := domain.HashToken(cmd.Token)
	t, err := h.deps.OAuth.TokenByHash(ctx, hash)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.ClientID != app.ClientID {
		return fmt.Errorf("%w: this token was issued to another application", domain.ErrForbidden)
	}
	if err := h.deps.OAuth.RevokeToken(ctx, hash); err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	return nil
}
