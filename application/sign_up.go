package application

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/heraldfed/herald/domain"
)

// SignUp asks for an account and its first persona of the same name.
type SignUp struct {
	UserName string
	Password string
	// Reason is what the person writes to the operator when sign-ups need
	// approval (at most domain.MaxSignUpReason characters); kept only
	// then.
	Reason string
}

// Session is a signed-in account with a fresh bearer token.
type Session struct {
	// Token is empty for a sign-up that awaits the operator's approval
	// (User.Status is domain.UserPending): it cannot sign in yet.
	Token  string
	User   domain.RootUser
	Avatar domain.Avatar // the first persona, on sign-up
}

// ErrRegistrationsClosed: the operator closed sign-ups
// (HERALD_REGISTRATIONS=closed).
var ErrRegistrationsClosed = fmt.Errorf("%w: registrations are closed on this server", domain.ErrForbidden)

// ErrAwaitingApproval: the account signed up while sign-ups needed the
// operator's approval, which it has not had yet.
var ErrAwaitingApproval = fmt.Errorf("%w: this account is awaiting approval by the operator", domain.ErrForbidden)

// SignUpHandler creates an account and its first persona.
type SignUpHandler struct{ identity identity }

// Handle reserves the name first (SPEC §3), then saves the account, the
// persona and a token. If any save fails everything before it is undone
// and the name is released: no half-made account stays behind.
//
// With registrations closed it refuses (ErrRegistrationsClosed) before
// anything else; when they need approval the account is saved pending,
// with its reason and without a token, for the operator to approve or
// reject (Moderator).
func (h SignUpHandler) Handle(ctx context.Context, cmd SignUp) (Session, error) {
	d := h.identity.deps
	mode := d.Registrations
	if mode == "" {
		mode = domain.RegistrationsOpen
	}
	switch mode {
	case domain.RegistrationsOpen, domain.RegistrationsApproval:
	case domain.RegistrationsClosed:
		return Session{}, ErrRegistrationsClosed
	default:
		return Session{}, fmt.Errorf("registrations mode %q is unknown", mode)
	}
	reason := strings.TrimSpace(cmd.Reason)
	if n := utf8.RuneCountInString(reason); n > domain.MaxSignUpReason {
		return Session{}, fmt.Errorf("%w: the reason is %d characters, at most %d", domain.ErrInvalidInput, n, domain.MaxSignUpReason)
	}
	if err := checkPassword(cmd.Password); err != nil {
		return Session{}, err
	}
	// Check the name before spending a bcrypt hash and a key pair on it.
	if _, err := h.identity.policy.CheckUserName(cmd.UserName); err != nil {
		return Session{}, err
	}
	hash, err := d.Passwords.Hash(cmd.Password)
	if err != nil {
		return Session{}, fmt.Errorf("password: %w", err)
	}
	var s Session
	_, err = h.identity.newAvatar(ctx, "", cmd.UserName, domain.NameKindPersona, func(a domain.Avatar) error {
		u := domain.RootUser{ID: d.IDs.NewID(), UserName: a.Name, PasswordHash: hash, CreatedAt: d.Clock.Now(), Status: domain.UserActive}
		if mode == domain.RegistrationsApproval {
			u.Status, u.Reason = domain.UserPending, reason
		}
		if err := d.Users.CreateUser(ctx, u); err != nil {
			return err
		}
		a.RootUserID = u.ID
		undo := func(err error) error {
			c := context.WithoutCancel(ctx)
			_ = d.Actors.DeleteAvatar(c, a.ID)
			if derr := d.Users.DeleteUser(c, u.ID); derr != nil {
				d.Log.Error("could not undo a failed sign-up", "user_id", u.ID, "err", derr)
			}
			return err
		}
		if err := d.Actors.CreateAvatar(ctx, a); err != nil {
			return undo(err)
		}
		if u.Status == domain.UserPending {
			s = Session{User: u, Avatar: a}
			return nil
		}
		tok, err := h.identity.issueToken(ctx, u.ID)
		if err != nil {
			return undo(err)
		}
		s = Session{Token: tok, User: u, Avatar: a}
		return nil
	})
	if err != nil {
		return Session{}, err
	}
	d.Log.Info("account created", "user_id", s.User.ID, "name", s.Avatar.Name, "status", s.User.Status)
	return s, nil
}
