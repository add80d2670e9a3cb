package migrationtest

import "time"

// CachedActor is one row of the remote-actor cache as a test seeds it
// before the migration that makes a key id unique (SQLite 011, PostgreSQL
// 020, Mongo 006), and whether that migration keeps it.
type CachedActor struct {
	ActorURI, KeyID string
	FetchedAt       time.Duration // after the test's base time
	Kept            bool
}

// KeyOwnerCache is a cache that violates one owner per key id in every way
// the migrations clean up, the same for every store: claims of a key on
// another host go first (even the newest copy), then of the copies left
// sharing a key id the most recently fetched stays (a tie goes to the
// greatest actor URI); hosts are compared in lower case, port included,
// userinfo left out, and an actor without a key id claims nothing.
var KeyOwnerCache = []CachedActor{
	{"https://r.example/users/bob", "https://r.example/users/bob#main-key", 0, true},
	// Newer than bob's copy, but a claim of r.example's key from elsewhere.
	{"https://evil.example/users/mallory", "https://r.example/users/bob#main-key", 2 * time.Hour, false},
	{"https://Ports.Example:8443/users/p", "https://ports.example:8443/users/p#key", 0, true},
	{"https://ports.example/users/q", "https://ports.example:8443/users/q#key", 0, false},
	{"https://u.example/users/u", "https://someone@U.example/users/u#key", 0, true},
	{"https://frag.example", "https://frag.example#main-key", 0, true},
	{"https://query.example?actor=1", "https://query.example?key=1", 0, true},
	{"https://n.example/users/n", "n.example/users/n#key", 0, false},
	{"https://d.example/users/a", "https://d.example/shared#key", 0, false},
	{"https://d.example/users/b", "https://d.example/shared#key", time.Hour, false},
	{"https://d.example/users/c", "https://d.example/shared#key", time.Hour, true},
	{"https://d.example/users/z", "https://d.example/users/z#key", -time.Hour, true},
	{"https://e.example/users/e1", "", 0, true},
	{"https://e.example/users/e2", "", time.Hour, true},
}

// KeptActors lists the actor URIs of KeyOwnerCache the migration keeps.
func KeptActors() []string {
	var out []string
	for _, a := range KeyOwnerCache {
		if a.Kept {
			out = append(out, a.ActorURI)
		}
	}
	return out
}
