package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// ApproveRegistrationHandler lets a pending sign-up in (SPEC §11,
// HERALD_REGISTRATIONS=approval): the account signs in from then on.
type ApproveRegistrationHandler struct{ deps ModeratorDeps }

// Handle approves the account userID and returns it: domain.ErrNotFound
// for an unknown id, domain.ErrInvalidInput for an account that is not
// awaiting approval.
func (h ApproveRegistrationHandler) Handle(ctx context.Context, userID string) (domain.RootUser, error) {
	u, err := pendingUser(ctx, h.deps, userID)
	if err != nil {
		return domain.RootUser{}, err
	}
	if err := h.deps.Users.SetUserStatus(ctx, u.ID, domain.UserActive); err != nil {
		return domain.RootUser{}, fmt.Errorf("approve %s: %w", u.UserName, err)
	}
	u.Status = domain.UserActive
	h.deps.Log.InfoContext(ctx, "sign-up approved", "user_id", u.ID, "name", u.UserName)
	return u, nil
}

// pendingUser is the account userID, which must await approval.
func pendingUser(ctx context.Context, d ModeratorDeps, userID string) (domain.RootUser, error) {
	userID = strings.TrimSpace(userID)
	if userID == "" {
		return domain.RootUser{}, fmt.Errorf("%w: account id is empty", domain.ErrInvalidInput)
	}
	u, err := d.Users.UserByID(ctx, userID)
	if err != nil {
		return domain.RootUser{}, err
	}
	if u.Active() {
		return domain.RootUser{}, fmt.Errorf("%w: account %s (%s) is active, not awaiting approval", domain.ErrInvalidInput, u.ID, u.UserName)
	}
	return u, nil
}
