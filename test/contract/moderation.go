package contract

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// ModerationStore runs the contract of ports.ModerationStore.
func ModerationStore(t *testing.T, newStore func(t *testing.T) ports.ModerationStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewModeration)
	block := func(t *testing.T, d string, s domain.Severity, reason string, at time.Time) domain.DomainBlock {
		t.Helper()
		b, err := domain.NewDomainBlock(d, s, reason, at)
		mustNil(t, err, "block "+d)
		return b
	}
	sameBlocks := func(t *testing.T, got []domain.DomainBlock, want ...domain.DomainBlock) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%d blocks, want %d: %+v", len(got), len(want), got)
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Domain != w.Domain || g.Severity != w.Severity || g.Reason != w.Reason || g.PublicComment != w.PublicComment ||
				g.RejectMedia != w.RejectMedia || g.RejectReports != w.RejectReports || g.Obfuscate != w.Obfuscate {
				t.Fatalf("block %d:\n got %+v\nwant %+v", i, g, w)
			}
			sameTime(t, g.CreatedAt, w.CreatedAt, "block "+w.Domain+" createdAt")
		}
	}
	blocks := func(t *testing.T, s ports.ModerationStore) []domain.DomainBlock {
		t.Helper()
		got, err := s.DomainBlocks(ctx(t))
		mustNil(t, err, "domain blocks")
		return got
	}
	allows := func(t *testing.T, s ports.ModerationStore) string {
		t.Helper()
		got, err := s.DomainAllows(ctx(t))
		mustNil(t, err, "domain allows")
		var b strings.Builder
		for _, a := range got {
			fmt.Fprintf(&b, "%s@%s ", a.Domain, a.CreatedAt.UTC().Format(time.RFC3339))
		}
		return strings.TrimSpace(b.String())
	}
	runCases(t, newStore, opts, []testCase[ports.ModerationStore]{
		{"DomainBlocksKeepEveryFieldListedByDomain", func(t *testing.T, s ports.ModerationStore) {
			if got := blocks(t, s); len(got) != 0 {
				t.Fatalf("blocks in an empty store: %+v", got)
			}
			spam := block(t, "spam.example", domain.SeveritySuspend, "spam — 🚫 every hour", base)
			spam.PublicComment, spam.RejectMedia, spam.RejectReports, spam.Obfuscate = "Spam", true, true, true
			loud := block(t, "loud.example.org", domain.SeveritySilence, "", base.Add(time.Hour))
			loud.RejectMedia = true
			port := block(t, "127.0.0.1:4000", domain.SeveritySuspend, strings.Repeat("é", domain.MaxReasonLength), base.Add(2*time.Hour))
			for _, b := range []domain.DomainBlock{spam, loud, port} {
				mustNil(t, s.AddDomainBlock(ctx(t), b), "add "+b.Domain)
			}
			sameBlocks(t, blocks(t, s), port, loud, spam)
		}},
		{"ABlockPerDomain", func(t *testing.T, s ports.ModerationStore) {
			first := block(t, "spam.example", domain.SeveritySilence, "first", base)
			mustNil(t, s.AddDomainBlock(ctx(t), first), "add")
			again := block(t, "spam.example", domain.SeveritySuspend, "second", base.Add(time.Hour))
			err := s.AddDomainBlock(ctx(t), again)
			mustIs(t, err, domain.ErrAlreadyExists, "a second block of the domain")
			if errors.Is(err, domain.ErrNameTaken) {
				t.Fatalf("a domain blocked twice reads as a name taken: %v", err)
			}
			sameBlocks(t, blocks(t, s), first)
			// Another domain, a subdomain of it, is a block of its own.
			sub := block(t, "a.spam.example", domain.SeveritySuspend, "", base)
			mustNil(t, s.AddDomainBlock(ctx(t), sub), "a subdomain's block")
			sameBlocks(t, blocks(t, s), sub, first)
		}},
		{"UpdateKeepsCreatedAt", func(t *testing.T, s ports.ModerationStore) {
			b := block(t, "spam.example", domain.SeveritySilence, "noisy", base)
			b.RejectMedia = true
			mustNil(t, s.AddDomainBlock(ctx(t), b), "add")
			other := block(t, "other.example", domain.SeveritySilence, "other", base)
			mustNil(t, s.AddDomainBlock(ctx(t), other), "add other")
			changed := block(t, "spam.example", domain.SeveritySuspend, "worse", base.Add(48*time.Hour))
			changed.PublicComment, changed.RejectReports, changed.Obfuscate = "Spam", true, true
			mustNil(t, s.UpdateDomainBlock(ctx(t), changed), "update")
			want := changed
			want.CreatedAt = base
			sameBlocks(t, blocks(t, s), other, want)
			// And back: every field is replaced, false and empty included.
			mustNil(t, s.UpdateDomainBlock(ctx(t), b), "update back")
			sameBlocks(t, blocks(t, s), other, b)
			mustIs(t, s.UpdateDomainBlock(ctx(t), block(t, "none.example", domain.SeveritySuspend, "", base)), domain.ErrNotFound, "update no block")
			sameBlocks(t, blocks(t, s), other, b)
		}},
		{"RemoveBlocks", func(t *testing.T, s ports.ModerationStore) {
			a, b := block(t, "a.example", domain.SeveritySuspend, "", base), block(t, "b.example", domain.SeveritySilence, "", base)
			mustNil(t, s.AddDomainBlock(ctx(t), a), "add a")
			mustNil(t, s.AddDomainBlock(ctx(t), b), "add b")
			mustNil(t, s.RemoveDomainBlock(ctx(t), "a.example"), "remove")
			sameBlocks(t, blocks(t, s), b)
			mustIs(t, s.RemoveDomainBlock(ctx(t), "a.example"), domain.ErrNotFound, "remove twice")
			for _, d := range []string{"B.example", "x.b.example", "example", ""} {
				mustIs(t, s.RemoveDomainBlock(ctx(t), d), domain.ErrNotFound, fmt.Sprintf("remove %q", d))
			}
			sameBlocks(t, blocks(t, s), b)
			mustNil(t, s.AddDomainBlock(ctx(t), a), "a domain blocked again after its block was lifted")
		}},
		{"InvalidBlocksRefused", func(t *testing.T, s ports.ModerationStore) {
			for name, b := range map[string]domain.DomainBlock{
				"no severity":       {Domain: "a.example", CreatedAt: base},
				"an odd severity":   {Domain: "a.example", Severity: "ban", CreatedAt: base},
				"not normalized":    {Domain: "A.example", Severity: domain.SeveritySuspend, CreatedAt: base},
				"not a domain":      {Domain: "https://a.example/", Severity: domain.SeveritySuspend, CreatedAt: base},
				"no domain":         {Severity: domain.SeveritySuspend, CreatedAt: base},
				"a reason too long": {Domain: "a.example", Severity: domain.SeveritySuspend, Reason: strings.Repeat("x", domain.MaxReasonLength+1), CreatedAt: base},
			} {
				mustIs(t, s.AddDomainBlock(ctx(t), b), domain.ErrInvalidInput, "add "+name)
				mustIs(t, s.UpdateDomainBlock(ctx(t), b), domain.ErrInvalidInput, "update to "+name)
			}
			if got := blocks(t, s); len(got) != 0 {
				t.Fatalf("refused blocks were stored: %+v", got)
			}
		}},
		{"DomainAllows", func(t *testing.T, s ports.ModerationStore) {
			if got := allows(t, s); got != "" {
				t.Fatalf("allows in an empty store: %s", got)
			}
			for i, d := range []string{"friends.example", "a.friends.example", "127.0.0.1:4000"} {
				a, err := domain.NewDomainAllow(d, base.Add(time.Duration(i)*time.Hour))
				mustNil(t, err, "allow")
				mustNil(t, s.AddDomainAllow(ctx(t), a), "add "+d)
			}
			const all = "127.0.0.1:4000@2026-06-01T14:00:00Z a.friends.example@2026-06-01T13:00:00Z friends.example@2026-06-01T12:00:00Z"
			if got := allows(t, s); got != all {
				t.Fatalf("allows:\n got %s\nwant %s", got, all)
			}
			again, _ := domain.NewDomainAllow("friends.example", base.Add(9*time.Hour))
			mustIs(t, s.AddDomainAllow(ctx(t), again), domain.ErrAlreadyExists, "allow twice")
			mustIs(t, s.AddDomainAllow(ctx(t), domain.DomainAllow{Domain: "Friends.example", CreatedAt: base}), domain.ErrInvalidInput, "allow a domain not normalized")
			if got := allows(t, s); got != all {
				t.Fatalf("allows after refused adds:\n got %s\nwant %s", got, all)
			}
			mustNil(t, s.RemoveDomainAllow(ctx(t), "a.friends.example"), "remove")
			mustIs(t, s.RemoveDomainAllow(ctx(t), "a.friends.example"), domain.ErrNotFound, "remove twice")
			mustIs(t, s.RemoveDomainAllow(ctx(t), "nobody.example"), domain.ErrNotFound, "remove none")
			if got := allows(t, s); got != "127.0.0.1:4000@2026-06-01T14:00:00Z friends.example@2026-06-01T12:00:00Z" {
				t.Fatalf("allows after a removal: %s", got)
			}
			// Blocks and allows are apart: a domain may be in both, and
			// removing one leaves the other.
			mustNil(t, s.AddDomainBlock(ctx(t), block(t, "friends.example", domain.SeveritySilence, "", base)), "block an allowed domain")
			mustIs(t, s.RemoveDomainBlock(ctx(t), "127.0.0.1:4000"), domain.ErrNotFound, "remove an allow as a block")
			mustNil(t, s.RemoveDomainAllow(ctx(t), "friends.example"), "remove the allow")
			if got := blocks(t, s); len(got) != 1 || got[0].Domain != "friends.example" {
				t.Fatalf("blocks after the allow went: %+v", got)
			}
		}},
		{"ConcurrentAddsOfOneDomainHaveOneWinner", func(t *testing.T, s ports.ModerationStore) {
			const n = 16
			blockErrs, allowErrs := make([]error, n), make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				b := block(t, "race.example", domain.SeveritySuspend, fmt.Sprintf("by %02d", i), base)
				a := domain.DomainAllow{Domain: "race.example", CreatedAt: base.Add(time.Duration(i) * time.Second)}
				wg.Add(2)
				go func() { defer wg.Done(); blockErrs[i] = s.AddDomainBlock(ctx(t), b) }()
				go func() { defer wg.Done(); allowErrs[i] = s.AddDomainAllow(ctx(t), a) }()
			}
			wg.Wait()
			for what, errs := range map[string][]error{"block": blockErrs, "allow": allowErrs} {
				won := -1
				for i, err := range errs {
					switch {
					case err == nil && won < 0:
						won = i
					case err == nil:
						t.Fatalf("two %ss of one domain added: %d and %d", what, won, i)
					default:
						mustIs(t, err, domain.ErrAlreadyExists, fmt.Sprintf("%s %d", what, i))
					}
				}
				if won < 0 {
					t.Fatalf("no %s of the domain added", what)
				}
				if what == "block" {
					if got := blocks(t, s); len(got) != 1 || got[0].Reason != fmt.Sprintf("by %02d", won) {
						t.Fatalf("the winner was %d; stored %+v", won, got)
					}
				} else if got, want := allows(t, s), "race.example@"+base.Add(time.Duration(won)*time.Second).Format(time.RFC3339); got != want {
					t.Fatalf("the winner was %d; stored %s", won, got)
				}
			}
		}},
	})
}

// ReportStore runs the contract of ports.ReportStore.
func ReportStore(t *testing.T, newStore func(t *testing.T) ports.ReportStore, opts ...Option) {
	newStore = behindChecks(newStore, checked.NewReports)
	const reporter = "https://r.example/actor"
	report := func(t *testing.T, id, flag string, at time.Time) domain.Report {
		t.Helper()
		r, err := domain.NewReport(id, flag, reporter,
			[]string{"https://h.example/users/bob", "https://h.example/users/alice"},
			[]string{"https://h.example/notes/2", "https://h.example/notes/1"}, "spam — 🚫", at)
		mustNil(t, err, "report")
		return r
	}
	same := func(t *testing.T, got, want domain.Report) {
		t.Helper()
		if got.ID != want.ID || got.ActivityID != want.ActivityID || got.ReporterURI != want.ReporterURI || got.Comment != want.Comment ||
			fmt.Sprint(got.Targets) != fmt.Sprint(want.Targets) || fmt.Sprint(got.Objects) != fmt.Sprint(want.Objects) ||
			got.Resolution != want.Resolution {
			t.Fatalf("report:\n got %+v\nwant %+v", got, want)
		}
		sameTime(t, got.CreatedAt, want.CreatedAt, want.ID+" createdAt")
		sameTime(t, got.ResolvedAt, want.ResolvedAt, want.ID+" resolvedAt")
	}
	get := func(t *testing.T, s ports.ReportStore, id string) domain.Report {
		t.Helper()
		r, err := s.Report(ctx(t), id)
		mustNil(t, err, "report "+id)
		return r
	}
	add := func(t *testing.T, s ports.ReportStore, r domain.Report) {
		t.Helper()
		created, err := s.AddReport(ctx(t), r)
		mustNil(t, err, "add "+r.ID)
		if !created {
			t.Fatalf("report %s not created", r.ID)
		}
	}
	list := func(t *testing.T, s ports.ReportStore, open bool, limit int) string {
		t.Helper()
		rs, err := s.Reports(ctx(t), open, limit)
		mustNil(t, err, "reports")
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.ID
		}
		return fmt.Sprint(ids)
	}
	runCases(t, newStore, opts, []testCase[ports.ReportStore]{
		{"AddAndRead", func(t *testing.T, s ports.ReportStore) {
			r := report(t, "r1", "https://r.example/flags/1", base)
			add(t, s, r)
			got := get(t, s, "r1")
			same(t, got, r)
			if !got.Open() {
				t.Fatalf("a new report is resolved: %+v", got)
			}
			// Targets and objects as given, in their order; a report may
			// have no objects, or no targets.
			odd := domain.Report{ID: "r2", ActivityID: "https://r.example/flags/2", ReporterURI: reporter, CreatedAt: base,
				Targets: []string{"https://h.example/users/z", "https://h.example/users/a"}}
			add(t, s, odd)
			if got := get(t, s, "r2"); fmt.Sprint(got.Targets) != fmt.Sprint(odd.Targets) || len(got.Objects) != 0 || got.Comment != "" {
				t.Fatalf("report without objects: %+v", got)
			}
			noTargets := domain.Report{ID: "r3", ActivityID: "https://r.example/flags/3", ReporterURI: reporter, CreatedAt: base,
				Objects: []string{"https://h.example/notes/9"}}
			add(t, s, noTargets)
			if got := get(t, s, "r3"); len(got.Targets) != 0 || fmt.Sprint(got.Objects) != "[https://h.example/notes/9]" {
				t.Fatalf("report without targets: %+v", got)
			}
			_, err := s.Report(ctx(t), "nope")
			mustIs(t, err, domain.ErrNotFound, "no such report")
		}},
		{"OneReportPerFlag", func(t *testing.T, s ports.ReportStore) {
			first := report(t, "r1", "https://r.example/flags/1", base)
			add(t, s, first)
			again := report(t, "r2", "https://r.example/flags/1", base.Add(time.Hour))
			again.Comment = "the same Flag, delivered again"
			created, err := s.AddReport(ctx(t), again)
			if err != nil || created {
				t.Fatalf("a Flag delivered twice: created %v, %v", created, err)
			}
			same(t, get(t, s, "r1"), first)
			_, err = s.Report(ctx(t), "r2")
			mustIs(t, err, domain.ErrNotFound, "the second delivery stored")
			// An id taken by another Flag's report is a clash, not a
			// delivery of that Flag.
			clash := report(t, "r1", "https://r.example/flags/2", base)
			_, err = s.AddReport(ctx(t), clash)
			mustIs(t, err, domain.ErrAlreadyExists, "a report id taken")
			if got := list(t, s, false, 0); got != "[r1]" {
				t.Fatalf("reports %s, want [r1]", got)
			}
		}},
		{"ConcurrentDeliveriesOfOneFlagMakeOneReport", func(t *testing.T, s ports.ReportStore) {
			const n = 16
			created := make([]bool, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				r := report(t, fmt.Sprintf("r%02d", i), "https://r.example/flags/1", base)
				wg.Add(1)
				go func() {
					defer wg.Done()
					created[i], errs[i] = s.AddReport(ctx(t), r)
				}()
			}
			wg.Wait()
			won := -1
			for i := range n {
				mustNil(t, errs[i], fmt.Sprintf("add %d", i))
				if created[i] {
					if won >= 0 {
						t.Fatalf("one Flag made reports %d and %d", won, i)
					}
					won = i
				}
			}
			if got, want := list(t, s, false, 0), fmt.Sprintf("[r%02d]", won); won < 0 || got != want {
				t.Fatalf("reports %s, the winner %d", got, won)
			}
		}},
		{"ListedNewestFirst", func(t *testing.T, s ports.ReportStore) {
			if got := list(t, s, false, 0); got != "[]" {
				t.Fatalf("reports in an empty store: %s", got)
			}
			for i, at := range []time.Time{base, base.Add(2 * time.Hour), base.Add(time.Hour), base.Add(time.Hour), base.Add(3 * time.Hour)} {
				add(t, s, report(t, fmt.Sprintf("r%d", i), fmt.Sprintf("https://r.example/flags/%d", i), at))
			}
			if got := list(t, s, false, 0); got != "[r4 r1 r3 r2 r0]" {
				t.Fatalf("all reports %s, want [r4 r1 r3 r2 r0] (newest first, then by id)", got)
			}
			if got := list(t, s, false, 2); got != "[r4 r1]" {
				t.Fatalf("the 2 newest %s", got)
			}
			mustNil(t, s.ResolveReport(ctx(t), "r1", base.Add(4*time.Hour), "done"), "resolve")
			mustNil(t, s.ResolveReport(ctx(t), "r0", base.Add(4*time.Hour), "done"), "resolve")
			if got := list(t, s, true, 0); got != "[r4 r3 r2]" {
				t.Fatalf("open reports %s, want [r4 r3 r2]", got)
			}
			if got := list(t, s, true, 1); got != "[r4]" {
				t.Fatalf("the newest open report %s", got)
			}
			if got := list(t, s, false, 0); got != "[r4 r1 r3 r2 r0]" {
				t.Fatalf("all reports after resolving two %s", got)
			}
		}},
		{"ResolveKeepsTheFirstResolution", func(t *testing.T, s ports.ReportStore) {
			r := report(t, "r1", "https://r.example/flags/1", base)
			add(t, s, r)
			add(t, s, report(t, "r2", "https://r.example/flags/2", base))
			mustNil(t, s.ResolveReport(ctx(t), "r1", base.Add(time.Hour), "suspended the sender"), "resolve")
			want := r
			want.ResolvedAt, want.Resolution = base.Add(time.Hour), "suspended the sender"
			got := get(t, s, "r1")
			same(t, got, want)
			if got.Open() {
				t.Fatalf("a resolved report is open: %+v", got)
			}
			mustNil(t, s.ResolveReport(ctx(t), "r1", base.Add(2*time.Hour), "again"), "resolve again")
			same(t, get(t, s, "r1"), want)
			if got := get(t, s, "r2"); !got.Open() {
				t.Fatalf("another report was resolved: %+v", got)
			}
			mustIs(t, s.ResolveReport(ctx(t), "nope", base, "x"), domain.ErrNotFound, "resolve no report")
			mustIs(t, s.ResolveReport(ctx(t), "r2", time.Time{}, "x"), domain.ErrInvalidInput, "resolve at no time")
			if got := get(t, s, "r2"); !got.Open() {
				t.Fatalf("a refused resolution resolved: %+v", got)
			}
			// Concurrent resolutions: one of them stands, whole.
			const n = 16
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = s.ResolveReport(ctx(t), "r2", base.Add(time.Duration(i+1)*time.Minute), fmt.Sprintf("note %02d", i))
				}()
			}
			wg.Wait()
			for i, err := range errs {
				mustNil(t, err, fmt.Sprintf("resolve %d", i))
			}
			got = get(t, s, "r2")
			var i int
			if _, err := fmt.Sscanf(got.Resolution, "note %02d", &i); err != nil || !got.ResolvedAt.Equal(base.Add(time.Duration(i+1)*time.Minute)) {
				t.Fatalf("resolved as %q at %v: not one resolution whole", got.Resolution, got.ResolvedAt)
			}
		}},
	})
}
