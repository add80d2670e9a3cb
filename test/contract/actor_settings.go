package contract

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// otherKeys is a second valid key pair, distinct from Keys, for rotations.
var otherKeys = domain.KeyPair{
	PublicPEM:  "-----BEGIN PUBLIC KEY-----\nMIIC\n-----END PUBLIC KEY-----\n",
	PrivatePEM: "-----BEGIN PRIVATE KEY-----\nMIIF\n-----END PRIVATE KEY-----\n",
}

// ActorSettings runs the contract of the settings a persona's or group's
// owner changes after creation (ports.ActorStore's SetAvatarLocked,
// SetGroupLocked, SetAvatarProfile, SetAvatarKeys, SetGroupKeys): whether
// it approves its followers by hand, a persona's display name and bio,
// and its key pair.
func ActorSettings(t *testing.T, newStore func(t *testing.T) ports.ActorStore, opts ...Option) {
	runCases(t, newStore, opts, []testCase[ports.ActorStore]{
		{"LockedKeptAtCreation", func(t *testing.T, s ports.ActorStore) {
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a1", RootUserID: "u1", Name: "alice", Keys: Keys, CreatedAt: base, Locked: true}), "locked avatar")
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a2", RootUserID: "u1", Name: "bob", Keys: Keys, CreatedAt: base}), "open avatar")
			mustNil(t, s.CreateGroup(ctx(t), domain.Group{ID: "g1", OwnerID: "u1", Name: "club", Keys: Keys, CreatedAt: base, Locked: true}), "locked group")
			mustNil(t, s.CreateGroup(ctx(t), domain.Group{ID: "g2", OwnerID: "u1", Name: "open", Keys: Keys, CreatedAt: base}), "open group")
			for name, want := range map[string]bool{"alice": true, "bob": false} {
				a, err := s.AvatarByName(ctx(t), name)
				mustNil(t, err, name)
				if a.Locked != want {
					t.Fatalf("%s locked %v, want %v", name, a.Locked, want)
				}
			}
			if a, _ := s.AvatarByID(ctx(t), "a1"); !a.Locked {
				t.Fatal("by id: alice not locked")
			}
			if mine, _ := s.AvatarsOf(ctx(t), "u1"); len(mine) != 2 || !mine[0].Locked || mine[1].Locked {
				t.Fatalf("avatars of u1: %+v", mine)
			}
			for name, want := range map[string]bool{"club": true, "open": false} {
				g, err := s.GroupByName(ctx(t), name)
				mustNil(t, err, name)
				if g.Locked != want {
					t.Fatalf("group %s locked %v, want %v", name, g.Locked, want)
				}
			}
			if g, _ := s.GroupByID(ctx(t), "g1"); !g.Locked {
				t.Fatal("by id: club not locked")
			}
		}},
		{"SetLocked", func(t *testing.T, s ports.ActorStore) {
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a1", RootUserID: "u1", Name: "alice", Keys: Keys, CreatedAt: base}), "avatar")
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a2", RootUserID: "u1", Name: "bob", Keys: Keys, CreatedAt: base}), "avatar")
			mustNil(t, s.CreateGroup(ctx(t), domain.Group{ID: "g1", OwnerID: "u1", Name: "club", Keys: Keys, CreatedAt: base}), "group")
			mustNil(t, s.SetAvatarLocked(ctx(t), "a1", true), "lock alice")
			mustNil(t, s.SetGroupLocked(ctx(t), "g1", true), "lock club")
			a, _ := s.AvatarByID(ctx(t), "a1")
			b, _ := s.AvatarByID(ctx(t), "a2")
			g, _ := s.GroupByID(ctx(t), "g1")
			if !a.Locked || b.Locked || !g.Locked {
				t.Fatalf("after locking alice and club: alice %v, bob %v, club %v", a.Locked, b.Locked, g.Locked)
			}
			if a.Keys != Keys || a.Name != "alice" || a.RootUserID != "u1" {
				t.Fatalf("locking changed more: %+v", a)
			}
			mustNil(t, s.SetAvatarLocked(ctx(t), "a1", true), "lock twice")
			mustNil(t, s.SetAvatarLocked(ctx(t), "a1", false), "unlock alice")
			mustNil(t, s.SetGroupLocked(ctx(t), "g1", false), "unlock club")
			a, _ = s.AvatarByName(ctx(t), "alice")
			g, _ = s.GroupByName(ctx(t), "club")
			if a.Locked || g.Locked {
				t.Fatalf("after unlocking: alice %v, club %v", a.Locked, g.Locked)
			}
			mustIs(t, s.SetAvatarLocked(ctx(t), "nobody", true), domain.ErrNotFound, "unknown avatar")
			mustIs(t, s.SetGroupLocked(ctx(t), "nobody", true), domain.ErrNotFound, "unknown group")
			mustIs(t, s.SetAvatarLocked(ctx(t), "g1", true), domain.ErrNotFound, "a group is not an avatar")
			mustIs(t, s.SetGroupLocked(ctx(t), "a1", true), domain.ErrNotFound, "an avatar is not a group")
		}},
		{"SetProfile", func(t *testing.T, s ports.ActorStore) {
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a1", RootUserID: "u1", Name: "alice", Keys: Keys, CreatedAt: base, Locked: true,
				DisplayName: "Alice", Note: "first bio"}), "avatar")
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a2", RootUserID: "u1", Name: "bob", Keys: Keys, CreatedAt: base}), "avatar")
			if a, _ := s.AvatarByName(ctx(t), "alice"); a.DisplayName != "Alice" || a.Note != "first bio" {
				t.Fatalf("kept at creation: %q %q", a.DisplayName, a.Note)
			}
			// Plain text as written: markup, newlines and non-ASCII kept.
			const note = "<b>not bold</b> & line one\nline two ✨"
			mustNil(t, s.SetAvatarProfile(ctx(t), "a1", "Alice ✨", note), "set alice's profile")
			for what, get := range map[string]func() (domain.Avatar, error){
				"by id":   func() (domain.Avatar, error) { return s.AvatarByID(ctx(t), "a1") },
				"by name": func() (domain.Avatar, error) { return s.AvatarByName(ctx(t), "alice") },
				"of u1": func() (domain.Avatar, error) {
					mine, err := s.AvatarsOf(ctx(t), "u1")
					if err != nil || len(mine) != 2 {
						return domain.Avatar{}, err
					}
					return mine[0], nil
				},
			} {
				a, err := get()
				mustNil(t, err, what)
				if a.DisplayName != "Alice ✨" || a.Note != note {
					t.Fatalf("%s after SetAvatarProfile: %q %q", what, a.DisplayName, a.Note)
				}
				if !a.Locked || a.Keys != Keys || a.Name != "alice" {
					t.Fatalf("%s: the profile changed more: %+v", what, a)
				}
			}
			if b, _ := s.AvatarByID(ctx(t), "a2"); b.DisplayName != "" || b.Note != "" {
				t.Fatalf("bob changed with alice: %q %q", b.DisplayName, b.Note)
			}
			mustNil(t, s.SetAvatarProfile(ctx(t), "a1", "", ""), "clear alice's profile")
			if a, _ := s.AvatarByID(ctx(t), "a1"); a.DisplayName != "" || a.Note != "" {
				t.Fatalf("after clearing: %q %q", a.DisplayName, a.Note)
			}
			mustIs(t, s.SetAvatarProfile(ctx(t), "nobody", "x", "y"), domain.ErrNotFound, "unknown avatar")
		}},
		{"SetKeys", func(t *testing.T, s ports.ActorStore) {
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a1", RootUserID: "u1", Name: "alice", Keys: Keys, CreatedAt: base, Locked: true}), "avatar")
			mustNil(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a2", RootUserID: "u1", Name: "bob", Keys: Keys, CreatedAt: base}), "avatar")
			mustNil(t, s.CreateGroup(ctx(t), domain.Group{ID: "g1", OwnerID: "u1", Name: "club", Keys: Keys, CreatedAt: base}), "group")
			if a, _ := s.AvatarByID(ctx(t), "a1"); a.PreviousKeys != (domain.KeyPair{}) || !a.KeysRotatedAt.IsZero() {
				t.Fatalf("a fresh avatar has a previous key: %+v at %v", a.PreviousKeys, a.KeysRotatedAt)
			}
			at := base.Add(time.Hour)
			mustNil(t, s.SetAvatarKeys(ctx(t), "a1", otherKeys, at), "rotate alice")
			mustNil(t, s.SetGroupKeys(ctx(t), "g1", otherKeys, at), "rotate club")
			a, _ := s.AvatarByID(ctx(t), "a1")
			byName, _ := s.AvatarByName(ctx(t), "alice")
			b, _ := s.AvatarByID(ctx(t), "a2")
			g, _ := s.GroupByName(ctx(t), "club")
			for what, got := range map[string]struct {
				keys, prev domain.KeyPair
				at         time.Time
			}{"alice": {a.Keys, a.PreviousKeys, a.KeysRotatedAt}, "alice by name": {byName.Keys, byName.PreviousKeys, byName.KeysRotatedAt},
				"club": {g.Keys, g.PreviousKeys, g.KeysRotatedAt}} {
				if got.keys != otherKeys || got.prev != Keys || !got.at.Equal(at) {
					t.Fatalf("%s after a rotation: new %v, previous %v, at %v (want %v)", what, got.keys == otherKeys, got.prev == Keys, got.at, at)
				}
			}
			if b.Keys != Keys || b.PreviousKeys != (domain.KeyPair{}) {
				t.Fatal("bob's keys changed with alice's")
			}
			if !a.Locked || a.Name != "alice" {
				t.Fatalf("a rotation changed more: %+v", a)
			}
			// A second rotation: the pair of the first becomes the previous.
			third := domain.KeyPair{PublicPEM: "-----BEGIN PUBLIC KEY-----\nMIID\n-----END PUBLIC KEY-----\n", PrivatePEM: "-----BEGIN PRIVATE KEY-----\nMIIG\n-----END PRIVATE KEY-----\n"}
			mustNil(t, s.SetAvatarKeys(ctx(t), "a1", third, at.Add(time.Hour)), "rotate alice again")
			if a, _ := s.AvatarByID(ctx(t), "a1"); a.Keys != third || a.PreviousKeys != otherKeys || !a.KeysRotatedAt.Equal(at.Add(time.Hour)) {
				t.Fatalf("alice after a second rotation: %+v", a)
			}
			mustIs(t, s.SetAvatarKeys(ctx(t), "nobody", otherKeys, at), domain.ErrNotFound, "unknown avatar")
			mustIs(t, s.SetGroupKeys(ctx(t), "nobody", otherKeys, at), domain.ErrNotFound, "unknown group")
		}},
	})
}
