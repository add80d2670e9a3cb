package hostile_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	pgx "github.com/jackc/pgx/v5"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/heraldtest"
)

// The stores every attack is made against. Mongo runs when MONGODB_URI is
// set (.ci/run sets it to FerretDB v2) and skips, saying what stays
// unverified, when it is not.
var stores = []string{bootstrap.StoreMemory, bootstrap.StoreSQLite, bootstrap.StorePostgres, bootstrap.StoreMongo}

// storesFlag narrows a run to some stores: go test ./test/hostile -args
// -stores=mongo (or memory,postgres).
var storesFlag = flag.String("stores", "", "comma-separated stores to attack (default: "+strings.Join(stores, ",")+")")

// selectedStores are the stores this run attacks.
func selectedStores() []string {
	if *storesFlag == "" {
		return stores
	}
	var out []string
	for _, s := range strings.Split(*storesFlag, ",") {
		if s = strings.TrimSpace(s); slices.Contains(stores, s) {
			out = append(out, s)
		}
	}
	return out
}

// Heralds running at once, per store: PostgreSQL gives each one a pool of
// its own (100 connections on the server, shared with the other suites),
// and FerretDB keeps both cores busy with one Herald (see test/proof).
var running = map[string]chan struct{}{
	bootstrap.StoreMemory:   make(chan struct{}, 6),
	bootstrap.StoreSQLite:   make(chan struct{}, 4),
	bootstrap.StorePostgres: make(chan struct{}, 4),
	bootstrap.StoreMongo:    make(chan struct{}, 1),
}

// eachStore runs the attack once per store, as parallel subtests named for
// the store. rule says what stays unverified on a store that cannot run.
func eachStore(t *testing.T, rule string, attack func(t *testing.T, h *herald)) {
	t.Helper()
	eachStoreWith(t, rule, nil, attack)
}

// eachStoreWith is eachStore with more settings for the Herald.
func eachStoreWith(t *testing.T, rule string, settings map[string]string, attack func(t *testing.T, h *herald)) {
	t.Helper()
	for _, store := range selectedStores() {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			env := storeEnv(t, store, rule)
			if env == nil {
				env = map[string]string{}
			}
			for k, v := range settings {
				env[k] = v
			}
			sem := running[store]
			sem <- struct{}{}
			t.Cleanup(func() { <-sem })
			attack(t, startHerald(t, store, env))
		})
	}
}

// Generous inbox limits for every test but the one that floods: once the
// rate limit of SPEC §10 exists, no other attack may meet it by accident.
// (Before it exists, bootstrap reads neither variable.)
var roomyInbox = map[string]string{"HERALD_INBOX_RATE_PER_MINUTE": "1000", "HERALD_INBOX_BURST": "1000"}

// storeEnv is the configuration of a fresh, empty store of that kind of
// the test's own, or a skip naming what stays unverified.
func storeEnv(t *testing.T, store, rule string) map[string]string {
	t.Helper()
	switch store {
	case bootstrap.StoreSQLite:
		return map[string]string{"HERALD_DATA_DIR": t.TempDir()}
	case bootstrap.StorePostgres:
		return map[string]string{"DATABASE_URL": pgSchema(t, rule)}
	case bootstrap.StoreMongo:
		return map[string]string{"MONGODB_URI": mongoURI(t, rule), "HERALD_MONGO_DATABASE": mongoDatabase(t)}
	}
	return nil
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// pgSchema makes an empty schema and returns a DATABASE_URL whose
// connections use it (dropped when the test ends).
func pgSchema(t *testing.T, rule string) string {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Skipf("UNVERIFIED on PostgreSQL: no server at DATABASE_URL (%v): %s", err, rule)
	}
	defer conn.Close(context.Background())
	name := randomName("herald_hostile_")
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, base); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
			_ = c.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	q.Set("pool_max_conns", "4")
	u.RawQuery = q.Encode()
	return u.String()
}

func mongoURI(t *testing.T, rule string) string {
	t.Helper()
	uri := os.Getenv("MONGODB_URI")
	if uri == "" {
		t.Skipf("UNVERIFIED on Mongo: MONGODB_URI is unset (.ci/run sets it to FerretDB v2): %s", rule)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongo.Connect(ctx, uri)
	if err != nil {
		t.Skipf("UNVERIFIED on Mongo: no server answers at MONGODB_URI (%v): %s", err, rule)
	}
	_ = c.Disconnect(ctx)
	return uri
}

// mongoDatabase names a database of the test's own, dropped when it ends.
func mongoDatabase(t *testing.T) string {
	name := randomName("herald_hostile_")
	uri := os.Getenv("MONGODB_URI")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := mongo.Connect(ctx, uri); err == nil {
			_ = c.Database(name).Drop(ctx)
			_ = c.Disconnect(ctx)
		}
	})
	return name
}

// herald is one Herald wired by bootstrap, as `herald serve` wires it,
// listening on a loopback port that is also its HERALD_DOMAIN.
type herald struct {
	t      *testing.T
	store  string
	base   string // http://127.0.0.1:port
	domain string
	srv    *bootstrap.Server
}

// startHerald runs a Herald (heraldtest.Start) on the store; env adds to
// (or overrides) the defaults, roomyInbox among them.
func startHerald(t *testing.T, store string, env map[string]string) *herald {
	t.Helper()
	vars := map[string]string{
		"HERALD_ALLOW_PRIVATE_TARGETS": "true", "HERALD_STORE": store,
		"HERALD_BCRYPT_COST": "4", "HERALD_SHUTDOWN_GRACE": "2s", "HERALD_LOG_LEVEL": "debug",
		"HERALD_AUTH_RATE_PER_MINUTE": "1000", "HERALD_AUTH_BURST": "1000", "HERALD_DELIVERY_TIMEOUT": "5s",
		"HERALD_ADMIN_TOKEN": adminToken,
	}
	for k, v := range roomyInbox {
		vars[k] = v
	}
	for k, v := range env {
		vars[k] = v
	}
	s := heraldtest.Start(t, "herald", vars)
	return &herald{t: t, store: store, base: s.Base, domain: s.Addr, srv: s.Srv}
}

// call sends a client API request (JSON in, JSON out).
func (h *herald) call(method, path, token string, in any) (int, map[string]any) {
	h.t.Helper()
	status, body := h.raw(method, path, token, in, "")
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	return status, out
}

// raw sends a request and returns the status and the body as read.
func (h *herald) raw(method, path, token string, in any, accept string) (int, []byte) {
	h.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.base+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return resp.StatusCode, out
}

// signUp creates an account (and its persona of that name): the token.
func (h *herald) signUp(name string) string {
	h.t.Helper()
	status, out := h.call(http.MethodPost, "/api/v1/accounts", "", map[string]string{"username": name, "password": "correct horse"})
	if status != http.StatusCreated {
		h.t.Fatalf("sign-up %s: %d %v", name, status, out)
	}
	return out["token"].(string)
}

func (h *herald) group(token, name string) string {
	h.t.Helper()
	if status, out := h.call(http.MethodPost, "/api/v1/groups", token, map[string]any{"name": name, "locked": false}); status != http.StatusCreated {
		h.t.Fatalf("group %s: %d %v", name, status, out)
	}
	return h.base + "/groups/" + name
}

func (h *herald) persona(name string) string { return h.base + "/users/" + name }

// inboxOf is the personal inbox of a local actor URI.
func inboxOf(actorURI string) string { return actorURI + "/inbox" }

// foreign is Herald's cached copy of a remote actor, if any.
func (h *herald) foreign(actorURI string) (domain.ForeignAvatar, bool) {
	h.t.Helper()
	fa, err := h.srv.Stores().Foreign.ByActorURI(context.Background(), actorURI)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ForeignAvatar{}, false
	}
	if err != nil {
		h.t.Fatalf("reading cached actor %s: %v", actorURI, err)
	}
	return fa, true
}

// foreignByKey is the cached actor whose key has this id, if any.
func (h *herald) foreignByKey(keyID string) (domain.ForeignAvatar, bool) {
	h.t.Helper()
	fa, err := h.srv.Stores().Foreign.ByKeyID(context.Background(), keyID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ForeignAvatar{}, false
	}
	if err != nil {
		h.t.Fatalf("reading cached key %s: %v", keyID, err)
	}
	return fa, true
}

// stored reports whether Herald holds a post or a direct post of that
// object URI.
func (h *herald) stored(objectURI string) bool {
	h.t.Helper()
	ctx := context.Background()
	posts := h.srv.Stores().Posts
	_, err := posts.PostByObjectURI(ctx, objectURI)
	if err == nil {
		return true
	}
	if !errors.Is(err, domain.ErrNotFound) {
		h.t.Fatalf("reading post %s: %v", objectURI, err)
	}
	_, err = posts.DmByObjectURI(ctx, objectURI)
	if err == nil {
		return true
	}
	if !errors.Is(err, domain.ErrNotFound) {
		h.t.Fatalf("reading direct post %s: %v", objectURI, err)
	}
	return false
}

// content is the stored content of a post, "" when there is none.
func (h *herald) content(objectURI string) string {
	h.t.Helper()
	p, err := h.srv.Stores().Posts.PostByObjectURI(context.Background(), objectURI)
	if err != nil {
		return ""
	}
	return p.Content
}

// followState is the state of a follow, "" when there is none.
func (h *herald) followState(follower, followed string) domain.FollowState {
	h.t.Helper()
	f, err := h.srv.Stores().Followers.Get(context.Background(), follower, followed)
	if errors.Is(err, domain.ErrNotFound) {
		return ""
	}
	if err != nil {
		h.t.Fatalf("reading follow %s -> %s: %v", follower, followed, err)
	}
	return f.State
}

// postsBy lists ?author= through the client API: posts and boosts.
func (h *herald) postsBy(token, author string) []map[string]any {
	h.t.Helper()
	status, out := h.call(http.MethodGet, "/api/v1/posts?limit=100&author="+url.QueryEscape(author), token, nil)
	if status != http.StatusOK {
		h.t.Fatalf("posts by %s: %d %v", author, status, out)
	}
	var posts []map[string]any
	for _, p := range asSlice(out["posts"]) {
		if m, ok := p.(map[string]any); ok {
			posts = append(posts, m)
		}
	}
	return posts
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// eventually waits, boundedly, until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
