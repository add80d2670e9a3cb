package contract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// ForeignActorStore runs the contract of ports.ForeignActorStore.
func ForeignActorStore(t *testing.T, newStore func(t *testing.T) ports.ForeignActorStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewForeign)
	bob := domain.ForeignAvatar{
		ActorURI: "https://r.example/users/bob", PublicKeyID: "https://r.example/users/bob#main-key",
		PublicKeyPEM: Keys.PublicPEM, Inbox: "https://r.example/users/bob/inbox", SharedInbox: "https://r.example/inbox",
		PreferredUsername: "bob", Host: "r.example", FetchedAt: base,
	}
	runCases(t, newStore, opts, []testCase[ports.ForeignActorStore]{
		{"UpsertAndFind", func(t *testing.T, s ports.ForeignActorStore) {
			mustNil(t, s.Upsert(ctx(t), bob), "upsert")
			nameless := bob
			nameless.ActorURI = ""
			mustIs(t, s.Upsert(ctx(t), nameless), domain.ErrInvalidInput, "an actor without URI")
			byURI, err := s.ByActorURI(ctx(t), bob.ActorURI)
			mustNil(t, err, "by uri")
			byKey, err := s.ByKeyID(ctx(t), bob.PublicKeyID)
			mustNil(t, err, "by key")
			for _, got := range []domain.ForeignAvatar{byURI, byKey} {
				if got.ActorURI != bob.ActorURI || got.Inbox != bob.Inbox || got.SharedInbox != bob.SharedInbox ||
					got.PublicKeyPEM != bob.PublicKeyPEM || got.PreferredUsername != "bob" || got.Host != "r.example" {
					t.Fatalf("got %+v", got)
				}
				sameTime(t, got.FetchedAt, base, "fetchedAt")
			}
			_, err = s.ByKeyID(ctx(t), "https://r.example/users/bob#other-key")
			mustIs(t, err, domain.ErrNotFound, "unknown key")
		}},
		{"UpsertReplacesOnRotation", func(t *testing.T, s ports.ForeignActorStore) {
			mustNil(t, s.Upsert(ctx(t), bob), "upsert")
			rotated := bob
			rotated.PublicKeyID = bob.ActorURI + "#key-2"
			rotated.FetchedAt = base.Add(time.Hour)
			mustNil(t, s.Upsert(ctx(t), rotated), "upsert rotated")
			_, err := s.ByKeyID(ctx(t), bob.PublicKeyID)
			mustIs(t, err, domain.ErrNotFound, "old key still found")
			got, err := s.ByKeyID(ctx(t), rotated.PublicKeyID)
			mustNil(t, err, "new key")
			sameTime(t, got.FetchedAt, base.Add(time.Hour), "fetchedAt")
		}},
		{"OneOwnerPerKeyID", func(t *testing.T, s ports.ForeignActorStore) {
			mustNil(t, s.Upsert(ctx(t), bob), "upsert")
			// Another actor's claim of bob's key, as a first copy and as a
			// refetch of an actor already cached: refused, nothing changed.
			mallory := bob
			mallory.ActorURI, mallory.PreferredUsername, mallory.Inbox = "https://r.example/users/mallory", "mallory", "https://r.example/users/mallory/inbox"
			err := s.Upsert(ctx(t), mallory)
			mustIs(t, err, domain.ErrAlreadyExists, "another actor's copy with bob's key")
			if errors.Is(err, domain.ErrNameTaken) {
				t.Fatalf("a key claimed twice reads as a name taken: %v", err)
			}
			_, err = s.ByActorURI(ctx(t), mallory.ActorURI)
			mustIs(t, err, domain.ErrNotFound, "the refused copy was stored")
			own := mallory
			own.PublicKeyID, own.FetchedAt = mallory.ActorURI+"#main-key", base.Add(time.Minute)
			mustNil(t, s.Upsert(ctx(t), own), "mallory with her own key")
			mallory.FetchedAt = base.Add(time.Hour)
			mustIs(t, s.Upsert(ctx(t), mallory), domain.ErrAlreadyExists, "mallory's refetch claiming bob's key")
			got, err := s.ByActorURI(ctx(t), mallory.ActorURI)
			mustNil(t, err, "mallory")
			if got.PublicKeyID != own.PublicKeyID {
				t.Fatalf("a refused refetch changed mallory's copy: key %q", got.PublicKeyID)
			}
			sameTime(t, got.FetchedAt, own.FetchedAt, "mallory's fetchedAt")
			got, err = s.ByKeyID(ctx(t), bob.PublicKeyID)
			mustNil(t, err, "bob's key")
			if got.ActorURI != bob.ActorURI || got.Inbox != bob.Inbox {
				t.Fatalf("bob's key answers %+v", got)
			}
			// Bob's own refetch, same key, replaces his copy.
			again := bob
			again.Inbox, again.FetchedAt = "https://r.example/users/bob/inbox2", base.Add(2*time.Hour)
			mustNil(t, s.Upsert(ctx(t), again), "bob's refetch")
			got, _ = s.ByKeyID(ctx(t), bob.PublicKeyID)
			if got.Inbox != again.Inbox {
				t.Fatalf("bob's refetch not stored: %+v", got)
			}
		}},
		{"RotationFreesTheOldKeyID", func(t *testing.T, s ports.ForeignActorStore) {
			mustNil(t, s.Upsert(ctx(t), bob), "upsert")
			rotated := bob
			rotated.PublicKeyID, rotated.FetchedAt = bob.ActorURI+"#key-2", base.Add(time.Hour)
			mustNil(t, s.Upsert(ctx(t), rotated), "rotate")
			carol := bob
			carol.ActorURI = "https://r.example/users/carol"
			mustNil(t, s.Upsert(ctx(t), carol), "another actor takes the key id bob left")
			got, err := s.ByKeyID(ctx(t), bob.PublicKeyID)
			mustNil(t, err, "the freed key id")
			if got.ActorURI != carol.ActorURI {
				t.Fatalf("the freed key id answers %s, want carol", got.ActorURI)
			}
			carol.PublicKeyID = rotated.PublicKeyID
			mustIs(t, s.Upsert(ctx(t), carol), domain.ErrAlreadyExists, "bob's new key id")
			// A deleted actor frees its key id too.
			mustNil(t, s.Delete(ctx(t), bob.ActorURI), "delete bob")
			mustNil(t, s.Upsert(ctx(t), carol), "the key id a deleted actor held")
		}},
		{"NoKeyIDClaimsNothing", func(t *testing.T, s ports.ForeignActorStore) {
			for _, u := range []string{"https://r.example/users/k1", "https://r.example/users/k2"} {
				mustNil(t, s.Upsert(ctx(t), domain.ForeignAvatar{ActorURI: u, Inbox: u + "/inbox", FetchedAt: base}), "an actor without a key id")
			}
			got, err := s.InboxesOf(ctx(t), []string{"https://r.example/users/k1", "https://r.example/users/k2"})
			if err != nil || len(got) != 2 {
				t.Fatalf("actors without key ids: %+v %v", got, err)
			}
			_, err = s.ByKeyID(ctx(t), "")
			mustIs(t, err, domain.ErrNotFound, "the empty key id")
		}},
		{"ConcurrentClaimsOfOneKeyIDHaveOneWinner", func(t *testing.T, s ports.ForeignActorStore) {
			const n = 16
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					f := bob
					f.ActorURI = fmt.Sprintf("https://r.example/users/c%02d", i)
					errs[i] = s.Upsert(ctx(t), f)
				}()
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("claims %d and %d of one key id both succeeded", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, domain.ErrAlreadyExists):
					t.Fatalf("claim %d: %v, want ErrAlreadyExists", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("no claim succeeded")
			}
			got, err := s.ByKeyID(ctx(t), bob.PublicKeyID)
			mustNil(t, err, "by key")
			if want := fmt.Sprintf("https://r.example/users/c%02d", winner); got.ActorURI != want {
				t.Fatalf("the key id answers %s, want the winner %s", got.ActorURI, want)
			}
			for i := range n {
				_, err := s.ByActorURI(ctx(t), fmt.Sprintf("https://r.example/users/c%02d", i))
				if (i == winner) != (err == nil) {
					t.Fatalf("claimant %d stored: %v (winner %d)", i, err, winner)
				}
			}
		}},
		{"InboxesOfInOneCall", func(t *testing.T, s ports.ForeignActorStore) {
			for i := 0; i < 5; i++ {
				f := bob
				f.ActorURI = fmt.Sprintf("https://r.example/users/u%d", i)
				f.PublicKeyID = f.ActorURI + "#main-key"
				f.Inbox = f.ActorURI + "/inbox"
				f.SharedInbox = ""
				if i%2 == 1 {
					f.SharedInbox = "https://r.example/inbox"
				}
				mustNil(t, s.Upsert(ctx(t), f), "upsert")
			}
			// The order of uris, each actor once, the missing left out.
			got, err := s.InboxesOf(ctx(t), []string{"https://r.example/users/u3", "https://r.example/users/u0", "https://r.example/users/missing", "https://r.example/users/u3"})
			mustNil(t, err, "inboxes of uris")
			want := []domain.ActorInboxes{
				{ActorURI: "https://r.example/users/u3", Inbox: "https://r.example/users/u3/inbox", SharedInbox: "https://r.example/inbox"},
				{ActorURI: "https://r.example/users/u0", Inbox: "https://r.example/users/u0/inbox"},
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
			if got[0].DeliveryInbox() != "https://r.example/inbox" || got[1].DeliveryInbox() != "https://r.example/users/u0/inbox" {
				t.Fatalf("delivery inboxes %q, %q", got[0].DeliveryInbox(), got[1].DeliveryInbox())
			}
			if none, err := s.InboxesOf(ctx(t), nil); err != nil || len(none) != 0 {
				t.Fatalf("empty lookup: %v %v", none, err)
			}
		}},
		{"Delete", func(t *testing.T, s ports.ForeignActorStore) {
			mustNil(t, s.Upsert(ctx(t), bob), "upsert")
			mustNil(t, s.Delete(ctx(t), bob.ActorURI), "delete")
			_, err := s.ByActorURI(ctx(t), bob.ActorURI)
			mustIs(t, err, domain.ErrNotFound, "deleted")
			mustIs(t, s.Delete(ctx(t), bob.ActorURI), domain.ErrNotFound, "delete twice")
		}},
		{"OnDomainListsItsActorsInURIOrder", func(t *testing.T, s ports.ForeignActorStore) {
			for uri, host := range map[string]string{
				"https://s.example/users/c":              "s.example",
				"https://a.s.example/users/a":            "a.s.example",
				"https://s.example:8443/users/b":         "s.example:8443",
				"https://S.EXAMPLE/users/d":              "S.EXAMPLE",
				"https://bads.example/users/e":           "bads.example",
				"https://s.example.evil.org/users/f":     "s.example.evil.org",
				"https://x.example/users/g":              "x.example",
				"https://no-host.example/users/h":        "",
				"https://a.s.example/users/Zed-is-first": "a.s.example", // byte order: 'Z' < 'a'
			} {
				f := bob
				f.ActorURI, f.Host, f.PublicKeyID = uri, host, uri+"#main-key"
				mustNil(t, s.Upsert(ctx(t), f), "upsert "+uri)
			}
			page := func(after string, limit int) string {
				t.Helper()
				uris, err := s.OnDomain(ctx(t), "s.example", after, limit)
				mustNil(t, err, "on domain")
				return fmt.Sprint(uris)
			}
			const all = "[https://S.EXAMPLE/users/d https://a.s.example/users/Zed-is-first https://a.s.example/users/a https://s.example/users/c https://s.example:8443/users/b]"
			if got := page("", 0); got != all {
				t.Fatalf("on s.example:\n got %s\nwant %s", got, all)
			}
			if got := page("", 2); got != "[https://S.EXAMPLE/users/d https://a.s.example/users/Zed-is-first]" {
				t.Fatalf("first page of 2: %s", got)
			}
			if got := page("https://a.s.example/users/Zed-is-first", 2); got != "[https://a.s.example/users/a https://s.example/users/c]" {
				t.Fatalf("second page of 2: %s", got)
			}
			if got := page("https://s.example/users/c", 2); got != "[https://s.example:8443/users/b]" {
				t.Fatalf("last page: %s", got)
			}
			if got := page("https://s.example:8443/users/b", 2); got != "[]" {
				t.Fatalf("after the last: %s", got)
			}
			mustNil(t, s.Delete(ctx(t), "https://s.example/users/c"), "delete")
			if got := page("https://a.s.example/users/a", 0); got != "[https://s.example:8443/users/b]" {
				t.Fatalf("after a delete: %s", got)
			}
			for _, d := range notDomains {
				_, err := s.OnDomain(ctx(t), d, "", 0)
				mustIs(t, err, domain.ErrInvalidInput, fmt.Sprintf("on domain %q", d))
			}
		}},
		{"OnDomainCoversWhatDomainCoversCovers", func(t *testing.T, s ports.ForeignActorStore) {
			checkPinned(t)
			hosts := coverHosts()
			uriOf := func(i int) string { return fmt.Sprintf("https://r.example/actors/%04d", i) }
			upsertAll(t, s, len(hosts), func(i int) domain.ForeignAvatar {
				return domain.ForeignAvatar{ActorURI: uriOf(i), Host: hosts[i], FetchedAt: base}
			})
			for _, cd := range coverDomains {
				var want []string
				for i, h := range hosts {
					if domain.DomainCovers(cd.d, h) {
						want = append(want, uriOf(i))
					}
				}
				got, err := s.OnDomain(ctx(t), cd.d, "", 0)
				mustNil(t, err, "on domain "+cd.d)
				if !slices.Equal(got, want) {
					t.Errorf("on %q the store lists %d actors, domain.DomainCovers %d:\n%s", cd.d, len(got), len(want), coverDiff(got, want, func(uri string) string {
						var i int
						_, _ = fmt.Sscanf(uri, "https://r.example/actors/%04d", &i)
						return hosts[i]
					}))
				}
			}
		}},
	})
}

// upsertAll upserts n cached actors, a few at once.
func upsertAll(t *testing.T, s ports.ForeignActorStore, n int, actor func(i int) domain.ForeignAvatar) {
	t.Helper()
	const workers = 8
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n && errs[w] == nil; i += workers {
				errs[w] = s.Upsert(ctx(t), actor(i))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		mustNil(t, err, "upsert")
	}
}

// coverDiff names, by host, what a store and domain.DomainCovers disagree
// on.
func coverDiff(got, want []string, host func(string) string) string {
	var b strings.Builder
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "  covered by the store only: %q\n", host(g))
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "  covered by DomainCovers only: %q\n", host(w))
		}
	}
	if b.Len() == 0 {
		return "  the same actors, in another order"
	}
	return b.String()
}

func post(t *testing.T, n int, author, group string, published time.Time) domain.Post {
	t.Helper()
	p, err := domain.NewPost(fmt.Sprintf("p%03d", n), fmt.Sprintf("https://h.example/notes/%03d", n), author,
		fmt.Sprintf("note %d", n), domain.VisibilityPublic, published)
	mustNil(t, err, "post")
	p.GroupURI = group
	return p
}

// PostStore runs the contract of ports.PostStore.
func PostStore(t *testing.T, newStore func(t *testing.T) ports.PostStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewPosts)
	const alice, bob, club = "https://h.example/users/alice", "https://h.example/users/bob", "https://h.example/groups/club"
	runCases(t, newStore, opts, []testCase[ports.PostStore]{
		{"CountLocalPosts", func(t *testing.T, s ports.PostStore) {
			n, err := s.CountLocalPosts(ctx(t))
			mustNil(t, err, "count empty")
			if n != 0 {
				t.Fatalf("%d local posts in an empty store", n)
			}
			for i, local := range []bool{true, true, false, true} {
				p := post(t, i+1, alice, "", base)
				p.Local = local
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create")
			}
			// The same post received again is not counted twice.
			again := post(t, 1, alice, "", base)
			again.ID, again.Local = "again", true
			_, _ = s.CreatePost(ctx(t), again)
			for i, local := range []bool{true, false} {
				d, err := domain.NewDmPost(fmt.Sprintf("dm%d", i), fmt.Sprintf("https://h.example/dm/c%d", i), alice, "psst", []string{bob}, base)
				mustNil(t, err, "dm")
				d.Local = local
				_, err = s.CreateDm(ctx(t), d)
				mustNil(t, err, "create dm")
			}
			n, err = s.CountLocalPosts(ctx(t))
			mustNil(t, err, "count")
			if n != 4 {
				t.Fatalf("%d local posts, want 4 (3 posts, 1 direct; remote ones not counted)", n)
			}
		}},
		{"CreateIsIdempotentByObjectURI", func(t *testing.T, s ports.PostStore) {
			p := post(t, 1, alice, "", base)
			created, err := s.CreatePost(ctx(t), p)
			mustNil(t, err, "create")
			if !created {
				t.Fatal("not created")
			}
			dup := p
			dup.ID, dup.Content = "other", "changed"
			created, err = s.CreatePost(ctx(t), dup)
			mustNil(t, err, "create again")
			if created {
				t.Fatal("duplicate ObjectURI created")
			}
			got, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustNil(t, err, "get")
			if got.ID != p.ID || got.Content != "note 1" || got.AuthorURI != alice || got.Visibility != domain.VisibilityPublic {
				t.Fatalf("got %+v", got)
			}
			sameTime(t, got.Published, base, "published")
			_, err = s.PostByObjectURI(ctx(t), "https://h.example/notes/none")
			mustIs(t, err, domain.ErrNotFound, "unknown")
			reused := post(t, 2, alice, "", base)
			reused.ID = p.ID
			_, err = s.CreatePost(ctx(t), reused)
			mustIs(t, err, domain.ErrAlreadyExists, "another post with a used id")
		}},
		{"PostByID", func(t *testing.T, s ports.PostStore) {
			p := post(t, 1, alice, "", base)
			p.Summary, p.Hashtags = "cw", []string{"go"}
			_, err := s.CreatePost(ctx(t), p)
			mustNil(t, err, "create")
			d, err := domain.NewDmPost("dm1", "https://h.example/dm/1", alice, "psst", []string{bob}, base)
			mustNil(t, err, "dm")
			_, err = s.CreateDm(ctx(t), d)
			mustNil(t, err, "create dm")
			got, err := s.PostByID(ctx(t), p.ID)
			mustNil(t, err, "by id")
			if got.ObjectURI != p.ObjectURI || got.Content != p.Content || got.Summary != "cw" || len(got.Hashtags) != 1 {
				t.Fatalf("by id: %+v", got)
			}
			_, err = s.PostByID(ctx(t), "p999")
			mustIs(t, err, domain.ErrNotFound, "unknown id")
			_, err = s.PostByID(ctx(t), "dm1")
			mustIs(t, err, domain.ErrNotFound, "a direct post's id")
		}},
		{"ReactedTo", func(t *testing.T, s ports.PostStore) {
			var uris []string
			for i := 1; i <= 4; i++ {
				p := post(t, i, bob, "", base)
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create")
				uris = append(uris, p.ObjectURI)
			}
			react := func(uri, actor string, kind domain.ReactionKind) {
				r, err := domain.NewReaction(uri, actor, kind, base)
				mustNil(t, err, "reaction")
				_, err = s.AddReaction(ctx(t), r)
				mustNil(t, err, "add reaction")
			}
			boost := func(uri, actor string) {
				b, err := domain.NewBoost(actor+"/activities/"+uri[len(uri)-3:], actor, uri, base)
				mustNil(t, err, "boost")
				_, err = s.AddBoost(ctx(t), b)
				mustNil(t, err, "add boost")
			}
			react(uris[0], alice, domain.ReactionLike)
			react(uris[1], alice, domain.ReactionAnnounce)
			boost(uris[1], alice) // an Announce both ways is said once
			boost(uris[2], alice)
			react(uris[3], bob, domain.ReactionLike) // someone else's
			boost(uris[3], bob)
			got, err := s.ReactedTo(ctx(t), alice, append(uris, "https://h.example/notes/none"))
			mustNil(t, err, "reacted to")
			seen := map[string]bool{}
			for _, r := range got {
				if r.ActorURI != alice {
					t.Fatalf("a reaction of %s", r.ActorURI)
				}
				seen[r.ObjectURI[len(r.ObjectURI)-3:]+" "+string(r.Kind)] = true
			}
			want := map[string]bool{"001 like": true, "002 announce": true, "003 announce": true}
			if len(got) != len(want) || fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Fatalf("reacted to: %v (%d), want %v", seen, len(got), want)
			}
			got, err = s.ReactedTo(ctx(t), alice, nil)
			mustNil(t, err, "reacted to nothing")
			if len(got) != 0 {
				t.Fatalf("reactions to no post: %v", got)
			}
			mustNil(t, s.RemoveReaction(ctx(t), uris[0], alice, domain.ReactionLike), "unlike")
			_, err = s.RemoveBoost(ctx(t), alice, uris[2])
			mustNil(t, err, "unboost")
			got, _ = s.ReactedTo(ctx(t), alice, uris[:3])
			if len(got) != 1 || got[0].ObjectURI != uris[1] || got[0].Kind != domain.ReactionAnnounce {
				t.Fatalf("after the undos: %+v", got)
			}
			_, err = s.ReactedTo(ctx(t), alice, make([]string, ports.MaxReactedTo+1))
			mustIs(t, err, domain.ErrInvalidInput, "over the bound")
		}},
		{"PostsByAuthorsAndPublicPosts", func(t *testing.T, s ports.PostStore) {
			const carol = "https://other.example/users/carol"
			authors := []string{alice, bob, carol}
			for i := range 9 {
				p := post(t, i, authors[i%3], "", base.Add(time.Duration(i)*time.Minute))
				p.Local = i%3 != 2
				if i == 4 {
					p.Visibility = domain.VisibilityFollowers
				}
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create")
			}
			got, err := s.PostsByAuthors(ctx(t), []string{alice, carol}, time.Time{}, 4)
			mustNil(t, err, "by authors")
			if fmt.Sprint(ids(got)) != "[p008 p006 p005 p003]" {
				t.Fatalf("by alice and carol: %v", ids(got))
			}
			got, _ = s.PostsByAuthors(ctx(t), []string{alice, carol}, got[3].Published, 0)
			if fmt.Sprint(ids(got)) != "[p002 p000]" {
				t.Fatalf("by alice and carol, before: %v", ids(got))
			}
			got, _ = s.PostsByAuthors(ctx(t), nil, time.Time{}, 0)
			if len(got) != 0 {
				t.Fatalf("by no author: %v", ids(got))
			}
			_, err = s.PostsByAuthors(ctx(t), make([]string, ports.MaxAuthors+1), time.Time{}, 1)
			mustIs(t, err, domain.ErrInvalidInput, "over the bound")
			for _, c := range []struct {
				origin ports.Origin
				want   string
			}{
				{ports.OriginAll, "[p008 p007 p006 p005 p003 p002 p001 p000]"}, // not p004, followers-only
				{ports.OriginLocal, "[p007 p006 p003 p001 p000]"},
				{ports.OriginRemote, "[p008 p005 p002]"},
			} {
				got, err := s.PublicPosts(ctx(t), c.origin, time.Time{}, 0)
				mustNil(t, err, "public")
				if fmt.Sprint(ids(got)) != c.want {
					t.Fatalf("public posts (%q): %v, want %s", c.origin, ids(got), c.want)
				}
			}
			got, _ = s.PublicPosts(ctx(t), ports.OriginAll, base.Add(3*time.Minute), 2)
			if fmt.Sprint(ids(got)) != "[p002 p001]" {
				t.Fatalf("public posts before p003: %v", ids(got))
			}
		}},
		{"Replies", func(t *testing.T, s ports.PostStore) {
			root := post(t, 0, alice, "", base)
			_, err := s.CreatePost(ctx(t), root)
			mustNil(t, err, "create")
			for i, at := range []time.Duration{3, 1, 2} {
				p := post(t, i+1, bob, "", base.Add(at*time.Minute))
				p.InReplyTo = root.ObjectURI
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create reply")
			}
			deeper := post(t, 9, alice, "", base.Add(4*time.Minute))
			deeper.InReplyTo = "https://h.example/notes/002"
			_, err = s.CreatePost(ctx(t), deeper)
			mustNil(t, err, "create")
			got, err := s.Replies(ctx(t), root.ObjectURI, 0)
			mustNil(t, err, "replies")
			if fmt.Sprint(ids(got)) != "[p002 p003 p001]" || got[0].InReplyTo != root.ObjectURI {
				t.Fatalf("replies, oldest first: %v", ids(got))
			}
			got, _ = s.Replies(ctx(t), root.ObjectURI, 1)
			if fmt.Sprint(ids(got)) != "[p002]" {
				t.Fatalf("one reply: %v", ids(got))
			}
			got, _ = s.Replies(ctx(t), "", 0)
			if len(got) != 0 {
				t.Fatalf("replies to nothing: %v", ids(got))
			}
		}},
		{"BoostsByActors", func(t *testing.T, s ports.PostStore) {
			const carol = "https://other.example/users/carol"
			for i := range 3 {
				_, err := s.CreatePost(ctx(t), post(t, i, carol, "", base))
				mustNil(t, err, "create")
			}
			boost := func(actor string, n int, at time.Time) {
				uri := fmt.Sprintf("https://h.example/notes/%03d", n)
				b, err := domain.NewBoost(fmt.Sprintf("%s/announces/%d", actor, n), actor, uri, at)
				mustNil(t, err, "boost")
				_, err = s.AddBoost(ctx(t), b)
				mustNil(t, err, "add boost")
			}
			boost(alice, 0, base.Add(time.Minute))
			boost(bob, 1, base.Add(2*time.Minute))
			boost(carol, 2, base.Add(3*time.Minute))
			boost(alice, 2, base.Add(4*time.Minute))
			got, err := s.BoostsByActors(ctx(t), []string{alice, bob}, time.Time{}, 0)
			mustNil(t, err, "boosts by actors")
			var seen []string
			for _, b := range got {
				seen = append(seen, b.ActorURI[len(b.ActorURI)-5:]+" "+b.ObjectURI[len(b.ObjectURI)-3:])
			}
			if fmt.Sprint(seen) != "[alice 002 s/bob 001 alice 000]" {
				t.Fatalf("boosts by alice and bob: %v", seen)
			}
			got, _ = s.BoostsByActors(ctx(t), []string{alice, bob}, base.Add(4*time.Minute), 1)
			if len(got) != 1 || got[0].ActorURI != bob {
				t.Fatalf("before the last, one: %+v", got)
			}
			_, err = s.BoostsByActors(ctx(t), make([]string, ports.MaxAuthors+1), time.Time{}, 1)
			mustIs(t, err, domain.ErrInvalidInput, "over the bound")
		}},
		{"ListsNewestFirst", func(t *testing.T, s ports.PostStore) {
			for i := 0; i < 10; i++ {
				author, group := alice, ""
				if i%2 == 1 {
					author, group = bob, club
				}
				_, err := s.CreatePost(ctx(t), post(t, i, author, group, base.Add(time.Duration(i)*time.Minute)))
				mustNil(t, err, "create")
			}
			got, err := s.PostsByAuthor(ctx(t), alice, time.Time{}, 3)
			mustNil(t, err, "by author")
			if len(got) != 3 || got[0].ID != "p008" || got[1].ID != "p006" || got[2].ID != "p004" {
				t.Fatalf("by author %v", ids(got))
			}
			got, _ = s.PostsByAuthor(ctx(t), alice, got[2].Published, 10)
			if len(got) != 2 || got[0].ID != "p002" || got[1].ID != "p000" {
				t.Fatalf("by author, before: %v", ids(got))
			}
			got, _ = s.PostsByGroup(ctx(t), club, time.Time{}, 0)
			if len(got) != 5 || got[0].ID != "p009" || got[0].GroupURI != club {
				t.Fatalf("by group %v", ids(got))
			}
		}},
		{"MentionsKeptWithThePostAndListedByActor", func(t *testing.T, s ports.PostStore) {
			carol := "https://r.example/users/carol"
			for i := 0; i < 6; i++ {
				p := post(t, i, bob, "", base.Add(time.Duration(i)*time.Minute))
				switch i % 3 {
				case 0: // alice, unsorted and twice, with carol
					p.Mentions = []string{carol, alice, " " + alice}
				case 1:
					p.Mentions = []string{alice}
				}
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create")
			}
			got, err := s.PostByObjectURI(ctx(t), post(t, 0, bob, "", base).ObjectURI)
			mustNil(t, err, "get")
			if fmt.Sprint(got.Mentions) != fmt.Sprint([]string{alice, carol}) {
				t.Fatalf("mentions %q, want sorted and distinct [alice carol]", got.Mentions)
			}
			if none, _ := s.PostByObjectURI(ctx(t), post(t, 2, bob, "", base).ObjectURI); none.Mentions != nil {
				t.Fatalf("a post without mentions reads %q", none.Mentions)
			}
			// A second Create of a post keeps the first one's mentions.
			dup := post(t, 1, bob, "", base.Add(time.Minute))
			dup.ID, dup.Mentions = "dup", []string{carol}
			_, err = s.CreatePost(ctx(t), dup)
			mustNil(t, err, "create again")
			list, err := s.PostsMentioning(ctx(t), alice, time.Time{}, 3)
			mustNil(t, err, "mentioning alice")
			if len(list) != 3 || list[0].ID != "p004" || list[1].ID != "p003" || list[2].ID != "p001" || len(list[1].Mentions) != 2 {
				t.Fatalf("mentioning alice %v", ids(list))
			}
			list, _ = s.PostsMentioning(ctx(t), alice, list[2].Published, 10)
			if len(list) != 1 || list[0].ID != "p000" {
				t.Fatalf("mentioning alice, before: %v", ids(list))
			}
			list, _ = s.PostsMentioning(ctx(t), carol, time.Time{}, 0)
			if len(list) != 2 || list[0].ID != "p003" || list[1].ID != "p000" {
				t.Fatalf("mentioning carol %v", ids(list))
			}
			mustNil(t, s.DeletePost(ctx(t), post(t, 3, bob, "", base).ObjectURI), "delete")
			list, _ = s.PostsMentioning(ctx(t), carol, time.Time{}, 0)
			if len(list) != 1 || list[0].ID != "p000" {
				t.Fatalf("mentioning carol after a delete %v", ids(list))
			}
			// A post created again after its delete has its new mentions only.
			again := post(t, 3, bob, "", base.Add(3*time.Minute))
			again.Mentions = []string{alice}
			_, err = s.CreatePost(ctx(t), again)
			mustNil(t, err, "create after delete")
			list, _ = s.PostsMentioning(ctx(t), carol, time.Time{}, 0)
			if len(list) != 1 {
				t.Fatalf("mentioning carol after the post came back %v", ids(list))
			}
			many := post(t, 9, bob, "", base)
			for i := 0; i < domain.MaxMentions+20; i++ {
				many.Mentions = append(many.Mentions, fmt.Sprintf("https://r.example/users/m%03d", i))
			}
			_, err = s.CreatePost(ctx(t), many)
			mustNil(t, err, "create with many mentions")
			got, _ = s.PostByObjectURI(ctx(t), many.ObjectURI)
			if len(got.Mentions) != domain.MaxMentions || got.Mentions[0] != "https://r.example/users/m000" {
				t.Fatalf("%d mentions kept, want the first %d", len(got.Mentions), domain.MaxMentions)
			}
		}},
		{"DirectPostsThreadByParticipants", func(t *testing.T, s ports.PostStore) {
			mk := func(n int, author string, to []string, at time.Time) domain.DmPost {
				dm, err := domain.NewDmPost(fmt.Sprintf("d%d", n), fmt.Sprintf("https://h.example/dm/%d", n), author, "psst", to, at)
				mustNil(t, err, "dm")
				return dm
			}
			d1 := mk(1, alice, []string{bob}, base)
			d2 := mk(2, bob, []string{alice}, base.Add(time.Minute))
			d3 := mk(3, alice, []string{bob, club}, base.Add(2*time.Minute))
			for _, d := range []domain.DmPost{d1, d2, d3} {
				created, err := s.CreateDm(ctx(t), d)
				mustNil(t, err, "create dm")
				if !created {
					t.Fatal("not created")
				}
			}
			if created, _ := s.CreateDm(ctx(t), d1); created {
				t.Fatal("duplicate dm created")
			}
			thread, err := s.DmThread(ctx(t), d1.ParticipantsKey, time.Time{}, 10)
			mustNil(t, err, "thread")
			if len(thread) != 2 || thread[0].ID != "d2" || thread[1].ID != "d1" {
				t.Fatalf("thread %+v", thread)
			}
			if len(thread[1].Participants) != 2 || thread[1].ParticipantsKey != d1.ParticipantsKey {
				t.Fatalf("participants lost: %+v", thread[1])
			}
			got, err := s.DmByObjectURI(ctx(t), d3.ObjectURI)
			mustNil(t, err, "dm by uri")
			if len(got.Participants) != 3 {
				t.Fatalf("%+v", got)
			}
			byID, err := s.DmByID(ctx(t), "d3")
			mustNil(t, err, "dm by id")
			if byID.ObjectURI != d3.ObjectURI || len(byID.Participants) != 3 || byID.ParticipantsKey != d3.ParticipantsKey {
				t.Fatalf("by id %+v", byID)
			}
			if _, err := s.DmByID(ctx(t), "d9"); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("dm by unknown id: %v, want not found", err)
			}
		}},
		{"UpdateContentIsIdempotentByUpdated", func(t *testing.T, s ports.PostStore) {
			p := post(t, 1, alice, "", base)
			_, _ = s.CreatePost(ctx(t), p)
			dm, _ := domain.NewDmPost("d1", "https://h.example/dm/1", alice, "x", []string{bob}, base)
			_, _ = s.CreateDm(ctx(t), dm)
			for _, uri := range []string{p.ObjectURI, dm.ObjectURI} {
				changed, err := s.UpdateContent(ctx(t), uri, "edit 2", domain.Extras{}, base.Add(2*time.Minute))
				mustNil(t, err, "update")
				if !changed {
					t.Fatalf("%s: first edit not applied", uri)
				}
				for _, older := range []time.Time{base.Add(2 * time.Minute), base.Add(time.Minute), base.Add(-time.Minute)} {
					changed, err = s.UpdateContent(ctx(t), uri, "stale", domain.Extras{}, older)
					mustNil(t, err, "stale update")
					if changed {
						t.Fatalf("%s: an Update not later than the last edit (%s) was applied", uri, older)
					}
				}
			}
			got, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustNil(t, err, "get")
			if got.Content != "edit 2" {
				t.Fatalf("content %q", got.Content)
			}
			sameTime(t, got.Updated, base.Add(2*time.Minute), "updated")
			sameTime(t, got.Published, base, "published kept")
			gotDm, err := s.DmByObjectURI(ctx(t), dm.ObjectURI)
			mustNil(t, err, "get dm")
			if gotDm.Content != "edit 2" {
				t.Fatalf("dm content %q", gotDm.Content)
			}
			sameTime(t, gotDm.Updated, base.Add(2*time.Minute), "dm updated")
			{
				fresh := post(t, 2, alice, "", base)
				_, _ = s.CreatePost(ctx(t), fresh)
				got, _ := s.PostByObjectURI(ctx(t), fresh.ObjectURI)
				if !got.Updated.IsZero() {
					t.Fatalf("a post never edited has Updated %v", got.Updated)
				}
			}
			_, err = s.UpdateContent(ctx(t), "https://h.example/notes/none", "x", domain.Extras{}, base.Add(time.Hour))
			mustIs(t, err, domain.ErrNotFound, "update of an unknown post")
		}},
		{"ReactionsCountOncePerActorAndKind", func(t *testing.T, s ports.PostStore) {
			p := post(t, 1, alice, "", base)
			_, _ = s.CreatePost(ctx(t), p)
			react := func(actor string, kind domain.ReactionKind) bool {
				t.Helper()
				r, err := domain.NewReaction(p.ObjectURI, actor, kind, base)
				mustNil(t, err, "reaction")
				created, err := s.AddReaction(ctx(t), r)
				mustNil(t, err, "add reaction")
				return created
			}
			if !react(bob, domain.ReactionLike) || !react(club, domain.ReactionLike) || !react(bob, domain.ReactionAnnounce) {
				t.Fatal("a first reaction was not created")
			}
			if react(bob, domain.ReactionLike) {
				t.Fatal("a second Like by the same actor was created")
			}
			counts := func() map[domain.ReactionKind]int {
				t.Helper()
				c, err := s.CountReactions(ctx(t), p.ObjectURI)
				mustNil(t, err, "count")
				return c
			}
			if c := counts(); c[domain.ReactionLike] != 2 || c[domain.ReactionAnnounce] != 1 {
				t.Fatalf("counts %v, want 2 likes and 1 announce", c)
			}
			mustNil(t, s.RemoveReaction(ctx(t), p.ObjectURI, bob, domain.ReactionLike), "undo like")
			mustIs(t, s.RemoveReaction(ctx(t), p.ObjectURI, bob, domain.ReactionLike), domain.ErrNotFound, "undo twice")
			if c := counts(); c[domain.ReactionLike] != 1 || c[domain.ReactionAnnounce] != 1 {
				t.Fatalf("counts after undo %v", c)
			}
			r, _ := domain.NewReaction("https://h.example/notes/none", bob, domain.ReactionLike, base)
			_, err := s.AddReaction(ctx(t), r)
			mustIs(t, err, domain.ErrNotFound, "reaction to an unknown post")
			mustNil(t, s.DeletePost(ctx(t), p.ObjectURI), "delete post")
			if c := counts(); c[domain.ReactionLike] != 0 || c[domain.ReactionAnnounce] != 0 {
				t.Fatalf("a deleted post keeps reactions %v", c)
			}
			_, _ = s.CreatePost(ctx(t), p)
			if c := counts(); c[domain.ReactionLike] != 0 {
				t.Fatalf("a post created again inherits reactions %v", c)
			}
		}},
		{"BoostsOncePerActorAndPost", func(t *testing.T, s ports.PostStore) {
			const ann, cid = "https://r.example/users/ann", "https://r.example/users/cid"
			var notes []domain.Post
			for i := 0; i < 3; i++ {
				p := post(t, i+1, cid, "", base)
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create")
				notes = append(notes, p)
			}
			boost := func(actor string, i int, at time.Time) bool {
				t.Helper()
				b, err := domain.NewBoost(fmt.Sprintf("%s/announces/%d", actor, i), actor, notes[i].ObjectURI, at)
				mustNil(t, err, "boost")
				created, err := s.AddBoost(ctx(t), b)
				mustNil(t, err, "add boost")
				return created
			}
			if !boost(ann, 0, base.Add(time.Minute)) || !boost(ann, 1, base.Add(3*time.Minute)) || !boost(ann, 2, base.Add(2*time.Minute)) || !boost(cid, 0, base) {
				t.Fatal("a first boost was not created")
			}
			if boost(ann, 0, base.Add(time.Hour)) {
				t.Fatal("a second boost of one post by one actor was created")
			}
			list := func(actor string, before time.Time, limit int) []string {
				t.Helper()
				bs, err := s.BoostsBy(ctx(t), actor, before, limit)
				mustNil(t, err, "boosts by")
				out := make([]string, len(bs))
				for i, b := range bs {
					if b.ActorURI != actor || b.ActivityURI == "" {
						t.Fatalf("boost %+v listed for %s", b, actor)
					}
					out[i] = b.ObjectURI
				}
				return out
			}
			want := []string{notes[1].ObjectURI, notes[2].ObjectURI, notes[0].ObjectURI}
			if got := list(ann, time.Time{}, 10); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("ann's boosts %v, want newest first %v", got, want)
			}
			if got := list(ann, time.Time{}, 2); fmt.Sprint(got) != fmt.Sprint(want[:2]) {
				t.Fatalf("limited %v", got)
			}
			if got := list(ann, base.Add(2*time.Minute), 10); fmt.Sprint(got) != fmt.Sprint(want[2:]) {
				t.Fatalf("before %v", got)
			}
			first, err := s.BoostsBy(ctx(t), ann, base.Add(2*time.Minute), 10)
			mustNil(t, err, "boosts by")
			if first[0].ActivityURI != ann+"/announces/0" {
				t.Fatalf("the first boost's activity was replaced: %+v", first[0])
			}
			sameTime(t, first[0].CreatedAt, base.Add(time.Minute), "createdAt")

			// An Undo names the Announce, or the boosted post.
			got, err := s.RemoveBoost(ctx(t), ann, ann+"/announces/1")
			mustNil(t, err, "remove by activity")
			if got.ObjectURI != notes[1].ObjectURI || got.ActivityURI != ann+"/announces/1" {
				t.Fatalf("removed %+v", got)
			}
			got, err = s.RemoveBoost(ctx(t), ann, notes[2].ObjectURI)
			mustNil(t, err, "remove by post")
			if got.ActivityURI != ann+"/announces/2" {
				t.Fatalf("removed %+v", got)
			}
			_, err = s.RemoveBoost(ctx(t), ann, notes[2].ObjectURI)
			mustIs(t, err, domain.ErrNotFound, "remove twice")
			_, err = s.RemoveBoost(ctx(t), ann, cid+"/announces/0")
			mustIs(t, err, domain.ErrNotFound, "another actor's boost")
			if got := list(ann, time.Time{}, 10); fmt.Sprint(got) != fmt.Sprint(want[2:]) {
				t.Fatalf("after undo %v", got)
			}

			missing, _ := domain.NewBoost(ann+"/announces/9", ann, "https://h.example/notes/none", base)
			_, err = s.AddBoost(ctx(t), missing)
			mustIs(t, err, domain.ErrNotFound, "boost of an unknown post")
			dm, _ := domain.NewDmPost("d1", "https://h.example/dm/1", cid, "x", []string{ann}, base)
			_, _ = s.CreateDm(ctx(t), dm)
			ofDm, _ := domain.NewBoost(ann+"/announces/8", ann, dm.ObjectURI, base)
			_, err = s.AddBoost(ctx(t), ofDm)
			mustIs(t, err, domain.ErrNotFound, "boost of a direct post")

			mustNil(t, s.DeletePost(ctx(t), notes[0].ObjectURI), "delete post")
			if got := list(ann, time.Time{}, 10); len(got) != 0 {
				t.Fatalf("a deleted post keeps its boosts %v", got)
			}
			if got := list(cid, time.Time{}, 10); len(got) != 0 {
				t.Fatalf("a deleted post keeps its boosts %v", got)
			}
		}},
		{"DeletePostOrDm", func(t *testing.T, s ports.PostStore) {
			p := post(t, 1, alice, "", base)
			_, _ = s.CreatePost(ctx(t), p)
			dm, _ := domain.NewDmPost("d1", "https://h.example/dm/1", alice, "x", []string{bob}, base)
			_, _ = s.CreateDm(ctx(t), dm)
			mustNil(t, s.DeletePost(ctx(t), p.ObjectURI), "delete post")
			mustNil(t, s.DeletePost(ctx(t), dm.ObjectURI), "delete dm")
			_, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustIs(t, err, domain.ErrNotFound, "post deleted")
			_, err = s.DmByObjectURI(ctx(t), dm.ObjectURI)
			mustIs(t, err, domain.ErrNotFound, "dm deleted")
			mustIs(t, s.DeletePost(ctx(t), p.ObjectURI), domain.ErrNotFound, "delete twice")
		}},
		{"DeleteActorContentRemovesExactlyThatActorsThings", func(t *testing.T, s ports.PostStore) {
			const mal, ann = "https://r.example/users/mal", "https://r.example/users/ann"
			mine1, mine2, theirs := post(t, 1, mal, "", base), post(t, 2, mal, club, base.Add(time.Minute)), post(t, 3, ann, "", base)
			mine2.Mentions, theirs.Mentions = []string{ann}, []string{mal}
			for _, p := range []domain.Post{mine1, mine2, theirs} {
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create")
			}
			myDm, _ := domain.NewDmPost("d1", "https://r.example/dm/1", mal, "x", []string{ann}, base)
			theirDm, _ := domain.NewDmPost("d2", "https://r.example/dm/2", ann, "x", []string{mal}, base)
			for _, d := range []domain.DmPost{myDm, theirDm} {
				_, err := s.CreateDm(ctx(t), d)
				mustNil(t, err, "create dm")
			}
			react := func(actor string, p domain.Post, kind domain.ReactionKind) {
				t.Helper()
				r, _ := domain.NewReaction(p.ObjectURI, actor, kind, base)
				_, err := s.AddReaction(ctx(t), r)
				mustNil(t, err, "add reaction")
			}
			boost := func(actor string, p domain.Post, at time.Time) {
				t.Helper()
				b, _ := domain.NewBoost(actor+"/announces/"+p.ID, actor, p.ObjectURI, at)
				_, err := s.AddBoost(ctx(t), b)
				mustNil(t, err, "add boost")
			}
			react(ann, mine1, domain.ReactionLike) // goes with mal's post
			react(mal, theirs, domain.ReactionLike)
			react(mal, theirs, domain.ReactionAnnounce)
			react(ann, theirs, domain.ReactionLike) // stays
			boost(ann, mine1, base)                 // goes with mal's post
			boost(mal, theirs, base)
			boost(mal, mine2, base)
			boost(ann, theirs, base.Add(time.Minute)) // stays

			n, err := s.DeleteActorContent(ctx(t), mal)
			mustNil(t, err, "delete actor content")
			if n != 3 {
				t.Fatalf("%d posts and direct posts removed, want 3 (two posts, one direct)", n)
			}
			for _, p := range []domain.Post{mine1, mine2} {
				_, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
				mustIs(t, err, domain.ErrNotFound, "mal's post")
			}
			_, err = s.DmByObjectURI(ctx(t), myDm.ObjectURI)
			mustIs(t, err, domain.ErrNotFound, "mal's direct post")
			if got, err := s.PostByObjectURI(ctx(t), theirs.ObjectURI); err != nil || fmt.Sprint(got.Mentions) != fmt.Sprint([]string{mal}) {
				t.Fatalf("ann's post: %+v %v", got, err)
			}
			_, err = s.DmByObjectURI(ctx(t), theirDm.ObjectURI)
			mustNil(t, err, "ann's direct post to mal")
			if got, _ := s.PostsByAuthor(ctx(t), mal, time.Time{}, 0); len(got) != 0 {
				t.Fatalf("mal's posts listed after: %v", ids(got))
			}
			if got, _ := s.PostsByGroup(ctx(t), club, time.Time{}, 0); len(got) != 0 {
				t.Fatalf("mal's group post listed after: %v", ids(got))
			}
			if got, _ := s.PostsMentioning(ctx(t), ann, time.Time{}, 0); len(got) != 0 {
				t.Fatalf("mal's post mentioning ann listed after: %v", ids(got))
			}
			if got, _ := s.PostsMentioning(ctx(t), mal, time.Time{}, 0); len(got) != 1 || got[0].ID != theirs.ID {
				t.Fatalf("ann's post mentioning mal: %v", ids(got))
			}
			if thread, _ := s.DmThread(ctx(t), theirDm.ParticipantsKey, time.Time{}, 0); len(thread) != 1 || thread[0].ID != theirDm.ID {
				t.Fatalf("the direct thread of mal and ann keeps %+v, want ann's only", thread)
			}
			if c, err := s.CountReactions(ctx(t), theirs.ObjectURI); err != nil || c[domain.ReactionLike] != 1 || c[domain.ReactionAnnounce] != 0 {
				t.Fatalf("reactions to ann's post %v %v, want ann's like only", c, err)
			}
			if bs, _ := s.BoostsBy(ctx(t), mal, time.Time{}, 0); len(bs) != 0 {
				t.Fatalf("mal's boosts kept: %+v", bs)
			}
			if bs, _ := s.BoostsBy(ctx(t), ann, time.Time{}, 0); len(bs) != 1 || bs[0].ObjectURI != theirs.ObjectURI {
				t.Fatalf("ann's boosts %+v, want hers of her own post only", bs)
			}

			// Created again (a replayed Create), the posts come back bare:
			// no reaction, boost or mention of before is left to inherit.
			for _, p := range []domain.Post{mine1, mine2} {
				created, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create again")
				if !created {
					t.Fatalf("%s not created again", p.ID)
				}
			}
			if c, _ := s.CountReactions(ctx(t), mine1.ObjectURI); c[domain.ReactionLike] != 0 {
				t.Fatalf("a post created again inherits reactions %v", c)
			}
			if bs, _ := s.BoostsBy(ctx(t), ann, time.Time{}, 0); len(bs) != 1 {
				t.Fatalf("a post created again inherits boosts: ann's %+v", bs)
			}
			if got, _ := s.PostByObjectURI(ctx(t), mine2.ObjectURI); fmt.Sprint(got.Mentions) != fmt.Sprint([]string{ann}) {
				t.Fatalf("mentions of a post created again %q", got.Mentions)
			}

			n, err = s.DeleteActorContent(ctx(t), mal)
			mustNil(t, err, "delete again")
			if n != 2 {
				t.Fatalf("%d removed the second time, want the 2 posts created again", n)
			}
			n, err = s.DeleteActorContent(ctx(t), mal)
			if err != nil || n != 0 {
				t.Fatalf("a repeat removed %d (%v), want 0", n, err)
			}
			if got, _ := s.PostsByAuthor(ctx(t), ann, time.Time{}, 0); len(got) != 1 {
				t.Fatalf("ann's posts after repeats: %v", ids(got))
			}
		}},
	})
}

func ids(ps []domain.Post) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}
