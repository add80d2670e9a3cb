package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// SigningKeys finds the private key a local actor signs its deliveries with.
type SigningKeys interface {
	// SigningKey returns the PEM private key of the actor, or
	// domain.ErrNotFound if the actor no longer exists.
	SigningKey(ctx context.Context, actorID string) (string, error)
}

// ActorKeys reads signing keys from the actor store: personas (and the
// instance actor) first, then groups.
type ActorKeys struct {
	Actors ports.ActorStore
}

// SigningKey implements SigningKeys.
func (k ActorKeys) SigningKey(ctx context.Context, actorID string) (string, error) {
	a, err := k.Actors.AvatarByID(ctx, actorID)
	if err == nil {
		return a.Keys.PrivatePEM, nil
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return "", err
	}
	g, err := k.Actors.GroupByID(ctx, actorID)
	if err != nil {
		return "", fmt.Errorf("signing key of %s: %w", actorID, err)
	}
	return g.Keys.PrivatePEM, nil
}
