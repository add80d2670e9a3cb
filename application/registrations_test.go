package application_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func registrations(m domain.RegistrationMode) func(*application.Deps) {
	return func(d *application.Deps) { d.Registrations = m }
}

func TestSignUpRegistrationModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("closed: refused, nothing taken", func(t *testing.T) {
		t.Parallel()
		b := newApp(t, registrations(domain.RegistrationsClosed))
		_, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse"})
		if !errors.Is(err, application.ErrRegistrationsClosed) || !errors.Is(err, domain.ErrForbidden) {
			t.Fatalf("sign-up: %v", err)
		}
		if _, err := b.names.Get(ctx, "alice"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatal("a refused sign-up took the name")
		}
		if b.keys.Calls() != 0 {
			t.Fatal("a key pair was made for a refused sign-up")
		}
	})

	for _, m := range []domain.RegistrationMode{"", domain.RegistrationsOpen} {
		t.Run("open ("+string(m)+"): active with a token", func(t *testing.T) {
			t.Parallel()
			b := newApp(t, registrations(m))
			s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse", Reason: "hi"})
			if err != nil || s.Token == "" || !s.User.Active() || s.User.Reason != "" {
				t.Fatalf("%+v %v", s, err)
			}
		})
	}

	t.Run("approval: pending, no token, no sign-in", func(t *testing.T) {
		t.Parallel()
		b := newApp(t, registrations(domain.RegistrationsApproval))
		if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse",
			Reason: strings.Repeat("r", domain.MaxSignUpReason+1)}); !errors.Is(err, domain.ErrInvalidInput) {
			t.Fatalf("long reason: %v", err)
		}
		s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse", Reason: " I run the club "})
		if err != nil || s.Token != "" || s.User.Status != domain.UserPending || s.User.Reason != "I run the club" || s.Avatar.Name != "alice" {
			t.Fatalf("pending sign-up: %+v %v", s, err)
		}
		if stored, err := b.accounts.UserByID(ctx, s.User.ID); err != nil || stored.Status != domain.UserPending || stored.Reason != "I run the club" {
			t.Fatalf("stored %+v %v", stored, err)
		}
		if rn, err := b.names.Get(ctx, "alice"); err != nil || rn.OwnerID != s.Avatar.ID {
			t.Fatalf("the name is not held while pending: %+v %v", rn, err)
		}
		if _, err := b.app.Login.Handle(ctx, application.Login{UserName: "alice", Password: "wrong password"}); !errors.Is(err, domain.ErrUnauthorized) {
			t.Fatalf("wrong password of a pending account: %v", err)
		}
		if _, err := b.app.Login.Handle(ctx, application.Login{UserName: "alice", Password: "correct horse"}); !errors.Is(err, application.ErrAwaitingApproval) {
			t.Fatalf("login while pending: %v", err)
		}
		// Even holding a token, a pending account does nothing.
		tok := "planted-token"
		if err := b.accounts.CreateToken(ctx, domain.Token{Hash: domain.HashToken(tok), UserID: s.User.ID, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.app.Authenticate.Handle(ctx, tok); !errors.Is(err, application.ErrAwaitingApproval) {
			t.Fatalf("a pending account's token authenticated: %v", err)
		}
	})
}
