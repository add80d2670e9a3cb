package contract

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The store side of deleting a persona (SPEC §3, §11): its name stays
// reserved for good, its avatar is retired (gone for lookups, its key kept
// for the deliveries of its Delete) until it is removed, and whom it
// follows can be read to tell their servers.

// deletedNameCases extend the NameRegistry suite.
func deletedNameCases() []testCase[ports.NameRegistry] {
	return []testCase[ports.NameRegistry]{
		{"DeletedNameStaysReservedForGood", func(t *testing.T, r ports.NameRegistry) {
			mustNil(t, r.Reserve(ctx(t), reserved(t, "carol", domain.NameKindPersona, "av1")), "reserve")
			mustIs(t, r.MarkDeleted(ctx(t), "carol", "intruder", base), domain.ErrNotFound, "mark by another owner")
			mustIs(t, r.MarkDeleted(ctx(t), "nobody", "av1", base), domain.ErrNotFound, "mark an unknown name")
			if got, _ := r.Get(ctx(t), "carol"); got.Deleted() {
				t.Fatalf("marked by the wrong owner: %+v", got)
			}
			deleted := base.Add(time.Hour)
			mustNil(t, r.MarkDeleted(ctx(t), "carol", "av1", deleted), "mark")
			mustNil(t, r.MarkDeleted(ctx(t), "carol", "av1", deleted.Add(time.Hour)), "mark again")
			got, err := r.Get(ctx(t), "carol")
			mustNil(t, err, "get")
			if got.Kind != domain.NameKindPersona || got.OwnerID != "av1" || !got.Deleted() {
				t.Fatalf("got %+v", got)
			}
			sameTime(t, got.DeletedAt, deleted, "deletedAt (the first mark stands)")
			// Taken for every kind and every owner, and never released.
			mustIs(t, r.Reserve(ctx(t), reserved(t, "carol", domain.NameKindPersona, "av2")), domain.ErrNameTaken, "a new persona")
			mustIs(t, r.Reserve(ctx(t), reserved(t, "carol", domain.NameKindGroup, "g1")), domain.ErrNameTaken, "a group")
			mustIs(t, r.Release(ctx(t), "carol", "av1"), domain.ErrNotFound, "release by its owner")
			mustIs(t, r.Release(ctx(t), "carol", ""), domain.ErrNotFound, "release as a system name")
			if _, err := r.Get(ctx(t), "carol"); err != nil {
				t.Fatalf("the deleted name was released: %v", err)
			}
			mustNil(t, r.Reserve(ctx(t), reserved(t, "dan", domain.NameKindPersona, "av3")), "a live one")
			all, err := r.List(ctx(t), domain.NameKindPersona)
			mustNil(t, err, "list")
			if len(all) != 2 || all[0].Name != "carol" || !all[0].Deleted() || all[1].Name != "dan" || all[1].Deleted() {
				t.Fatalf("list %+v", all)
			}
			sameTime(t, all[0].DeletedAt, deleted, "listed deletedAt")
		}},
	}
}

// retiredAvatarCases extend the ActorStore suite.
func retiredAvatarCases() []testCase[ports.ActorStore] {
	return []testCase[ports.ActorStore]{
		{"RetiredAvatarKeepsOnlyItsKey", func(t *testing.T, s ports.ActorStore) {
			for _, a := range []domain.Avatar{
				{ID: "a1", RootUserID: "u1", Name: "alice", Keys: Keys, CreatedAt: base},
				{ID: "a2", RootUserID: "u1", Name: "carol", Keys: Keys, CreatedAt: base},
				{ID: "a3", RootUserID: "u2", Name: "dan", Keys: Keys, CreatedAt: base},
			} {
				mustNil(t, s.CreateAvatar(ctx(t), a), "create "+a.Name)
			}
			mustNil(t, s.TouchAvatars(ctx(t), []string{"a1", "a2", "a3"}, base), "touch")
			mustIs(t, s.RetireAvatar(ctx(t), "nobody", base), domain.ErrNotFound, "retire an unknown avatar")
			at := base.Add(time.Hour)
			mustNil(t, s.RetireAvatar(ctx(t), "a2", at), "retire")
			mustNil(t, s.RetireAvatar(ctx(t), "a2", at.Add(time.Hour)), "retire again")

			_, err := s.AvatarByName(ctx(t), "carol")
			mustIs(t, err, domain.ErrNotFound, "a retired avatar by name")
			mine, err := s.AvatarsOf(ctx(t), "u1")
			mustNil(t, err, "avatars of")
			if len(mine) != 1 || mine[0].Name != "alice" {
				t.Fatalf("avatars of u1 %+v, want alice alone", mine)
			}
			mustNil(t, s.TouchAvatars(ctx(t), []string{"a2"}, base.Add(48*time.Hour)), "touch the retired one")
			for _, since := range []time.Time{{}, base, base.Add(24 * time.Hour)} {
				n, err := s.CountPersonas(ctx(t), since)
				mustNil(t, err, "count")
				if want := map[bool]int{true: 2, false: 0}[!since.After(base)]; n != want {
					t.Fatalf("%d personas active since %v, want %d (the retired one never counts)", n, since, want)
				}
			}
			got, err := s.AvatarByID(ctx(t), "a2")
			mustNil(t, err, "a retired avatar by id")
			if got.Name != "carol" || got.Keys != Keys || got.RootUserID != "u1" {
				t.Fatalf("retired avatar %+v", got)
			}
			sameTime(t, got.DeletedAt, at, "deletedAt (the first retirement stands)")
			if live, _ := s.AvatarByID(ctx(t), "a1"); !live.DeletedAt.IsZero() {
				t.Fatalf("a live avatar reads as deleted: %+v", live)
			}

			mustNil(t, s.RetireAvatar(ctx(t), "a3", base.Add(30*time.Minute)), "retire dan")
			retired, err := s.RetiredAvatars(ctx(t), "", 10)
			mustNil(t, err, "retired")
			if names := avatarNames(retired); !slices.Equal(names, []string{"carol", "dan"}) {
				t.Fatalf("retired %v, want [carol dan] (by id)", names)
			}
			if retired[0].Keys != Keys || !retired[0].DeletedAt.Equal(at) {
				t.Fatalf("retired avatar listed without its key or deletion: %+v", retired[0])
			}
			if one, _ := s.RetiredAvatars(ctx(t), "", 1); len(one) != 1 || one[0].Name != "carol" {
				t.Fatalf("limit 1: %v", avatarNames(one))
			}
			if next, _ := s.RetiredAvatars(ctx(t), "a2", 10); !slices.Equal(avatarNames(next), []string{"dan"}) {
				t.Fatalf("after a2: %v, want [dan]", avatarNames(next))
			}
			mustNil(t, s.DeleteAvatar(ctx(t), "a2"), "remove")
			_, err = s.AvatarByID(ctx(t), "a2")
			mustIs(t, err, domain.ErrNotFound, "removed")
			if left, _ := s.RetiredAvatars(ctx(t), "", 10); !slices.Equal(avatarNames(left), []string{"dan"}) {
				t.Fatalf("retired after removal %v", avatarNames(left))
			}
		}},
	}
}

func avatarNames(as []domain.Avatar) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

// followedCases extend the FollowerStore suite.
func followedCases() []testCase[ports.FollowerStore] {
	const carol = "https://local.example/users/carol"
	return []testCase[ports.FollowerStore]{
		{"FollowedURIsPages", func(t *testing.T, s ports.FollowerStore) {
			for _, f := range []domain.Follower{
				follow(t, carol, "https://r.example/u/c", domain.FollowAccepted),
				follow(t, carol, "https://r.example/u/a", domain.FollowPending),
				follow(t, carol, "https://s.example/u/b", domain.FollowAccepted),
				// Not whom carol follows: her follower, and another's follow.
				follow(t, "https://r.example/u/z", carol, domain.FollowAccepted),
				follow(t, "https://local.example/users/dan", "https://r.example/u/d", domain.FollowAccepted),
			} {
				_, err := s.Add(ctx(t), f)
				mustNil(t, err, "add")
			}
			var all []string
			after := ""
			for range 5 {
				page, err := s.FollowedURIs(ctx(t), carol, after, 2)
				mustNil(t, err, "followed")
				if len(page) > 2 {
					t.Fatalf("page of %d over the limit 2", len(page))
				}
				all = append(all, page...)
				if len(page) < 2 {
					break
				}
				after = page[len(page)-1]
			}
			if want := []string{"https://r.example/u/a", "https://r.example/u/c", "https://s.example/u/b"}; !slices.Equal(all, want) {
				t.Fatalf("followed %v, want %v", all, want)
			}
			if none, err := s.FollowedURIs(ctx(t), "https://local.example/users/nobody", "", 10); err != nil || len(none) != 0 {
				t.Fatalf("followed by nobody: %v %v", none, err)
			}
		}},
	}
}
