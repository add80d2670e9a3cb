package application

import (
	"context"

	"github.com/heraldfed/herald/domain"
)

// CreatePersona asks for one more persona of a signed-in account.
type CreatePersona struct {
	UserID string
	Name   string
	// Locked: its follows wait for approval (manuallyApprovesFollowers).
	// A persona is open by default, as on Mastodon.
	Locked bool
}

// CreatePersonaHandler creates personas, reserving the name first.
type CreatePersonaHandler struct{ identity identity }

// Handle returns the new persona, domain.ErrNameTaken if the name is
// taken or never available, domain.ErrInvalidName if it is malformed.
func (h CreatePersonaHandler) Handle(ctx context.Context, cmd CreatePersona) (domain.Avatar, error) {
	d := h.identity.deps
	if _, err := d.Users.UserByID(ctx, cmd.UserID); err != nil {
		return domain.Avatar{}, err
	}
	// A signed-in account made it: active from the start.
	a, err := h.identity.newAvatar(ctx, cmd.UserID, cmd.Name, domain.NameKindPersona, func(a domain.Avatar) error {
		a.Locked = cmd.Locked
		if err := d.Actors.CreateAvatar(ctx, a); err != nil {
			return err
		}
		touch(ctx, d, a.ID)
		return nil
	})
	if err != nil {
		return domain.Avatar{}, err
	}
	a.Locked = cmd.Locked
	return a, nil
}
