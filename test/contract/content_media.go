package contract

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// PostsAndPolls is a post store that keeps polls too, as every store does
// (one ContentStore implements both ports on the same data).
type PostsAndPolls interface {
	ports.PostStore
	ports.PollStore
}

// richExtras is a post carrying one of everything of SPEC §12.
func richExtras() domain.Extras {
	return domain.Extras{
		Summary: "spoilers: <the end>", Sensitive: true, Language: "fr-CA", URL: "https://r.example/@bob/1",
		Attachments: []domain.Attachment{
			{Kind: domain.MediaImage, MediaType: "image/png", URL: "https://r.example/media/1.png", Name: "a cat, asleep", Blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
				Width: 640, Height: 480, Focal: &[2]float64{-0.5, 0.25}},
			{Kind: domain.MediaDocument, URL: "https://r.example/media/2.bin"},
		},
		Hashtags: []string{"cats", "café"},
		Emojis:   []domain.Emoji{{Shortcode: "blobcat", IconURL: "https://r.example/emoji/blobcat.png", MediaType: "image/png"}},
	}
}

func withPoll(e domain.Extras, multiple bool, options ...string) domain.Extras {
	p := &domain.Poll{Multiple: multiple, EndTime: base.Add(time.Hour)}
	for _, o := range options {
		p.Options = append(p.Options, domain.PollOption{Name: o})
	}
	e.Poll = p
	return e
}

func sameExtras(t *testing.T, got, want domain.Extras, what string) {
	t.Helper()
	gp, wp := got.Poll, want.Poll
	got.Poll, want.Poll = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: extras\n got  %+v\n want %+v", what, got, want)
	}
	if (gp == nil) != (wp == nil) {
		t.Fatalf("%s: poll %+v, want %+v", what, gp, wp)
	}
	if gp == nil {
		return
	}
	sameTime(t, gp.EndTime, wp.EndTime, what+": poll end")
	sameTime(t, gp.Closed, wp.Closed, what+": poll closed")
	if gp.Multiple != wp.Multiple || gp.Voters != wp.Voters || !reflect.DeepEqual(gp.Options, wp.Options) {
		t.Fatalf("%s: poll %+v, want %+v", what, *gp, *wp)
	}
}

// PostExtras runs the part of the contract of ports.PostStore about what a
// post carries beside its text (SPEC §12) and the hashtag listing.
func PostExtras(t *testing.T, newStore func(t *testing.T) ports.PostStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewPosts)
	const bob = "https://r.example/users/bob"
	runCases(t, newStore, opts, []testCase[ports.PostStore]{
		{"ExtrasAreKeptAndRead", func(t *testing.T, s ports.PostStore) {
			p := post(t, 1, bob, "", base)
			p.Extras = withPoll(richExtras(), true, "yes", "no", "<b>maybe</b>")
			p.Poll.Options[0].Votes, p.Poll.Voters = 3, 2
			_, err := s.CreatePost(ctx(t), p)
			mustNil(t, err, "create")
			got, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustNil(t, err, "read")
			sameExtras(t, got.Extras, p.Extras, "by URI")
			list, err := s.PostsByAuthor(ctx(t), bob, time.Time{}, 10)
			mustNil(t, err, "list")
			if len(list) != 1 {
				t.Fatalf("listed %d posts", len(list))
			}
			sameExtras(t, list[0].Extras, p.Extras, "listed")
			// A post without extras reads without any.
			plain := post(t, 2, bob, "", base)
			_, err = s.CreatePost(ctx(t), plain)
			mustNil(t, err, "create plain")
			got, err = s.PostByObjectURI(ctx(t), plain.ObjectURI)
			mustNil(t, err, "read plain")
			if !got.Extras.Empty() {
				t.Fatalf("a post without extras reads with %+v", got.Extras)
			}
		}},
		{"DirectPostExtras", func(t *testing.T, s ports.PostStore) {
			dm, err := domain.NewRemoteDmNote("d1", "https://r.example/notes/d1", bob, "", []string{"https://h.example/users/alice"}, base, richExtras())
			mustNil(t, err, "a direct note with media and no text")
			_, err = s.CreateDm(ctx(t), dm)
			mustNil(t, err, "create")
			got, err := s.DmByObjectURI(ctx(t), dm.ObjectURI)
			mustNil(t, err, "read")
			sameExtras(t, got.Extras, dm.Extras, "direct post")
			thread, err := s.DmThread(ctx(t), dm.ParticipantsKey, time.Time{}, 10)
			mustNil(t, err, "thread")
			if len(thread) != 1 {
				t.Fatalf("thread of %d", len(thread))
			}
			sameExtras(t, thread[0].Extras, dm.Extras, "thread")
		}},
		{"UpdateContentReplacesExtrasButThePoll", func(t *testing.T, s ports.PostStore) {
			p := post(t, 1, bob, "", base)
			p.Extras = withPoll(richExtras(), false, "a", "b")
			p.Poll.Options[1].Votes, p.Poll.Voters = 4, 4
			_, err := s.CreatePost(ctx(t), p)
			mustNil(t, err, "create")
			edit := domain.Extras{Summary: "new warning", Hashtags: []string{"dogs"}, Poll: &domain.Poll{Options: []domain.PollOption{{Name: "z"}}}}
			changed, err := s.UpdateContent(ctx(t), p.ObjectURI, "edited", edit, base.Add(time.Minute))
			mustNil(t, err, "update")
			if !changed {
				t.Fatal("the edit was not applied")
			}
			got, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustNil(t, err, "read")
			want := edit
			want.Poll = p.Poll
			sameExtras(t, got.Extras, want, "after the edit")
			dm, _ := domain.NewRemoteDmPost("d1", "https://r.example/notes/d1", bob, "hi", []string{"https://h.example/users/alice"}, base)
			_, err = s.CreateDm(ctx(t), dm)
			mustNil(t, err, "create dm")
			_, err = s.UpdateContent(ctx(t), dm.ObjectURI, "edited", domain.Extras{Sensitive: true}, base.Add(time.Minute))
			mustNil(t, err, "update dm")
			gotDm, err := s.DmByObjectURI(ctx(t), dm.ObjectURI)
			mustNil(t, err, "read dm")
			if !gotDm.Sensitive || gotDm.Content != "edited" {
				t.Fatalf("dm after the edit: %+v", gotDm)
			}
		}},
		{"PostsTaggedListsPublicPostsNewestFirst", func(t *testing.T, s ports.PostStore) {
			for i, c := range []struct {
				vis  domain.Visibility
				tags []string
			}{
				{domain.VisibilityPublic, []string{"cats"}},
				{domain.VisibilityPublic, []string{"cats", "dogs"}},
				{domain.VisibilityFollowers, []string{"cats"}}, // not listed: followers only
				{domain.VisibilityPublic, []string{"dogs"}},
				{domain.VisibilityPublic, []string{"cats"}},
			} {
				p := post(t, i+1, bob, "", base.Add(time.Duration(i)*time.Minute))
				p.Visibility, p.Hashtags = c.vis, c.tags
				_, err := s.CreatePost(ctx(t), p)
				mustNil(t, err, "create")
			}
			got, err := s.PostsTagged(ctx(t), "cats", time.Time{}, 10)
			mustNil(t, err, "tagged")
			if want := []string{"p005", "p002", "p001"}; !slices.Equal(ids(got), want) {
				t.Fatalf("#cats lists %v, want %v", ids(got), want)
			}
			got, err = s.PostsTagged(ctx(t), "cats", base.Add(4*time.Minute), 1)
			mustNil(t, err, "tagged before")
			if want := []string{"p002"}; !slices.Equal(ids(got), want) {
				t.Fatalf("#cats before the last, one: %v, want %v", ids(got), want)
			}
			// An edit changes what a post is listed under; a delete
			// removes it; so does its author's deletion.
			_, err = s.UpdateContent(ctx(t), "https://h.example/notes/002", "x", domain.Extras{Hashtags: []string{"birds"}}, base.Add(time.Hour))
			mustNil(t, err, "edit")
			mustNil(t, s.DeletePost(ctx(t), "https://h.example/notes/005"), "delete")
			got, err = s.PostsTagged(ctx(t), "cats", time.Time{}, 10)
			mustNil(t, err, "tagged after")
			if want := []string{"p001"}; !slices.Equal(ids(got), want) {
				t.Fatalf("#cats after an edit and a delete: %v, want %v", ids(got), want)
			}
			got, err = s.PostsTagged(ctx(t), "birds", time.Time{}, 10)
			mustNil(t, err, "tagged birds")
			if want := []string{"p002"}; !slices.Equal(ids(got), want) {
				t.Fatalf("#birds: %v, want %v", ids(got), want)
			}
			_, err = s.DeleteActorContent(ctx(t), bob)
			mustNil(t, err, "delete the author's content")
			for _, tag := range []string{"cats", "dogs", "birds"} {
				got, err = s.PostsTagged(ctx(t), tag, time.Time{}, 10)
				mustNil(t, err, "tagged after the author's deletion")
				if len(got) != 0 {
					t.Fatalf("#%s lists %v after its author's deletion", tag, ids(got))
				}
			}
		}},
	})
}

// PollStore runs the contract of ports.PollStore.
func PollStore(t *testing.T, newStore func(t *testing.T) PostsAndPolls, opts ...Option) {
	const alice = "https://h.example/users/alice"
	voter := func(i int) string { return fmt.Sprintf("https://r%d.example/users/v", i) }
	localPoll := func(t *testing.T, s PostsAndPolls, n int, multiple bool, options ...string) domain.Post {
		t.Helper()
		p := post(t, n, alice, "", base)
		p.Local, p.Extras = true, withPoll(domain.Extras{}, multiple, options...)
		_, err := s.CreatePost(ctx(t), p)
		mustNil(t, err, "create poll")
		return p
	}
	counts := func(p domain.Poll) []int {
		out := []int{}
		for _, o := range p.Options {
			out = append(out, o.Votes)
		}
		return out
	}
	runCases(t, newStore, opts, []testCase[PostsAndPolls]{
		{"VotesCountOncePerVoterAndOption", func(t *testing.T, s PostsAndPolls) {
			p := localPoll(t, s, 1, true, "a", "b", "c")
			poll, n, err := s.AddVotes(ctx(t), p.ObjectURI, voter(1), []string{"a", "c"}, base)
			mustNil(t, err, "vote")
			if n != 2 || !slices.Equal(counts(poll), []int{1, 0, 1}) || poll.Voters != 1 {
				t.Fatalf("after one voter's two votes: %d recorded, %+v", n, poll)
			}
			poll, n, err = s.AddVotes(ctx(t), p.ObjectURI, voter(1), []string{"c", "b"}, base.Add(time.Second))
			mustNil(t, err, "vote again")
			if n != 1 || !slices.Equal(counts(poll), []int{1, 1, 1}) || poll.Voters != 1 {
				t.Fatalf("a repeated vote counted again: %d recorded, %+v", n, poll)
			}
			poll, _, err = s.AddVotes(ctx(t), p.ObjectURI, voter(2), []string{"a"}, base.Add(2*time.Second))
			mustNil(t, err, "second voter")
			if !slices.Equal(counts(poll), []int{2, 1, 1}) || poll.Voters != 2 {
				t.Fatalf("after a second voter: %+v", poll)
			}
			got, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustNil(t, err, "read")
			if !slices.Equal(counts(*got.Poll), []int{2, 1, 1}) || got.Poll.Voters != 2 {
				t.Fatalf("the post reads its poll as %+v", *got.Poll)
			}
			mine, err := s.VotesOf(ctx(t), p.ObjectURI, voter(1))
			mustNil(t, err, "votes of")
			if !slices.Equal(mine, []string{"a", "c", "b"}) {
				t.Fatalf("voter 1's votes: %v", mine)
			}
			voters, err := s.Voters(ctx(t), p.ObjectURI, "", 10)
			mustNil(t, err, "voters")
			if !slices.Equal(voters, []string{voter(1), voter(2)}) {
				t.Fatalf("voters: %v", voters)
			}
			voters, err = s.Voters(ctx(t), p.ObjectURI, voter(1), 1)
			mustNil(t, err, "voters after")
			if !slices.Equal(voters, []string{voter(2)}) {
				t.Fatalf("voters after the first: %v", voters)
			}
		}},
		{"SingleChoiceTakesOneVotePerVoter", func(t *testing.T, s PostsAndPolls) {
			p := localPoll(t, s, 1, false, "a", "b")
			_, n, err := s.AddVotes(ctx(t), p.ObjectURI, voter(1), []string{"b"}, base)
			mustNil(t, err, "vote")
			poll, m, err := s.AddVotes(ctx(t), p.ObjectURI, voter(1), []string{"a"}, base)
			mustNil(t, err, "vote for another option")
			if n != 1 || m != 0 || !slices.Equal(counts(poll), []int{0, 1}) || poll.Voters != 1 {
				t.Fatalf("a second vote in a single-choice poll: %d then %d recorded, %+v", n, m, poll)
			}
		}},
		{"ConcurrentVotesCountOnce", func(t *testing.T, s PostsAndPolls) {
			p := localPoll(t, s, 1, false, "a", "b")
			const voters, tries = 8, 3
			var wg sync.WaitGroup
			var mu sync.Mutex
			recorded := map[string]int{}
			for i := 0; i < voters*tries; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					v := voter(i % voters)
					_, n, err := s.AddVotes(ctx(t), p.ObjectURI, v, []string{[]string{"a", "b"}[i%2]}, base)
					if err != nil {
						t.Errorf("vote: %v", err)
						return
					}
					mu.Lock()
					recorded[v] += n
					mu.Unlock()
				}(i)
			}
			wg.Wait()
			for v, n := range recorded {
				if n != 1 {
					t.Fatalf("%s has %d votes recorded in a single-choice poll", v, n)
				}
			}
			got, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustNil(t, err, "read")
			if total := got.Poll.Options[0].Votes + got.Poll.Options[1].Votes; total != voters || got.Poll.Voters != voters {
				t.Fatalf("after %d voters racing: %+v", voters, *got.Poll)
			}
		}},
		{"RemotePollVotesAreRecordedNotCounted", func(t *testing.T, s PostsAndPolls) {
			p := post(t, 1, "https://r.example/users/bob", "", base)
			p.Extras = withPoll(domain.Extras{}, false, "a", "b")
			p.Poll.Options[0].Votes, p.Poll.Voters = 7, 7
			_, err := s.CreatePost(ctx(t), p)
			mustNil(t, err, "create")
			poll, n, err := s.AddVotes(ctx(t), p.ObjectURI, alice, []string{"b"}, base)
			mustNil(t, err, "vote")
			if n != 1 || !slices.Equal(counts(poll), []int{7, 0}) {
				t.Fatalf("our vote in a remote poll: %d recorded, counts %v (its author's are 7, 0)", n, counts(poll))
			}
			_, n, err = s.AddVotes(ctx(t), p.ObjectURI, alice, []string{"b"}, base)
			mustNil(t, err, "vote again")
			if n != 0 {
				t.Fatal("a second vote in a remote poll was recorded")
			}
			due, err := s.PollsDue(ctx(t), base.Add(2*time.Hour), 10)
			mustNil(t, err, "due")
			if len(due) != 0 {
				t.Fatalf("a remote poll is due here: %+v", due)
			}
		}},
		{"SetPollDoesNotReopen", func(t *testing.T, s PostsAndPolls) {
			p := post(t, 1, "https://r.example/users/bob", "", base)
			p.Extras = withPoll(domain.Extras{}, false, "a", "b")
			_, err := s.CreatePost(ctx(t), p)
			mustNil(t, err, "create")
			counted := *p.Poll
			counted.Options = []domain.PollOption{{Name: "a", Votes: 2}, {Name: "b", Votes: 1}}
			counted.Voters = 3
			changed, err := s.SetPoll(ctx(t), p.ObjectURI, counted)
			mustNil(t, err, "set")
			if !changed {
				t.Fatal("new counts not applied")
			}
			closed := counted
			closed.Closed = base.Add(time.Hour)
			_, err = s.SetPoll(ctx(t), p.ObjectURI, closed)
			mustNil(t, err, "close")
			changed, err = s.SetPoll(ctx(t), p.ObjectURI, counted)
			mustNil(t, err, "a late update")
			if changed {
				t.Fatal("an open poll replaced a closed one")
			}
			got, err := s.PostByObjectURI(ctx(t), p.ObjectURI)
			mustNil(t, err, "read")
			sameExtras(t, got.Extras, domain.Extras{Poll: &closed}, "closed poll")
			_, err = s.SetPoll(ctx(t), "https://r.example/notes/none", counted)
			mustIs(t, err, domain.ErrNotFound, "no such post")
			plain := post(t, 2, "https://r.example/users/bob", "", base)
			_, err = s.CreatePost(ctx(t), plain)
			mustNil(t, err, "create plain")
			_, err = s.SetPoll(ctx(t), plain.ObjectURI, counted)
			mustIs(t, err, domain.ErrNotFound, "a post without a poll")
			_, _, err = s.AddVotes(ctx(t), plain.ObjectURI, alice, []string{"a"}, base)
			mustIs(t, err, domain.ErrNotFound, "a vote in a post without a poll")
		}},
		{"PollsDueChangesAndClose", func(t *testing.T, s PostsAndPolls) {
			p1 := localPoll(t, s, 1, false, "a", "b")
			p2 := post(t, 2, alice, "", base)
			p2.Local, p2.Extras = true, withPoll(domain.Extras{}, false, "x", "y")
			p2.Poll.EndTime = base.Add(2 * time.Hour)
			_, err := s.CreatePost(ctx(t), p2)
			mustNil(t, err, "create")
			due, err := s.PollsDue(ctx(t), base, 10)
			mustNil(t, err, "due")
			if len(due) != 0 {
				t.Fatalf("polls without votes and not ended are due: %+v", due)
			}
			_, _, err = s.AddVotes(ctx(t), p2.ObjectURI, voter(1), []string{"y"}, base)
			mustNil(t, err, "vote")
			due, err = s.PollsDue(ctx(t), base, 10)
			mustNil(t, err, "due")
			if len(due) != 1 || due[0].ObjectURI != p2.ObjectURI || !due[0].Changed || due[0].Expired {
				t.Fatalf("after a vote: %+v", due)
			}
			took, err := s.TakePollChange(ctx(t), p2.ObjectURI)
			mustNil(t, err, "take")
			again, err := s.TakePollChange(ctx(t), p2.ObjectURI)
			mustNil(t, err, "take again")
			if !took || again {
				t.Fatalf("the change taken %v, then %v", took, again)
			}
			due, err = s.PollsDue(ctx(t), base.Add(90*time.Minute), 10)
			mustNil(t, err, "due later")
			if len(due) != 1 || due[0].ObjectURI != p1.ObjectURI || !due[0].Expired {
				t.Fatalf("after the first poll's end: %+v", due)
			}
			sameTime(t, due[0].EndTime, p1.Poll.EndTime, "end time")
			// Of many closing it at once, one closes it.
			var wg sync.WaitGroup
			var mu sync.Mutex
			closers := 0
			for i := 0; i < 6; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, closed, err := s.ClosePoll(ctx(t), p1.ObjectURI, base.Add(90*time.Minute))
					if err != nil {
						t.Errorf("close: %v", err)
						return
					}
					if closed {
						mu.Lock()
						closers++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if closers != 1 {
				t.Fatalf("%d callers closed the poll", closers)
			}
			got, err := s.PostByObjectURI(ctx(t), p1.ObjectURI)
			mustNil(t, err, "read")
			sameTime(t, got.Poll.Closed, base.Add(90*time.Minute), "closed at")
			poll, n, err := s.AddVotes(ctx(t), p1.ObjectURI, voter(3), []string{"a"}, base.Add(2*time.Hour))
			mustNil(t, err, "a vote after the close")
			if n != 0 || poll.Voters != 0 {
				t.Fatalf("a vote after the close was recorded: %d, %+v", n, poll)
			}
			due, err = s.PollsDue(ctx(t), base.Add(90*time.Minute), 10)
			mustNil(t, err, "due after close")
			if len(due) != 0 {
				t.Fatalf("a closed poll is still due: %+v", due)
			}
			_, _, err = s.ClosePoll(ctx(t), "https://h.example/notes/none", base)
			mustIs(t, err, domain.ErrNotFound, "close no such poll")
		}},
		{"DeleteRemovesVotes", func(t *testing.T, s PostsAndPolls) {
			p := localPoll(t, s, 1, false, "a", "b")
			_, _, err := s.AddVotes(ctx(t), p.ObjectURI, voter(1), []string{"a"}, base)
			mustNil(t, err, "vote")
			mustNil(t, s.DeletePost(ctx(t), p.ObjectURI), "delete")
			due, err := s.PollsDue(ctx(t), base.Add(2*time.Hour), 10)
			mustNil(t, err, "due")
			voters, err := s.Voters(ctx(t), p.ObjectURI, "", 10)
			mustNil(t, err, "voters")
			if len(due) != 0 || len(voters) != 0 {
				t.Fatalf("a deleted poll left %v due and %v voters", due, voters)
			}
		}},
	})
}
