package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// SignUp asks for an account and its first persona of the same name.
type SignUp struct {
	UserName string
	Password string
}

// Session is a signed-in account with a fresh bearer token.
type Session struct {
	Token  string
	User   domain.RootUser
	Avatar domain.Avatar // the first persona, on sign-up
}

// SignUpHandler creates an account and its first persona.
type SignUpHandler struct{ identity identity }

// Handle reserves the name first (SPEC §3), then saves the account, the
// persona and a token. If any save fails everything before it is undone
// and the name is released: no half-made account stays behind.
func (h SignUpHandler) Handle(ctx context.Context, cmd SignUp) (Session, error) {
	d := h.identity.deps
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
		u := domain.RootUser{ID: d.IDs.NewID(), UserName: a.Name, PasswordHash: hash, CreatedAt: d.Clock.Now()}
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
	d.Log.Info("account created", "user_id", s.User.ID, "name", s.Avatar.Name)
	return s, nil
}
