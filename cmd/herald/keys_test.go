package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
)

// TestKeysRotateCommand: `herald keys rotate NAME` gives one actor a new
// key pair, --all every persona and group (names reserved without an
// actor are passed over); an unknown name fails, and the command wants a
// name or --all, not both.
func TestKeysRotateCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"HERALD_DATA_DIR": filepath.Join(dir, "data"), "HERALD_LOG_LEVEL": "warn"}
	expect := func(want int, says string, args ...string) result {
		t.Helper()
		r := herald(t, env, args...)
		if r.code != want || !strings.Contains(r.stdout+r.stderr, says) {
			t.Fatalf("herald %s: exit %d\nstdout %s\nstderr %s\nwant %d saying %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, want, says)
		}
		return r
	}
	expect(0, "up to date", "migrate", "up")

	ctx := context.Background()
	cfg, err := bootstrap.LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stores, closeStores, err := bootstrap.OpenStoresForCLI(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStores()
	keys := func() domain.KeyPair {
		k, err := security.RSAKeys{}.GenerateKeyPair()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	for _, a := range []domain.Avatar{{ID: "a1", RootUserID: "u1", Name: "alice", Keys: keys(), CreatedAt: now}, {ID: "a2", RootUserID: "u1", Name: "bob", Keys: keys(), CreatedAt: now}} {
		rn, _ := domain.NewReservedName(a.Name, domain.NameKindPersona, a.ID, now)
		if err := stores.Names.Reserve(ctx, rn); err != nil {
			t.Fatal(err)
		}
		if err := stores.Actors.CreateAvatar(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	g := domain.Group{ID: "g1", OwnerID: "u1", Name: "club", Keys: keys(), CreatedAt: now}
	rn, _ := domain.NewReservedName(g.Name, domain.NameKindGroup, g.ID, now)
	if err := stores.Names.Reserve(ctx, rn); err != nil {
		t.Fatal(err)
	}
	if err := stores.Actors.CreateGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	keyOf := func(name string) string {
		t.Helper()
		if a, err := stores.Actors.AvatarByName(ctx, name); err == nil {
			return a.Keys.PublicPEM
		}
		g, err := stores.Actors.GroupByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return g.Keys.PublicPEM
	}
	before := map[string]string{"alice": keyOf("alice"), "bob": keyOf("bob"), "club": keyOf("club")}

	expect(0, "users/alice#main-key", "keys", "rotate", "alice")
	if keyOf("alice") == before["alice"] || keyOf("bob") != before["bob"] {
		t.Fatal("rotating alice did not change alice's key alone")
	}
	expect(exitUsage, "name one actor, or pass --all", "keys", "rotate")
	expect(exitUsage, "name one actor, or pass --all", "keys", "rotate", "alice", "--all")
	expect(exitFail, "nobody", "keys", "rotate", "nobody")
	mid := keyOf("alice")
	expect(0, "3 keys rotated", "keys", "rotate", "--all")
	if keyOf("alice") == mid || keyOf("bob") == before["bob"] || keyOf("club") == before["club"] {
		t.Fatal("--all left a key as it was")
	}
}
