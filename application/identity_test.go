package application_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
	"github.com/heraldfed/herald/test/fake"
)

type appBundle struct {
	app      *application.Application
	deps     application.Deps
	accounts *memory.AccountStore
	names    *memory.NameRegistry
	jobs     *memory.JobStore
	follows  *memory.FollowerStore
	content  *memory.ContentStore
	keys     *fake.Keys
}

// failingActors makes CreateAvatar and CreateGroup fail after the name was
// reserved, to prove the reservation is released.
type failingActors struct {
	ports.ActorStore
}

func (failingActors) CreateAvatar(context.Context, domain.Avatar) error { return fake.ErrInjected }
func (failingActors) CreateGroup(context.Context, domain.Group) error   { return fake.ErrInjected }

func newApp(t *testing.T, mutate ...func(*application.Deps)) *appBundle {
	t.Helper()
	b := &appBundle{
		accounts: memory.NewAccountStore(), names: memory.NewNameRegistry(), jobs: memory.NewJobStore(),
		follows: memory.NewFollowerStore(), content: memory.NewContentStore(), keys: &fake.Keys{},
	}
	b.deps = application.Deps{
		Users: b.accounts, Tokens: b.accounts, Actors: b.accounts, Names: b.names, Followers: b.follows,
		Foreign: b.content, Posts: b.content, HTML: sanitizer.NewHTMLSanitizer(), Jobs: b.jobs, Passwords: fake.Passwords{}, Keys: b.keys,
		Clock: fake.NewClock(t0), IDs: fake.NewIDs("id"),
	}
	for _, m := range mutate {
		m(&b.deps)
	}
	policy, err := domain.NewNamePolicy("herald", []string{"ops"})
	if err != nil {
		t.Fatal(err)
	}
	b.deps.NamePolicy, b.deps.InstanceActor, b.deps.URLs = policy, "herald", application.NewURLs("local.example")
	b.app = application.New(b.deps)
	return b
}

// signUp signs name up with the password the tests use.
func signUp(t *testing.T, h application.SignUpHandler, name string) application.Session {
	t.Helper()
	s, err := h.Handle(context.Background(), application.SignUp{UserName: name, Password: "correct horse"})
	if err != nil {
		t.Fatalf("sign up %s: %v", name, err)
	}
	return s
}

// publish publishes cmd; it must succeed.
func publish(t *testing.T, h application.PublishHandler, cmd application.Publish) application.Published {
	t.Helper()
	res, err := h.Handle(context.Background(), cmd)
	if err != nil {
		t.Fatalf("publish as %s: %v", cmd.As, err)
	}
	return res
}

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
			s, err := b.app.SignUp.Handle(context.Background(), application.SignUp{UserName: tt.user, Password: tt.pw})
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
			rn, err := b.names.Get(context.Background(), "alice")
			if err != nil || rn.Kind != domain.NameKindPersona || rn.OwnerID != s.Avatar.ID {
				t.Fatalf("reservation %+v %v", rn, err)
			}
			u, err := b.app.Authenticate.Handle(context.Background(), s.Token)
			if err != nil || u.ID != s.User.ID {
				t.Fatalf("token does not authenticate: %v", err)
			}
		})
	}
}

func TestSignUpNameTakenByPersonaOrGroup(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
	s := signUp(t, b.app.SignUp, "alice")
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
			_, err := b.app.SignUp.Handle(context.Background(), application.SignUp{UserName: "popular", Password: "correct horse"})
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
	avatars, _ := b.names.List(context.Background(), domain.NameKindPersona)
	if len(avatars) != 1 {
		t.Fatalf("%d reservations", len(avatars))
	}
}

func TestFailedSaveReleasesTheName(t *testing.T) {
	t.Parallel()
	b := newApp(t, func(d *application.Deps) { d.Actors = failingActors{d.Actors} })
	ctx := context.Background()
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

func TestLogin(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
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

func TestInstanceActorAndSystemNames(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
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

func TestPublishFansOutToFollowerInboxes(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
	s := signUp(t, b.app.SignUp, "alice")
	alice := b.app.URLs.Persona("alice")
	// 2,500 followers on 90 servers, a third of them with a shared inbox.
	want := seedFollowers(t, b, alice, 2500)
	pending, _ := domain.NewFollower("https://p.example/users/p", alice, "", domain.FollowPending, t0)
	_, _ = b.follows.Add(ctx, pending)

	res := publish(t, b.app.Publish, application.Publish{UserID: s.User.ID, As: "alice", Content: "hello fediverse", Visibility: domain.VisibilityPublic})
	wantInboxes := len(want) // one shared inbox per sharing server (30), one per actor elsewhere (1,660)
	if res.Inboxes != wantInboxes || res.Queued != wantInboxes || res.AlreadyQueued != 0 {
		t.Fatalf("published %+v, want %d inboxes", res, wantInboxes)
	}
	c, _ := b.jobs.Counts(ctx)
	if c[domain.JobQueued] != wantInboxes {
		t.Fatalf("queued %d", c[domain.JobQueued])
	}
	p, err := b.content.PostByObjectURI(ctx, res.ObjectURI)
	if err != nil || p.AuthorURI != alice || !p.Local {
		t.Fatalf("post %+v %v", p, err)
	}
	jobs, _ := b.jobs.List(ctx, ports.JobFilter{Host: "r000.example"})
	if len(jobs) != 1 || jobs[0].Inbox != "https://r000.example/inbox" || jobs[0].ActivityID != res.ActivityID ||
		jobs[0].SenderID != s.Avatar.ID || jobs[0].KeyID != alice+"#main-key" || !strings.Contains(string(jobs[0].Payload), `"type":"Create"`) {
		t.Fatalf("shared-inbox job %+v", jobs)
	}
}

func TestPublishChecksOwnershipAndInput(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
	a := signUp(t, b.app.SignUp, "alice")
	m := signUp(t, b.app.SignUp, "mallory")
	tests := []struct {
		name string
		cmd  application.Publish
		want error
	}{
		{"someone else's persona", application.Publish{UserID: m.User.ID, As: "alice", Content: "x"}, domain.ErrForbidden},
		{"unknown persona", application.Publish{UserID: a.User.ID, As: "nobody", Content: "x"}, domain.ErrInvalidInput},
		{"empty content", application.Publish{UserID: a.User.ID, As: "alice", Content: " "}, domain.ErrInvalidInput},
		{"bad visibility", application.Publish{UserID: a.User.ID, As: "alice", Content: "x", Visibility: "secret"}, domain.ErrInvalidInput},
		{"direct without recipients", application.Publish{UserID: a.User.ID, As: "alice", Content: "x", Visibility: domain.VisibilityDirect}, domain.ErrInvalidInput},
		{"direct to an unknown actor", application.Publish{UserID: a.User.ID, As: "alice", Content: "x", Visibility: domain.VisibilityDirect, To: []string{"https://r.example/users/ghost"}}, domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := b.app.Publish.Handle(ctx, tt.cmd); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if posts, _ := b.content.PostsByAuthor(ctx, b.app.URLs.Persona("alice"), t0.AddDate(1, 0, 0), 10); len(posts) != 0 {
		t.Fatalf("a refused publish stored %d posts", len(posts))
	}
}

func TestPublishDirect(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
	a := signUp(t, b.app.SignUp, "alice")
	bob := domain.ForeignAvatar{ActorURI: "https://r.example/users/bob", Inbox: "https://r.example/users/bob/inbox", SharedInbox: "https://r.example/inbox"}
	_ = b.content.Upsert(ctx, bob)
	res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: a.User.ID, As: "alice", Content: "psst", Visibility: domain.VisibilityDirect, To: []string{bob.ActorURI}})
	if err != nil || res.Queued != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	dm, err := b.content.DmByObjectURI(ctx, res.ObjectURI)
	if err != nil || dm.ParticipantsKey != domain.ParticipantsKey([]string{bob.ActorURI, b.app.URLs.Persona("alice")}) {
		t.Fatalf("dm %+v %v", dm, err)
	}
	jobs, _ := b.jobs.List(ctx, ports.JobFilter{})
	if len(jobs) != 1 || jobs[0].Inbox != "https://r.example/inbox" || strings.Contains(string(jobs[0].Payload), "#Public") {
		t.Fatalf("dm job %+v", jobs)
	}
}

// A note carries a Mention per addressed remote actor, direct or public:
// GoToSocial drops a status that neither comes from someone its account
// follows nor mentions it, even after answering 202.
func TestPublishMentionsItsRecipients(t *testing.T) {
	t.Parallel()
	for _, vis := range []domain.Visibility{domain.VisibilityDirect, domain.VisibilityPublic} {
		t.Run(string(vis), func(t *testing.T) {
			t.Parallel()
			b := newApp(t)
			ctx := context.Background()
			a := signUp(t, b.app.SignUp, "alice")
			bob := domain.ForeignAvatar{ActorURI: "https://r.example/users/bob", Inbox: "https://r.example/users/bob/inbox", PreferredUsername: "bob", Host: "r.example"}
			cat := domain.ForeignAvatar{ActorURI: "https://s.example/users/cat", Inbox: "https://s.example/users/cat/inbox", PreferredUsername: "cat", Host: "s.example"}
			_ = b.content.Upsert(ctx, bob)
			_ = b.content.Upsert(ctx, cat)
			res, err := b.app.Publish.Handle(ctx, application.Publish{UserID: a.User.ID, As: "alice", Content: "hi", Visibility: vis,
				To: []string{bob.ActorURI, cat.ActorURI, bob.ActorURI}})
			if err != nil || res.Queued != 2 {
				t.Fatalf("%+v %v", res, err)
			}
			jobs, _ := b.jobs.List(ctx, ports.JobFilter{})
			for _, j := range jobs {
				var act struct {
					Object struct {
						Tag []application.Tag `json:"tag"`
					} `json:"object"`
				}
				if err := json.Unmarshal(j.Payload, &act); err != nil {
					t.Fatal(err)
				}
				want := []application.Tag{{Type: "Mention", Href: bob.ActorURI, Name: "@bob@r.example"}, {Type: "Mention", Href: cat.ActorURI, Name: "@cat@s.example"}}
				if !slices.Equal(act.Object.Tag, want) {
					t.Fatalf("tags %+v, want %+v", act.Object.Tag, want)
				}
			}
		})
	}
}

func TestEnqueueReportsAlreadyQueued(t *testing.T) {
	t.Parallel()
	jobs := memory.NewJobStore()
	h := application.NewEnqueueHandler(jobs, nil)
	j, _ := domain.NewJob(contract.JobID("j1"), "https://l/a/1", "https://r/inbox", "s", "k", []byte("{}"), t0)
	if r, err := h.Handle(context.Background(), []domain.Job{j}); err != nil || r.Queued != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	j.ID = contract.JobID("j2")
	if r, err := h.Handle(context.Background(), []domain.Job{j}); err != nil || r.Queued != 0 || r.AlreadyQueued != 1 {
		t.Fatalf("%+v %v", r, err)
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
	if err := names.Reserve(context.Background(), rn); err != nil {
		t.Fatal(err)
	}
}

func TestInstanceActorTakesOverASeededSystemName(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
	reserve(t, b.names, "herald", domain.NameKindSystem, "")
	a, err := b.app.InstanceActor.Handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rn, _ := b.names.Get(ctx, "herald")
	if rn.Kind != domain.NameKindInstance || rn.OwnerID != a.ID {
		t.Fatalf("reservation %+v", rn)
	}
}

func TestInstanceActorRefusesAPersonasName(t *testing.T) {
	t.Parallel()
	b := newApp(t)
	ctx := context.Background()
	reserve(t, b.names, "herald", domain.NameKindPersona, "someone")
	if _, err := b.app.InstanceActor.Handle(ctx); err == nil {
		t.Fatal("took a persona's name")
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
			a, err := b.app.InstanceActor.Handle(context.Background())
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
