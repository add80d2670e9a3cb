package contract

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// BlockStore runs the contract of ports.BlockStore.
func BlockStore(t *testing.T, newStore func(t *testing.T) ports.BlockStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewBlocks)
	const (
		alice = "https://local.example/users/alice"
		bob   = "https://r.example/u/bob"
		carl  = "https://s.example/users/carl"
	)
	block := func(t *testing.T, actor, target string, kind domain.BlockKind, at time.Time) domain.ActorBlock {
		t.Helper()
		act := ""
		if kind == domain.BlockKindBlock {
			act = actor + "/activities/block-" + target
		}
		b, err := domain.NewActorBlock(actor, target, kind, act, at)
		mustNil(t, err, "block")
		return b
	}
	add := func(t *testing.T, s ports.BlockStore, b domain.ActorBlock) bool {
		t.Helper()
		created, err := s.AddBlock(ctx(t), b)
		mustNil(t, err, "add block")
		return created
	}
	// show prints blocks as actor>target:kind@activity, one per line, so
	// a failure shows what differs.
	show := func(bs []domain.ActorBlock) string {
		var out []string
		for _, b := range bs {
			out = append(out, fmt.Sprintf("%s>%s:%s@%s", b.ActorURI, b.TargetURI, b.Kind, b.ActivityID))
		}
		return strings.Join(out, "\n")
	}
	sorted := func(bs []domain.ActorBlock) string {
		lines := strings.Split(show(bs), "\n")
		for i := range lines {
			for j := i + 1; j < len(lines); j++ {
				if lines[j] < lines[i] {
					lines[i], lines[j] = lines[j], lines[i]
				}
			}
		}
		return strings.Join(lines, "\n")
	}
	runCases(t, newStore, opts, []testCase[ports.BlockStore]{
		{"AddIsUniquePerActorTargetAndKind", func(t *testing.T, s ports.BlockStore) {
			first := block(t, alice, bob, domain.BlockKindBlock, base)
			if !add(t, s, first) {
				t.Fatal("first block not created")
			}
			again := first
			again.ActivityID, again.CreatedAt = alice+"/activities/other", base.Add(time.Hour)
			if add(t, s, again) {
				t.Fatal("a second block of the same target created a row")
			}
			// A mute of the same target is a row of its own.
			if !add(t, s, block(t, alice, bob, domain.BlockKindMute, base)) {
				t.Fatal("a mute beside a block not created")
			}
			got, err := s.BlocksBy(ctx(t), alice, domain.BlockKindBlock, "", 10)
			mustNil(t, err, "blocks by")
			if len(got) != 1 || got[0].ActivityID != first.ActivityID {
				t.Fatalf("the first block is not kept:\n%s", show(got))
			}
			sameTime(t, got[0].CreatedAt, base, "createdAt")
		}},
		{"InvalidIsRefusedAndNothingStored", func(t *testing.T, s ports.BlockStore) {
			for name, b := range map[string]domain.ActorBlock{
				"no target": {ActorURI: alice, Kind: domain.BlockKindBlock, CreatedAt: base},
				"itself":    {ActorURI: alice, TargetURI: alice, Kind: domain.BlockKindBlock, CreatedAt: base},
				"kind":      {ActorURI: alice, TargetURI: bob, Kind: "ignore", CreatedAt: base},
			} {
				_, err := s.AddBlock(ctx(t), b)
				mustIs(t, err, domain.ErrInvalidInput, name)
			}
			got, err := s.Between(ctx(t), alice, bob)
			mustNil(t, err, "between")
			if len(got) != 0 {
				t.Fatalf("stored:\n%s", show(got))
			}
		}},
		{"BetweenSeesBothWaysAndOnlyThePair", func(t *testing.T, s ports.BlockStore) {
			add(t, s, block(t, alice, bob, domain.BlockKindBlock, base))
			add(t, s, block(t, bob, alice, domain.BlockKindBlock, base))
			add(t, s, block(t, alice, bob, domain.BlockKindMute, base))
			add(t, s, block(t, alice, carl, domain.BlockKindBlock, base))
			add(t, s, block(t, carl, bob, domain.BlockKindBlock, base))
			for _, pair := range [][2]string{{alice, bob}, {bob, alice}} {
				got, err := s.Between(ctx(t), pair[0], pair[1])
				mustNil(t, err, "between")
				want := sorted([]domain.ActorBlock{
					block(t, alice, bob, domain.BlockKindBlock, base), block(t, alice, bob, domain.BlockKindMute, base),
					block(t, bob, alice, domain.BlockKindBlock, base),
				})
				if sorted(got) != want {
					t.Fatalf("between %s and %s:\n got %s\nwant %s", pair[0], pair[1], sorted(got), want)
				}
			}
			got, err := s.Between(ctx(t), bob, "https://r.example/u/nobody")
			mustNil(t, err, "between strangers")
			if len(got) != 0 {
				t.Fatalf("blocks between strangers:\n%s", show(got))
			}
		}},
		{"RemoveReturnsTheBlockAndLeavesTheOthers", func(t *testing.T, s ports.BlockStore) {
			b := block(t, alice, bob, domain.BlockKindBlock, base)
			add(t, s, b)
			add(t, s, block(t, alice, bob, domain.BlockKindMute, base))
			add(t, s, block(t, bob, alice, domain.BlockKindBlock, base))
			got, err := s.RemoveBlock(ctx(t), alice, bob, domain.BlockKindBlock)
			mustNil(t, err, "remove")
			if got.ActivityID != b.ActivityID || got.ActorURI != alice || got.TargetURI != bob || got.Kind != domain.BlockKindBlock {
				t.Fatalf("removed %+v, want %+v", got, b)
			}
			_, err = s.RemoveBlock(ctx(t), alice, bob, domain.BlockKindBlock)
			mustIs(t, err, domain.ErrNotFound, "remove again")
			left, err := s.Between(ctx(t), alice, bob)
			mustNil(t, err, "between")
			want := sorted([]domain.ActorBlock{block(t, alice, bob, domain.BlockKindMute, base), block(t, bob, alice, domain.BlockKindBlock, base)})
			if sorted(left) != want {
				t.Fatalf("left:\n got %s\nwant %s", sorted(left), want)
			}
		}},
		{"BlocksByPagesByTargetAndKind", func(t *testing.T, s ports.BlockStore) {
			var want []string
			for i := range 5 {
				target := fmt.Sprintf("https://r.example/u/%02d", 4-i)
				add(t, s, block(t, alice, target, domain.BlockKindBlock, base.Add(time.Duration(i)*time.Minute)))
				want = append([]string{target}, want...)
			}
			add(t, s, block(t, alice, "https://r.example/u/muted", domain.BlockKindMute, base))
			add(t, s, block(t, bob, "https://r.example/u/00", domain.BlockKindBlock, base))
			var got []string
			after := ""
			for range 4 {
				page, err := s.BlocksBy(ctx(t), alice, domain.BlockKindBlock, after, 2)
				mustNil(t, err, "page")
				if len(page) == 0 {
					break
				}
				if len(page) > 2 {
					t.Fatalf("page of %d, limit 2", len(page))
				}
				for _, b := range page {
					if b.ActorURI != alice || b.Kind != domain.BlockKindBlock {
						t.Fatalf("listed %+v", b)
					}
					got = append(got, b.TargetURI)
				}
				after = page[len(page)-1].TargetURI
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("pages:\n got %v\nwant %v", got, want)
			}
			mutes, err := s.BlocksBy(ctx(t), alice, domain.BlockKindMute, "", 10)
			mustNil(t, err, "mutes")
			if len(mutes) != 1 || mutes[0].TargetURI != "https://r.example/u/muted" || mutes[0].ActivityID != "" {
				t.Fatalf("mutes:\n%s", show(mutes))
			}
		}},
		{"OfTargetsReadsOneActorsAmongMany", func(t *testing.T, s ports.BlockStore) {
			add(t, s, block(t, alice, bob, domain.BlockKindBlock, base))
			add(t, s, block(t, alice, carl, domain.BlockKindMute, base))
			add(t, s, block(t, bob, carl, domain.BlockKindBlock, base))
			add(t, s, block(t, carl, alice, domain.BlockKindBlock, base))
			got, err := s.OfTargets(ctx(t), alice, []string{carl, bob, "https://r.example/u/else", bob})
			mustNil(t, err, "of targets")
			want := sorted([]domain.ActorBlock{block(t, alice, bob, domain.BlockKindBlock, base), block(t, alice, carl, domain.BlockKindMute, base)})
			if sorted(got) != want {
				t.Fatalf("of targets:\n got %s\nwant %s", sorted(got), want)
			}
			none, err := s.OfTargets(ctx(t), alice, nil)
			mustNil(t, err, "of no targets")
			if len(none) != 0 {
				t.Fatalf("of no targets:\n%s", show(none))
			}
		}},
		{"ConcurrentAddsCreateOne", func(t *testing.T, s ports.BlockStore) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			created := 0
			b := block(t, alice, bob, domain.BlockKindBlock, base)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := s.AddBlock(ctx(t), b)
					if err != nil {
						t.Errorf("add: %v", err)
						return
					}
					if c {
						mu.Lock()
						created++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if created != 1 {
				t.Fatalf("%d adds created, want 1", created)
			}
		}},
	})
}
