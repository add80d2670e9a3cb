package application

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// DeletePersona asks to delete a persona (SPEC §11): by the account that
// owns it, or by the operator.
type DeletePersona struct {
	UserID string // the signed-in account; ignored when ByOperator
	Name   string
	// ByOperator deletes whoever owns the persona (the operator API and
	// CLI). It is a field of its own, never an empty UserID, so that a
	// caller that lost its user cannot delete anyone's persona.
	ByOperator bool
}

// DeletedPersona is a persona whose deletion has begun.
type DeletedPersona struct {
	Name      string
	URI       string
	DeletedAt time.Time
}

// DeletePersonaHandler begins a persona's deletion. It only marks it, in
// the store, in an order that a crash cannot break: first the avatar is
// retired (from then on it is gone for every lookup: no post, follow or
// sign-in reaches it, its actor URL answers 410), then its name is marked
// deleted, reserved for good. The rest (the Delete{Person} to every
// follower and followed server, the removal of its posts and follows, and
// at last of its key) is PersonaDeletionsHandler's, which every server
// process runs and which finds the retired avatar in the store: a deletion
// begun by the CLI, or by a process that then died, finishes all the same.
type DeletePersonaHandler struct {
	actors ports.ActorStore
	names  ports.NameRegistry
	urls   URLs
	clock  ports.Clock
	log    *slog.Logger
	// wake tells this process's PersonaDeletionsHandler to start at once;
	// nil: a server finds the deletion at its next pass.
	wake Waker
}

// NewDeletePersonaHandler builds the handler; wake may be nil.
func NewDeletePersonaHandler(actors ports.ActorStore, names ports.NameRegistry, urls URLs, clock ports.Clock, log *slog.Logger, wake Waker) DeletePersonaHandler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return DeletePersonaHandler{actors: actors, names: names, urls: urls, clock: clock, log: log, wake: wake}
}

// Handle begins the deletion. domain.ErrNotFound for a name that is no
// persona, or a persona of another account (its existence is not told);
// domain.ErrGone for a persona deleted already (its actor URL says as
// much to anyone).
func (h DeletePersonaHandler) Handle(ctx context.Context, cmd DeletePersona) (DeletedPersona, error) {
	name, err := domain.NormalizeName(cmd.Name)
	if err != nil {
		return DeletedPersona{}, fmt.Errorf("%w: no persona %q", domain.ErrNotFound, clip(cmd.Name))
	}
	a, err := h.actors.AvatarByName(ctx, name)
	if errors.Is(err, domain.ErrNotFound) {
		if rn, gerr := h.names.Get(ctx, name); gerr == nil && rn.Kind == domain.NameKindPersona && rn.Deleted() {
			return DeletedPersona{}, fmt.Errorf("persona %q: %w", name, domain.ErrGone)
		}
		return DeletedPersona{}, fmt.Errorf("%w: no persona %q", domain.ErrNotFound, name)
	}
	if err != nil {
		return DeletedPersona{}, err
	}
	// The instance actor is an avatar without owner: never a persona.
	if a.RootUserID == "" || (!cmd.ByOperator && a.RootUserID != cmd.UserID) {
		return DeletedPersona{}, fmt.Errorf("%w: no persona %q of yours", domain.ErrNotFound, name)
	}
	now := h.clock.Now()
	if err := h.actors.RetireAvatar(ctx, a.ID, now); err != nil {
		return DeletedPersona{}, fmt.Errorf("retire persona %s: %w", name, err)
	}
	// Should this fail, the deletions' pass marks the name from the
	// retired avatar: the deletion has begun either way.
	if err := h.names.MarkDeleted(ctx, a.Name, a.ID, now); err != nil {
		h.log.WarnContext(ctx, "persona retired, its name not yet marked deleted; the deletions' pass will", "name", name, "err", err)
	}
	if h.wake != nil {
		h.wake.Wake()
	}
	h.log.InfoContext(ctx, "persona deletion begun", "name", name, "by_operator", cmd.ByOperator)
	return DeletedPersona{Name: a.Name, URI: h.urls.Persona(a.Name), DeletedAt: now.UTC()}, nil
}
