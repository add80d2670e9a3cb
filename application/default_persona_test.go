package application_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// A post without "as" is the account's only persona's; an account with
// several must say which, and the refusal names them.
func TestPublishWithoutAsTakesTheOnlyPersona(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		personas []string // created besides alice, the sign-up's persona
		as       string
		want     string // the author persona, "" for a refusal
		wantErr  []string
	}{
		{name: "only persona", want: "alice"},
		{name: "only persona, blank as", as: "  ", want: "alice"},
		{name: "named", personas: []string{"zed"}, as: "zed", want: "zed"},
		{name: "several, none named", personas: []string{"zed"}, wantErr: []string{`"as" is missing`, "alice, zed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupFed(t)
			ctx := context.Background()
			for _, n := range tt.personas {
				b.persona(n)
			}
			res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.userID, As: tt.as, Content: "hello"})
			if tt.want == "" {
				if !errors.Is(err, domain.ErrInvalidInput) {
					t.Fatalf("err %v, want invalid input", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err %q does not say %q", err, w)
					}
				}
				if js := b.allJobs(); len(js) != 0 {
					t.Fatalf("a refused post queued %d jobs", len(js))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
			if err != nil || p.AuthorURI != "https://local.example/users/"+tt.want {
				t.Fatalf("post by %q (%v), want %s", p.AuthorURI, err, tt.want)
			}
		})
	}
}

// An account with no persona gets a clear refusal, never another
// account's persona.
func TestPublishWithoutAsNeedsAPersonaOfTheAccount(t *testing.T) {
	t.Parallel()
	b := setupFed(t)
	_, err := b.app.Publish.Handle(context.Background(), application.Publish{UserID: "someone-else", Content: "hello"})
	if !errors.Is(err, domain.ErrInvalidInput) || !strings.Contains(err.Error(), "no persona") {
		t.Fatalf("err %v, want invalid input saying the account has no persona", err)
	}
}
