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
	id, err := h.reserve(ctx, rn)
	if err != nil {
		return domain.Avatar{}, err
	}
	a.ID = id
	if err := d.Actors.CreateAvatar(ctx, a); err != nil {
		if errors.Is(err, domain.ErrAlreadyExists) || errors.Is(err, domain.ErrNameTaken) {
			return d.Actors.AvatarByName(ctx, name)
		}
		return domain.Avatar{}, err
	}
	d.Log.Info("instance actor created", "name", name)
	return a, nil
}

// reserve takes the instance actor's name and returns the actor id it is
// reserved for. A system reservation of the same name (migration 001 seeds
// the fixed list, which holds "instance") is converted; a reservation of the
// instance kind made by another process, or by an earlier start that died
// half way, is adopted.
func (h InstanceActorHandler) reserve(ctx context.Context, rn domain.ReservedName) (string, error) {
	d := h.identity.deps
	for try := 0; try < 3; try++ {
		err := d.Names.Reserve(ctx, rn)
		if err == nil {
			return rn.OwnerID, nil
		}
		if !errors.Is(err, domain.ErrNameTaken) {
			return "", err
		}
		held, err := d.Names.Get(ctx, rn.Name)
		if errors.Is(err, domain.ErrNotFound) {
			continue // released meanwhile: try again
		}
		if err != nil {
			return "", err
		}
		switch held.Kind {
		case domain.NameKindInstance:
			return held.OwnerID, nil
		case domain.NameKindSystem:
			if err := d.Names.Release(ctx, rn.Name, ""); err != nil && !errors.Is(err, domain.ErrNotFound) {
				return "", err
			}
		default:
			return "", fmt.Errorf("instance actor name %q is reserved as a %s name; choose another", rn.Name, held.Kind)
		}
	}
	return "", fmt.Errorf("instance actor name %q: reservation kept changing; try again", rn.Name)
}
