package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// InstanceActorHandler makes sure the instance actor exists (it signs the
// requests Herald makes as the server, such as fetching a remote actor) and
// that the never-available names are held as system reservations.
type InstanceActorHandler struct {
	identity identity
	name     string
}

// Name is the instance actor's user name.
func (h InstanceActorHandler) Name() string { return h.name }

// Handle returns the instance actor, creating it on first start. It is safe
// when several processes start at once: the reservation decides who creates
// it and the others read what the winner saved.
func (h InstanceActorHandler) Handle(ctx context.Context) (domain.Avatar, error) {
	d := h.identity.deps
	name, err := domain.NormalizeName(h.name)
	if err != nil {
		return domain.Avatar{}, fmt.Errorf("instance actor name: %w", err)
	}
	a, err := h.ensure(ctx, name)
	if err != nil {
		return domain.Avatar{}, err
	}
	for _, n := range h.identity.policy.Names() {
		rn, err := domain.NewReservedName(n, domain.NameKindSystem, "", d.Clock.Now())
		if err != nil {
			return domain.Avatar{}, err
		}
		if err := d.Names.Reserve(ctx, rn); err != nil && !errors.Is(err, domain.ErrNameTaken) {
			return domain.Avatar{}, fmt.Errorf("reserve system name %q: %w", n, err)
		}
	}
	return a, nil
}

func (h InstanceActorHandler) ensure(ctx context.Context, name string) (domain.Avatar, error) {
	d := h.identity.deps
	if a, err := d.Actors.AvatarByName(ctx, name); err == nil {
		if a.RootUserID != "" {
			return domain.Avatar{}, fmt.Errorf("instance actor name %q belongs to a user's persona; choose another", name)
		}
		return a, nil
	} else if !errors.Is(err, domain.ErrNotFound) {
		return domain.Avatar{}, err
	}
	keys, err := d.Keys.GenerateKeyPair()
	if err != nil {
		return domain.Avatar{}, fmt.Errorf("key pair: %w", err)
	}
	a, err := domain.NewAvatar(d.IDs.NewID(), "", name, keys, d.Clock.Now())
	if err != nil {
		return domain.Avatar{}, err
	}
	rn, err := domain.NewReservedName(name, domain.NameKindInstance, a.ID, d.Clock.Now())
	if err != nil {
		return domain.Avatar{}, err
	}
	switch err := d.Names.Reserve(ctx, rn); {
	case errors.Is(err, domain.ErrNameTaken):
		held, gerr := d.Names.Get(ctx, name)
		if gerr != nil {
			return domain.Avatar{}, gerr
		}
		if held.Kind != domain.NameKindInstance {
			return domain.Avatar{}, fmt.Errorf("instance actor name %q is reserved as a %s name; choose another", name, held.Kind)
		}
		// Another process (or an earlier start that died half way) holds
		// the reservation: adopt its id.
		a.ID = held.OwnerID
	case err != nil:
		return domain.Avatar{}, err
	}
	if err := d.Actors.CreateAvatar(ctx, a); err != nil {
		if errors.Is(err, domain.ErrAlreadyExists) || errors.Is(err, domain.ErrNameTaken) {
			return d.Actors.AvatarByName(ctx, name)
		}
		return domain.Avatar{}, err
	}
	d.Log.Info("instance actor created", "name", name)
	return a, nil
}
