package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

func TestRevokeSession(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
	s := signUp(t, b.app.SignUp, "alice")
	other, err := b.app.Login.Handle(ctx, application.Login{UserName: "alice", Password: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.app.Authenticate.Revoke(ctx, s.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.Authenticate.Handle(ctx, s.Token); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("revoked token still works: %v", err)
	}
	if _, err := b.app.Authenticate.Handle(ctx, other.Token); err != nil {
		t.Fatalf("the account's other session was revoked too: %v", err)
	}
	for _, tok := range []string{s.Token, "", "forged"} {
		if err := b.app.Authenticate.Revoke(ctx, tok); !errors.Is(err, domain.ErrUnauthorized) {
			t.Errorf("revoke %q: %v, want ErrUnauthorized", tok, err)
		}
	}
}
