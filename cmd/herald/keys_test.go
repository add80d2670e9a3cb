package main

import (
	"context"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
)

// TestKeysRotateCommand: `herald keys rotate NAME` gives one actor a new
// key pair, --all every persona and group (names reserved without an
// actor are passed over); an unknown name fails, and the command wants a
// name or --all, not both.
func TestKeysRotateCommand(t *testing.T) {
	t.Parallel()
	_, expect, stores := migratedSQLite(t, t.TempDir())
	ctx := context.Background()
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
