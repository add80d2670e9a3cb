package application_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/fake"
)

// failingActors makes CreateAvatar and CreateGroup fail after the name was
// reserved, to prove the reservation is released.
type failingActors struct {
	ports.ActorStore
}

func (failingActors) CreateAvatar(context.Context, domain.Avatar) error { return fake.ErrInjected }
func (failingActors) CreateGroup(context.Context, domain.Group) error   { return fake.ErrInjected }

func TestSignUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		user, pw string
		wantErr  error
	}{
		{"ok", "Alice", "correct horse", nil},
		{"invalid name", "al ice", "correct horse", domain.ErrInvalidName},
		{"too long", strings.Repeat("a", 31), "correct horse", domain.ErrInvalidName},
		{"fixed reserved name", "admin", "correct horse", domain.ErrNameTaken},
		{"instance actor's name", "Herald", "correct horse", domain.ErrNameTaken},
		{"operator's reserved name", "ops", "correct horse", domain.ErrNameTaken},
		{"short password", "alice", "short", domain.ErrInvalidInput},
		{"password over 72 bytes", "alice", strings.Repeat("p", 73), domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newApp(t)
			s, err := b.app.SignUp.Handle(t.Context(), application.SignUp{UserName: tt.user, Password: tt.pw})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if b.keys.Calls() != 0 {
					t.Fatal("a key pair was made for a refused sign-up")
				}
				return
			}
			if s.Token == "" || s.User.UserName != "alice" || s.Avatar.Name != "alice" || s.Avatar.RootUserID != s.User.ID {
				t.Fatalf("session %+v", s)
			}
			rn, err := b.names.Get(t.Context(), "alice")
			if err != nil || rn.Kind != domain.NameKindPersona || rn.OwnerID != s.Avatar.ID {
				t.Fatalf("reservation %+v %v", rn, err)
			}
			u, err := b.app.Authenticate.Handle(t.Context(), s.Token)
			if err != nil || u.ID != s.User.ID {
				t.Fatalf("token does not authenticate: %v", err)
			}
		})
	}
}

func TestSignUpNameTakenByPersonaOrGroup(t *testing.T) {
	t.Parallel()
	b, s := newAppWithAccount(t, "alice")
	ctx := t.Context()
	if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "ALICE", Password: "correct horse"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("second sign-up: %v", err)
	}
	if _, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: s.User.ID, Name: "alice"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("group with a persona's name: %v", err)
	}
	g, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: s.User.ID, Name: "Club"})
	if err != nil || g.Name != "club" {
		t.Fatalf("group: %+v %v", g, err)
	}
	if _, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: s.User.ID, Name: "club"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("persona with a group's name: %v", err)
	}
	if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "club", Password: "correct horse"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("sign-up with a group's name: %v", err)
	}
	p, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: s.User.ID, Name: "alice_work"})
	if err != nil || p.RootUserID != s.User.ID {
		t.Fatalf("second persona: %+v %v", p, err)
	}
	mine, _ := b.accounts.AvatarsOf(ctx, s.User.ID)
	if len(mine) != 2 {
		t.Fatalf("personas %d", len(mine))
	}
}

func TestSignUpRaceHasOneWinner(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	const n = 64
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, taken := 0, 0
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := b.app.SignUp.Handle(t.Context(), application.SignUp{UserName: "popular", Password: "correct horse"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, domain.ErrNameTaken):
				taken++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 || taken != n-1 {
		t.Fatalf("%d winners, %d taken", wins, taken)
	}
	avatars, _ := b.names.List(t.Context(), domain.NameKindPersona)
	if len(avatars) != 1 {
		t.Fatalf("%d reservations", len(avatars))
	}
}

func TestFailedSaveReleasesTheName(t *testing.T) {
	t.Parallel()
	b := newApp(t, func(d *application.Deps) { d.Actors = failingActors{d.Actors} })
	ctx := t.Context()
	if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse"}); !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("sign-up: %v", err)
	}
	if _, err := b.names.Get(ctx, "alice"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("name still reserved after a failed sign-up: %v", err)
	}
	if _, err := b.accounts.UserByName(ctx, "alice"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("half-made account left behind: %v", err)
	}
	// A group save failing also releases.
	if err := b.accounts.CreateUser(ctx, domain.RootUser{ID: "u1", UserName: "owner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: "u1", Name: "club"}); !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("group: %v", err)
	}
	if _, err := b.names.Get(ctx, "club"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("group name still reserved: %v", err)
	}
}

// registrations sets the instance's registration mode.
func registrations(m domain.RegistrationMode) func(*application.Deps) {
	return func(d *application.Deps) { d.Registrations = m }
}

func TestSignUpRegistrationModes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

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

func TestLogin(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := t.Context()
	if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	s, err := b.app.Login.Handle(ctx, application.Login{UserName: "Alice", Password: "correct horse"})
	if err != nil || s.Token == "" {
		t.Fatalf("login: %v", err)
	}
	for _, bad := range []application.Login{{"alice", "wrong horse"}, {"bob", "correct horse"}, {"not a name", "x"}} {
		if _, err := b.app.Login.Handle(ctx, bad); !errors.Is(err, domain.ErrUnauthorized) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := b.app.Authenticate.Handle(ctx, "forged"); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("forged token: %v", err)
	}
}

func TestRevokeSession(t *testing.T) {
	t.Parallel()
	b, s := newAppWithAccount(t, "alice")
	ctx := t.Context()
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

func TestInstanceActorAndSystemNames(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := t.Context()
	a, err := b.app.InstanceActor.Handle(ctx)
	if err != nil || a.Name != "herald" || a.RootUserID != "" {
		t.Fatalf("instance actor %+v %v", a, err)
	}
	again, err := b.app.InstanceActor.Handle(ctx)
	if err != nil || again.ID != a.ID {
		t.Fatalf("second start made another actor: %+v %v", again, err)
	}
	rn, _ := b.names.Get(ctx, "herald")
	if rn.Kind != domain.NameKindInstance {
		t.Fatalf("instance reservation %+v", rn)
	}
	sys, _ := b.names.List(ctx, domain.NameKindSystem)
	if len(sys) < len(domain.FixedReservedNames())-1 { // "no-reply" is not a valid name, so it has no row
		t.Fatalf("%d system names", len(sys))
	}
	for _, n := range []string{"admin", "ops", "www"} {
		if r, err := b.names.Get(ctx, n); err != nil || r.Kind != domain.NameKindSystem {
			t.Errorf("%s: %+v %v", n, r, err)
		}
	}
}

// reserve holds name for an owner of that kind in names, as if taken
// before the test.
func reserve(t *testing.T, names ports.NameRegistry, name string, kind domain.NameKind, owner string) {
	t.Helper()
	rn, err := domain.NewReservedName(name, kind, owner, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := names.Reserve(t.Context(), rn); err != nil {
		t.Fatal(err)
	}
}

// The instance actor takes its name over from a system reservation seeded
// before it started, never from a persona.
func TestInstanceActorAndANameReservedBefore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		kind  domain.NameKind
		owner string
		taken bool
	}{
		{"TakesOverASeededSystemName", domain.NameKindSystem, "", true},
		{"RefusesAPersonasName", domain.NameKindPersona, "someone", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newApp(t)
			ctx := t.Context()
			reserve(t, b.names, "herald", tt.kind, tt.owner)
			a, err := b.app.InstanceActor.Handle(ctx)
			if !tt.taken {
				if err == nil {
					t.Fatal("took a persona's name")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rn, _ := b.names.Get(ctx, "herald")
			if rn.Kind != domain.NameKindInstance || rn.OwnerID != a.ID {
				t.Fatalf("reservation %+v", rn)
			}
		})
	}
}

func TestInstanceActorConcurrentStarts(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a, err := b.app.InstanceActor.Handle(t.Context())
			if err != nil {
				t.Error(err)
			}
			ids[i] = a.ID
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("different instance actors: %v", ids)
		}
	}
}
