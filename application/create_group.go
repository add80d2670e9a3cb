package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// CreateGroup asks for a group actor owned by a signed-in account.
type CreateGroup struct {
	UserID string
	Name   string
	// Locked says whether members' follows wait for the owner's approval;
	// nil is locked. A group announces whatever its members address to
	// it to every member, so an open group lets anyone anywhere join and
	// have their posts boosted to all: approval is the safe default, and
	// an owner opens the group on purpose ("locked": false).
	Locked *bool
}

// CreateGroupHandler creates groups in the same username space as personas.
type CreateGroupHandler struct{ identity identity }

// Handle returns the new group, or the same naming errors as personas get.
func (h CreateGroupHandler) Handle(ctx context.Context, cmd CreateGroup) (domain.Group, error) {
	d := h.identity.deps
	if _, err := d.Users.UserByID(ctx, cmd.UserID); err != nil {
		return domain.Group{}, err
	}
	name, err := h.identity.policy.CheckUserName(cmd.Name)
	if err != nil {
		return domain.Group{}, err
	}
	keys, err := d.Keys.GenerateKeyPair()
	if err != nil {
		return domain.Group{}, fmt.Errorf("key pair: %w", err)
	}
	g, err := domain.NewGroup(d.IDs.NewID(), cmd.UserID, name, keys, d.Clock.Now())
	if err != nil {
		return domain.Group{}, err
	}
	g.Locked = cmd.Locked == nil || *cmd.Locked
	err = h.identity.claim(ctx, name, domain.NameKindGroup, g.ID, func() error { return d.Actors.CreateGroup(ctx, g) })
	if err != nil {
		return domain.Group{}, err
	}
	return g, nil
}
