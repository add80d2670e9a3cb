package contract

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// Keys is a syntactically valid key pair for stores that do not parse keys.
var Keys = domain.KeyPair{
	PublicPEM:  "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n",
	PrivatePEM: "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
}

// UserStore runs the contract of ports.UserStore.
func UserStore(t *testing.T, newStore func(t *testing.T) ports.UserStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewUsers)
	runCases(t, newStore, opts, []testCase[ports.UserStore]{
		{"CreateFindDelete", func(t *testing.T, s ports.UserStore) {
			u := domain.RootUser{ID: "u1", UserName: "alice", PasswordHash: "$2a$hash", CreatedAt: base}
			mustNil(t, s.CreateUser(ctx(t), u), "create")
			byName, err := s.UserByName(ctx(t), "alice")
			mustNil(t, err, "by name")
			byID, err := s.UserByID(ctx(t), "u1")
			mustNil(t, err, "by id")
			for _, got := range []domain.RootUser{byName, byID} {
				if got.ID != "u1" || got.UserName != "alice" || got.PasswordHash != "$2a$hash" {
					t.Fatalf("got %+v", got)
				}
				sameTime(t, got.CreatedAt, base, "createdAt")
			}
			mustIs(t, s.CreateUser(ctx(t), domain.RootUser{ID: "u2", UserName: "alice", CreatedAt: base}), domain.ErrNameTaken, "duplicate user name")
			_, err = s.UserByName(ctx(t), "bob")
			mustIs(t, err, domain.ErrNotFound, "unknown name")
			mustNil(t, s.DeleteUser(ctx(t), "u1"), "delete")
			_, err = s.UserByID(ctx(t), "u1")
			mustIs(t, err, domain.ErrNotFound, "deleted")
			mustIs(t, s.DeleteUser(ctx(t), "u1"), domain.ErrNotFound, "delete twice")
			mustNil(t, s.CreateUser(ctx(t), domain.RootUser{ID: "u3", UserName: "alice", CreatedAt: base}), "name free after delete")
		}},
		{"StatusesStoredAndListedOldestFirst", func(t *testing.T, s ports.UserStore) {
			for _, u := range []domain.RootUser{
				{ID: "u1", UserName: "ann", CreatedAt: base.Add(2 * time.Hour)}, // no status: active
				{ID: "u2", UserName: "bob", CreatedAt: base, Status: domain.UserPending, Reason: "I run a choir"},
				{ID: "u3", UserName: "cat", CreatedAt: base.Add(time.Hour), Status: domain.UserActive},
				{ID: "u4", UserName: "dan", CreatedAt: base.Add(-time.Hour), Status: domain.UserPending},
				{ID: "u0", UserName: "eve", CreatedAt: base, Status: domain.UserPending}, // same time as bob: by id
				{ID: "u5", UserName: "fay", Status: domain.UserPending},                  // no time: the oldest
			} {
				mustNil(t, s.CreateUser(ctx(t), u), "create "+u.UserName)
			}
			user := func(id string) domain.RootUser {
				t.Helper()
				u, err := s.UserByID(ctx(t), id)
				mustNil(t, err, "user "+id)
				return u
			}
			if u := user("u1"); u.Status != domain.UserActive || u.Reason != "" || !u.Active() {
				t.Fatalf("a user created without a status: %+v, want active", u)
			}
			if u, err := s.UserByName(ctx(t), "bob"); err != nil || u.Status != domain.UserPending || u.Reason != "I run a choir" || u.Active() {
				t.Fatalf("a pending sign-up read back as %+v (%v)", u, err)
			}
			list := func(st domain.UserStatus, limit int) string {
				t.Helper()
				us, err := s.UsersByStatus(ctx(t), st, limit)
				mustNil(t, err, "users by status "+string(st))
				ids := make([]string, len(us))
				for i, u := range us {
					if u.Status != st {
						t.Fatalf("%s listed as %s: %+v", u.ID, st, u)
					}
					ids[i] = u.ID
				}
				return fmt.Sprint(ids)
			}
			if got := list(domain.UserPending, 0); got != "[u5 u4 u0 u2]" {
				t.Fatalf("pending %s, want [u5 u4 u0 u2] (oldest first, then by id)", got)
			}
			if got := list(domain.UserPending, 2); got != "[u5 u4]" {
				t.Fatalf("the first 2 pending: %s", got)
			}
			if got := list(domain.UserActive, 0); got != "[u3 u1]" {
				t.Fatalf("active %s, want [u3 u1]", got)
			}
			// Approving bob: active, his reason kept, listed as active in
			// his place.
			mustNil(t, s.SetUserStatus(ctx(t), "u2", domain.UserActive), "approve")
			if u := user("u2"); u.Status != domain.UserActive || u.Reason != "I run a choir" {
				t.Fatalf("approved %+v", u)
			}
			if got := list(domain.UserActive, 0); got != "[u2 u3 u1]" {
				t.Fatalf("active after approval %s, want [u2 u3 u1]", got)
			}
			mustNil(t, s.SetUserStatus(ctx(t), "u3", domain.UserPending), "back to pending")
			mustNil(t, s.DeleteUser(ctx(t), "u4"), "reject dan")
			if got := list(domain.UserPending, 0); got != "[u5 u0 u3]" {
				t.Fatalf("pending after the changes %s, want [u5 u0 u3]", got)
			}
			mustIs(t, s.SetUserStatus(ctx(t), "nobody", domain.UserActive), domain.ErrNotFound, "status of no user")
			mustIs(t, s.SetUserStatus(ctx(t), "u1", "banned"), domain.ErrInvalidInput, "an unknown status")
			_, err := s.UsersByStatus(ctx(t), "", 0)
			mustIs(t, err, domain.ErrInvalidInput, "list an empty status")
			mustIs(t, s.CreateUser(ctx(t), domain.RootUser{ID: "u9", UserName: "gus", CreatedAt: base, Status: "banned"}),
				domain.ErrInvalidInput, "create with an unknown status")
			_, err = s.UserByName(ctx(t), "gus")
			mustIs(t, err, domain.ErrNotFound, "a user refused for its status")
			if u := user("u1"); u.Status != domain.UserActive {
				t.Fatalf("a refused change moved u1 to %q", u.Status)
			}
		}},
	})
}

// TokenStore runs the contract of ports.TokenStore.
func TokenStore(t *testing.T, newStore func(t *testing.T) ports.TokenStore, opts ...Option) {
	runCases(t, newStore, opts, []testCase[ports.TokenStore]{
		{"CreateFindRevoke", func(t *testing.T, s ports.TokenStore) {
			tok := domain.Token{Hash: "abc123", UserID: "u1", CreatedAt: base}
			mustNil(t, s.CreateToken(ctx(t), tok), "create")
			got, err := s.TokenByHash(ctx(t), "abc123")
			mustNil(t, err, "find")
			if got.UserID != "u1" {
				t.Fatalf("got %+v", got)
			}
			mustIs(t, s.CreateToken(ctx(t), tok), domain.ErrAlreadyExists, "duplicate hash")
			mustNil(t, s.RevokeToken(ctx(t), "abc123"), "revoke")
			_, err = s.TokenByHash(ctx(t), "abc123")
			mustIs(t, err, domain.ErrNotFound, "revoked")
			mustIs(t, s.RevokeToken(ctx(t), "abc123"), domain.ErrNotFound, "revoke twice")
		}},
	})
}

// ActorStore runs the contract of ports.ActorStore.
func ActorStore(t *testing.T, newStore func(t *testing.T) ports.ActorStore, opts ...Option) {
	runCases(t, newStore, opts, append([]testCase[ports.ActorStore]{
		{"Avatars", func(t *testing.T, s ports.ActorStore) {
			for _, a := range []domain.Avatar{
				{ID: "a2", RootUserID: "u1", Name: "zed", Keys: Keys, CreatedAt: base},
				{ID: "a1", RootUserID: "u1", Name: "alice", DisplayName: "Alice", Keys: Keys, CreatedAt: base},
				{ID: "a3", RootUserID: "u2", Name: "bob", Keys: Keys, CreatedAt: base},
				{ID: "inst", Name: "instance", Keys: Keys, CreatedAt: base},
			} {
				mustNil(t, s.CreateAvatar(ctx(t), a), "create "+a.Name)
			}
			got, err := s.AvatarByName(ctx(t), "alice")
			mustNil(t, err, "by name")
			if got.ID != "a1" || got.DisplayName != "Alice" || got.Keys != Keys || got.RootUserID != "u1" {
				t.Fatalf("got %+v", got)
			}
			if got, err := s.AvatarByID(ctx(t), "inst"); err != nil || got.RootUserID != "" {
				t.Fatalf("instance actor %+v %v", got, err)
			}
			mine, err := s.AvatarsOf(ctx(t), "u1")
			mustNil(t, err, "avatars of")
			if len(mine) != 2 || mine[0].Name != "alice" || mine[1].Name != "zed" {
				t.Fatalf("avatars of u1: %+v", mine)
			}
			if none, _ := s.AvatarsOf(ctx(t), ""); len(none) != 0 {
				t.Fatalf("ownerless avatars listed as someone's: %+v", none)
			}
			mustIs(t, s.CreateAvatar(ctx(t), domain.Avatar{ID: "a1", RootUserID: "u9", Name: "other", Keys: Keys}), domain.ErrAlreadyExists, "duplicate id")
			mustNil(t, s.DeleteAvatar(ctx(t), "a2"), "delete")
			_, err = s.AvatarByID(ctx(t), "a2")
			mustIs(t, err, domain.ErrNotFound, "deleted")
			mustIs(t, s.DeleteAvatar(ctx(t), "a2"), domain.ErrNotFound, "delete twice")
			_, err = s.AvatarByName(ctx(t), "nobody")
			mustIs(t, err, domain.ErrNotFound, "unknown")
		}},
		{"ActivityCountsPersonas", func(t *testing.T, s ports.ActorStore) {
			day := 24 * time.Hour
			for _, a := range []domain.Avatar{
				{ID: "a1", RootUserID: "u1", Name: "alice", Keys: Keys, CreatedAt: base},
				{ID: "a2", RootUserID: "u1", Name: "alt", Keys: Keys, CreatedAt: base},
				{ID: "a3", RootUserID: "u2", Name: "bob", Keys: Keys, CreatedAt: base},
				{ID: "a4", RootUserID: "u3", Name: "carol", Keys: Keys, CreatedAt: base},
				{ID: "inst", Name: "instance", Keys: Keys, CreatedAt: base},
			} {
				mustNil(t, s.CreateAvatar(ctx(t), a), "create "+a.Name)
			}
			mustNil(t, s.CreateGroup(ctx(t), domain.Group{ID: "g1", OwnerID: "u1", Name: "club", Keys: Keys, CreatedAt: base}), "group")
			count := func(since time.Time) int {
				t.Helper()
				n, err := s.CountPersonas(ctx(t), since)
				mustNil(t, err, "count")
				return n
			}
			if n := count(time.Time{}); n != 4 {
				t.Fatalf("%d personas, want 4 (neither the instance actor nor the group)", n)
			}
			if n := count(base.Add(-365 * day)); n != 0 {
				t.Fatalf("%d active before any activity, want 0", n)
			}
			// alice and alt signed in 10 days ago, bob 100 days ago; carol
			// never. A touch of the instance actor or an unknown id counts
			// nobody; an older touch never moves the activity back.
			mustNil(t, s.TouchAvatars(ctx(t), []string{"a1", "a2"}, base.Add(-10*day)), "touch")
			mustNil(t, s.TouchAvatars(ctx(t), []string{"a3", "inst", "nobody"}, base.Add(-100*day)), "touch")
			mustNil(t, s.TouchAvatars(ctx(t), []string{"a1"}, base.Add(-200*day)), "older touch")
			mustNil(t, s.TouchAvatars(ctx(t), nil, base), "touch nobody")
			month, halfYear := base.Add(-30*day), base.Add(-180*day)
			if m, h := count(month), count(halfYear); m != 2 || h != 3 {
				t.Fatalf("active: month %d, half year %d; want 2 and 3", m, h)
			}
			// The bound is inclusive: active exactly at it counts.
			mustNil(t, s.TouchAvatars(ctx(t), []string{"a4"}, month), "touch at the bound")
			if m := count(month); m != 3 {
				t.Fatalf("active in the month with carol at its bound: %d, want 3", m)
			}
			if n := count(base.Add(-9 * day)); n != 0 {
				t.Fatalf("%d active in the last 9 days, want 0", n)
			}
			mustNil(t, s.DeleteAvatar(ctx(t), "a1"), "delete")
			if m, all := count(month), count(time.Time{}); m != 2 || all != 3 {
				t.Fatalf("after deleting alice: month %d, all %d; want 2 and 3", m, all)
			}
		}},
		{"Groups", func(t *testing.T, s ports.ActorStore) {
			mustNil(t, s.CreateGroup(ctx(t), domain.Group{ID: "g1", OwnerID: "u1", Name: "club", Keys: Keys, CreatedAt: base}), "create")
			got, err := s.GroupByName(ctx(t), "club")
			mustNil(t, err, "by name")
			if got.ID != "g1" || got.OwnerID != "u1" || got.Keys != Keys {
				t.Fatalf("got %+v", got)
			}
			if _, err := s.GroupByID(ctx(t), "g1"); err != nil {
				t.Fatal(err)
			}
			_, err = s.AvatarByName(ctx(t), "club")
			mustIs(t, err, domain.ErrNotFound, "a group is not an avatar")
			mustNil(t, s.DeleteGroup(ctx(t), "g1"), "delete")
			_, err = s.GroupByID(ctx(t), "g1")
			mustIs(t, err, domain.ErrNotFound, "deleted")
		}},
	}, retiredAvatarCases()...))
}
