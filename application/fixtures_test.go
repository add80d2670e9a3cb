package application_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/fake"
)

// The fixtures the use cases' tests share: newApp's application alone,
// setupFed's with an account "alice", a group "club", remote actors to
// meet and the stores and fakes behind them.

const (
	local  = "https://local.example"
	alice  = local + "/users/alice"
	club   = local + "/groups/club"
	bob    = "https://remote.example/users/bob"
	carol  = "https://remote.example/users/carol"
	dave   = "https://other.example/users/dave"
	shared = "https://remote.example/inbox"
)

// t0 is the fake clock's start in the use cases' tests.
var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// docFetcher serves documents from a map; unknown URLs are 404. A URL in
// redirects answers with the document of the URL it names (as a server
// redirecting there would), and types overrides the application/activity+json
// every answer has.
type docFetcher struct {
	mu        sync.Mutex
	docs      map[string][]byte
	errs      map[string]error
	redirects map[string]string
	types     map[string]string
	calls     []application.FetchRequest
}

func (f *docFetcher) Fetch(_ context.Context, r application.FetchRequest) (application.Fetched, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answered := r.URL
	for hops := 0; ; hops++ {
		if r.CheckHost != nil {
			if err := r.CheckHost(hostOf(answered)); err != nil {
				return application.Fetched{}, err
			}
		}
		if hops == 0 {
			f.calls = append(f.calls, r)
		}
		if f.redirects[answered] == "" {
			break
		}
		if hops == 3 {
			return application.Fetched{}, fmt.Errorf("%w: too many redirects", domain.ErrForbidden)
		}
		answered = f.redirects[answered]
	}
	if err := f.errs[answered]; err != nil {
		return application.Fetched{}, err
	}
	if d, ok := f.docs[answered]; ok {
		ct := application.ActivityJSON
		if t, ok := f.types[answered]; ok {
			ct = t
		}
		return application.Fetched{Body: d, URL: answered, ContentType: ct}, nil
	}
	return application.Fetched{}, fmt.Errorf("%w: %s", domain.ErrNotFound, r.URL)
}

func hostOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	return u.Host
}

func (f *docFetcher) set(url string, doc []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docs[url] = doc
}

func (f *docFetcher) count(url string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.URL == url {
			n++
		}
	}
	return n
}

// remoteActorDoc is a Mastodon-like actor document.
func remoteActorDoc(id, pemText string, sharedInbox string) []byte {
	doc := map[string]any{
		"@context": []string{application.ASContext}, "id": id, "type": "Person",
		"preferredUsername": id[strings.LastIndex(id, "/")+1:], "inbox": id + "/inbox",
		"publicKey": map[string]string{"id": id + "#main-key", "owner": id, "publicKeyPem": pemText},
	}
	if sharedInbox != "" {
		doc["endpoints"] = map[string]string{"sharedInbox": sharedInbox}
	}
	b, _ := json.Marshal(doc)
	return b
}

// failingJobs fails every Enqueue after the first `ok` calls.
// It records the size of every batch it was given.
type failingJobs struct {
	ports.JobStore
	mu      sync.Mutex
	ok      int
	batches []int
}

func (f *failingJobs) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	f.mu.Lock()
	allow := f.ok > 0
	f.ok--
	f.batches = append(f.batches, len(jobs))
	f.mu.Unlock()
	if !allow {
		return 0, fake.ErrInjected
	}
	return f.JobStore.Enqueue(ctx, jobs)
}

type fedBundle struct {
	t        *testing.T
	clock    *fake.Clock
	accounts *memory.AccountStore
	follows  *memory.FollowerStore
	// racing runs after an Add that found the pair stored (a concurrent
	// Undo, for instance), when set.
	racing  func()
	content *memory.ContentStore
	jobs    *memory.JobStore
	enqueue *failingJobs
	fetcher *docFetcher
	app     *application.Application
	fed     *application.Federation
	userID  string
	keys    [2]domain.KeyPair
	// replyTarget is a note of ours a test replies to.
	replyTarget string
	// mod is the federation policy, over modStore; reports keeps Flags.
	mod      *application.Moderation
	modStore ports.ModerationStore
	reports  ports.ReportStore
	// newKeys makes the key pairs of rotations; rotated records what the
	// engine was told of them.
	newKeys *seqKeys
	rotated *rotations
	blocks  *memory.BlockStore
	// notes are the personas' notifications.
	notes *memory.NotificationStore
}

func setupFed(t *testing.T) *fedBundle {
	t.Helper()
	return setupFedMode(t, domain.FederationBlocklist)
}

// setupFollowed is setupFed with alice followed by bob, his actor cached
// as once he followed: her posts go to him.
func setupFollowed(t *testing.T) *fedBundle {
	t.Helper()
	b := setupFed(t)
	b.accepted(bob, alice)
	b.signer(bob)
	return b
}

// setupFollowing is setupFed with alice following bob: his posts and
// activities are for her.
func setupFollowing(t *testing.T) *fedBundle {
	t.Helper()
	b := setupFed(t)
	b.accepted(alice, bob)
	return b
}

func setupFedMode(t *testing.T, mode domain.FederationMode) *fedBundle {
	t.Helper()
	ctx := t.Context()
	b := &fedBundle{
		t: t, clock: fake.NewClock(t0), accounts: memory.NewAccountStore(), follows: memory.NewFollowerStore(),
		content: memory.NewContentStore(), jobs: memory.NewJobStore(),
		fetcher: &docFetcher{docs: map[string][]byte{}, errs: map[string]error{}, redirects: map[string]string{}, types: map[string]string{}}, keys: realKeys(t),
		newKeys: &seqKeys{}, rotated: &rotations{}, notes: memory.NewNotificationStore(),
	}
	b.enqueue = &failingJobs{JobStore: b.jobs, ok: 1 << 30}
	b.modStore, b.reports, b.blocks = memory.NewModerationStore(), memory.NewReportStore(), memory.NewBlockStore()
	b.mod = application.NewModeration(application.ModerationDeps{Store: b.modStore, JobAdmin: b.jobs, Foreign: b.content,
		Followers: b.follows, Mode: mode, Clock: b.clock})
	names := memory.NewNameRegistry()
	urls := application.NewURLs("local.example")
	ids := fake.NewIDs("id")
	policy, _ := domain.NewNamePolicy("instance", nil)
	b.app = application.New(application.Deps{
		Users: b.accounts, Tokens: b.accounts, Actors: b.accounts, Names: names, Followers: racingFollowers{b.follows, b},
		Foreign: b.content, Posts: b.content, HTML: sanitizer.NewHTMLSanitizer(), Tombstones: b.content, Moderation: b.mod, Reports: b.reports,
		Blocks: b.blocks, Jobs: b.enqueue, Passwords: fake.Passwords{}, Keys: b.newKeys, KeyRotations: b.rotated, Notifications: b.notes,
		Fetcher: b.fetcher, Clock: b.clock, IDs: ids, URLs: urls, NamePolicy: policy, InstanceActor: "instance",
	})
	b.fed = &b.app.Federation
	if _, err := b.app.InstanceActor.Handle(ctx); err != nil {
		t.Fatal(err)
	}
	s := signUp(t, b.app.SignUp, "alice")
	b.userID = s.User.ID
	// An open group (Locked false): these tests follow it and expect the
	// follow accepted at once.
	if _, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: s.User.ID, Name: "club", Locked: new(bool)}); err != nil {
		t.Fatal(err)
	}
	for i, uri := range []string{bob, carol} {
		b.fetcher.set(uri, remoteActorDoc(uri, b.keys[i%2].PublicPEM, shared))
	}
	b.fetcher.set(dave, remoteActorDoc(dave, b.keys[1].PublicPEM, ""))
	return b
}

// signer caches a remote actor as the inbox adapter would have after
// verifying its signature.
func (b *fedBundle) signer(uri string) domain.ForeignAvatar {
	b.t.Helper()
	fa, err := b.fed.Resolver.Resolve(b.t.Context(), uri)
	if err != nil {
		b.t.Fatal(err)
	}
	return fa
}

// wantRefused resolves uri, which must be refused (domain.ErrForbidden)
// with nothing cached of actor.
func (b *fedBundle) wantRefused(uri, actor string) {
	b.t.Helper()
	if _, err := b.fed.Resolver.Resolve(b.t.Context(), uri); !errors.Is(err, domain.ErrForbidden) {
		b.t.Fatalf("resolve %s: %v, want ErrForbidden", uri, err)
	}
	if _, err := b.content.ByActorURI(b.t.Context(), actor); err == nil {
		b.t.Fatalf("%s cached from %s", actor, uri)
	}
}

// mustDeliver delivers an activity the inbox must take (neither an
// error nor ignored).
func mustDeliver(t *testing.T, b *fedBundle, actor, activity string) {
	t.Helper()
	if res, err := b.deliver("", actor, activity); err != nil || res.Ignored {
		t.Fatalf("%s: %+v %v", activity, res, err)
	}
}

// webfinger makes acct (user@host) name the actor uri, as its server's
// WebFinger answers.
func (b *fedBundle) webfinger(acct, uri string) {
	_, host, _ := strings.Cut(acct, "@")
	b.fetcher.set("https://"+host+"/.well-known/webfinger?"+url.Values{"resource": {"acct:" + acct}}.Encode(),
		[]byte(`{"subject":"acct:`+acct+`","links":[{"rel":"self","type":"application/activity+json","href":"`+uri+`"}]}`))
}

func (b *fedBundle) deliver(recipient, actor string, activity string) (application.InboxResult, error) {
	b.t.Helper()
	act, err := application.DecodeActivity([]byte(activity))
	if err != nil {
		b.t.Fatalf("decode %s: %v", activity, err)
	}
	return b.fed.Inbox.Handle(b.t.Context(), application.InboxRequest{Recipient: recipient, Signer: b.signer(actor), Activity: act})
}

func (b *fedBundle) allJobs() []domain.Job {
	b.t.Helper()
	js, err := b.jobs.List(b.t.Context(), ports.JobFilter{})
	if err != nil {
		b.t.Fatal(err)
	}
	return js
}

func (b *fedBundle) follower(follower, followed string) (domain.Follower, bool) {
	f, err := b.follows.Get(b.t.Context(), follower, followed)
	return f, err == nil
}

// wantFollows fails the test unless a follow of followed by follower, in
// any state, is stored exactly when want.
func (b *fedBundle) wantFollows(follower, followed string, want bool) {
	b.t.Helper()
	if _, ok := b.follower(follower, followed); ok != want {
		b.t.Fatalf("%s follows %s: %v, want %v", follower, followed, ok, want)
	}
}

func payload(t *testing.T, j domain.Job) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(j.Payload, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// racingFollowers lets a test act between an Add that found the pair and
// what the caller does next, as a concurrent request would.
type racingFollowers struct {
	*memory.FollowerStore
	b *fedBundle
}

func (r racingFollowers) Add(ctx context.Context, f domain.Follower) (bool, error) {
	created, err := r.FollowerStore.Add(ctx, f)
	if hook := r.b.racing; err == nil && !created && hook != nil {
		r.b.racing = nil
		hook()
	}
	return created, err
}

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

// newAppWithAccount is newApp with name signed up; it returns the session.
func newAppWithAccount(t *testing.T, name string) (*appBundle, application.Session) {
	t.Helper()
	b := newApp(t)
	return b, signUp(t, b.app.SignUp, name)
}

// signUp signs name up with the password the tests use.
func signUp(t *testing.T, h application.SignUpHandler, name string) application.Session {
	t.Helper()
	s, err := h.Handle(t.Context(), application.SignUp{UserName: name, Password: "correct horse"})
	if err != nil {
		t.Fatalf("sign up %s: %v", name, err)
	}
	return s
}

// publish publishes cmd; it must succeed.
func publish(t *testing.T, h application.PublishHandler, cmd application.Publish) application.Published {
	t.Helper()
	res, err := h.Handle(t.Context(), cmd)
	if err != nil {
		t.Fatalf("publish as %s: %v", cmd.As, err)
	}
	return res
}

var (
	pemOnce sync.Once
	pemKeys [2]domain.KeyPair
)

// realKeys are two real RSA key pairs, made once per test binary.
func realKeys(t testing.TB) [2]domain.KeyPair {
	t.Helper()
	pemOnce.Do(func() {
		for i := range pemKeys {
			kp, err := security.RSAKeys{}.GenerateKeyPair()
			if err != nil {
				panic(err)
			}
			pemKeys[i] = kp
		}
	})
	return pemKeys
}

// seqKeys makes a distinct key pair at each call, so a rotation shows.
type seqKeys struct{ n atomic.Int64 }

func (k *seqKeys) GenerateKeyPair() (domain.KeyPair, error) {
	n := k.n.Add(1)
	return domain.KeyPair{
		PublicPEM:  fmt.Sprintf("-----BEGIN PUBLIC KEY-----\nrotated%d\n-----END PUBLIC KEY-----\n", n),
		PrivatePEM: fmt.Sprintf("-----BEGIN PRIVATE KEY-----\nrotated%d\n-----END PRIVATE KEY-----\n", n),
	}, nil
}

// rotations records the actor ids the engine was told of.
type rotations struct {
	mu  sync.Mutex
	ids []string
}

func (r *rotations) KeyRotated(id string) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}

func (r *rotations) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

func (b *fedBundle) accepted(follower, followed string) {
	b.t.Helper()
	f, err := domain.NewFollower(follower, followed, follower+"/activities/f", domain.FollowAccepted, b.clock.Now())
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.follows.Add(b.t.Context(), f); err != nil {
		b.t.Fatal(err)
	}
}

// persona makes another persona of the bundle's user and returns its
// actor id.
func (b *fedBundle) persona(name string) string {
	b.t.Helper()
	if _, err := b.app.CreatePersona.Handle(b.t.Context(), application.CreatePersona{UserID: b.userID, Name: name}); err != nil {
		b.t.Fatal(err)
	}
	return local + "/users/" + name
}
