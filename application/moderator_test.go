package application_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/fake"
)

type modBundle struct {
	mod      *application.Moderator
	app      *application.Application
	store    *memory.ModerationStore
	reports  *memory.ReportStore
	accounts *memory.AccountStore
	names    *memory.NameRegistry
	follows  *memory.FollowerStore
	content  *memory.ContentStore
	jobs     *memory.JobStore
	clock    *fake.Clock
	ids      *fake.IDs
}

func newModerator(t *testing.T, reg domain.RegistrationMode) *modBundle {
	t.Helper()
	b := &modBundle{store: memory.NewModerationStore(), reports: memory.NewReportStore(), accounts: memory.NewAccountStore(),
		names: memory.NewNameRegistry(), follows: memory.NewFollowerStore(), content: memory.NewContentStore(),
		jobs: memory.NewJobStore(), clock: fake.NewClock(opT0), ids: fake.NewIDs("id")}
	m := application.NewModeration(application.ModerationDeps{Store: b.store, JobAdmin: b.jobs, Foreign: b.content,
		Followers: b.follows, Mode: domain.FederationBlocklist, Clock: b.clock})
	urls := application.NewURLs("local.example")
	b.mod = application.NewModerator(application.ModeratorDeps{Moderation: m, Users: b.accounts, Actors: b.accounts,
		Names: b.names, Followers: b.follows, Reports: b.reports, Registrations: reg, URLs: urls, Clock: b.clock})
	policy, err := domain.NewNamePolicy("instance", nil)
	if err != nil {
		t.Fatal(err)
	}
	b.app = application.New(application.Deps{
		Users: b.accounts, Tokens: b.accounts, Actors: b.accounts, Names: b.names, Followers: b.follows,
		Foreign: b.content, Posts: b.content, HTML: sanitizer.NewHTMLSanitizer(), Jobs: b.jobs, Passwords: fake.Passwords{},
		Keys: &fake.Keys{}, Clock: b.clock, IDs: b.ids, Registrations: reg, URLs: urls, NamePolicy: policy, InstanceActor: "instance",
	})
	return b
}

// queue enqueues one job to inbox.
func (b *modBundle) queue(t *testing.T, inbox string) {
	t.Helper()
	id := b.ids.NewID()
	j, err := domain.NewJob(id, "https://local.example/users/a/activities/"+id, inbox, "s", "https://local.example/users/a#main-key", []byte(`{}`), b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.jobs.Enqueue(t.Context(), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
}

// remoteFollower caches a remote actor and makes it follow alice.
func (b *modBundle) remoteFollower(t *testing.T, actor string) {
	t.Helper()
	ctx := t.Context()
	host := strings.Split(strings.TrimPrefix(actor, "https://"), "/")[0]
	if err := b.content.Upsert(ctx, domain.ForeignAvatar{ActorURI: actor, Inbox: actor + "/inbox", Host: host, FetchedAt: b.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	f, err := domain.NewFollower(actor, alice, actor+"#follow", domain.FollowAccepted, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.follows.Add(ctx, f); err != nil {
		t.Fatal(err)
	}
}

func TestModeratorBlocks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := newModerator(t, "")
	b.queue(t, "https://spam.example/inbox")
	b.queue(t, "https://a.spam.example/users/x/inbox")
	b.queue(t, "https://fine.example/inbox")
	b.remoteFollower(t, "https://a.spam.example/users/x")
	b.remoteFollower(t, "https://fine.example/users/y")

	tests := []struct {
		name string
		cmd  application.BlockDomain
		want error
	}{
		{"malformed domain", application.BlockDomain{Domain: "https://spam.example/", Severity: domain.SeveritySuspend}, domain.ErrInvalidInput},
		{"wildcard", application.BlockDomain{Domain: "*.spam.example", Severity: domain.SeveritySuspend}, domain.ErrInvalidInput},
		{"unknown severity", application.BlockDomain{Domain: "spam.example", Severity: "noop"}, domain.ErrInvalidInput},
		{"public comment too long", application.BlockDomain{Domain: "spam.example", Severity: domain.SeveritySilence, PublicComment: strings.Repeat("x", domain.MaxCommentLength+1)}, domain.ErrInvalidInput},
	}
	for _, tt := range tests {
		if _, err := b.mod.Block.Handle(ctx, tt.cmd); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if bs, _ := b.mod.Blocks(ctx); len(bs) != 0 {
		t.Fatalf("refused blocks were stored: %+v", bs)
	}

	res, err := b.mod.Block.Handle(ctx, application.BlockDomain{Domain: " Spam.Example. ", Severity: domain.SeveritySilence, Reason: "spam wave", PublicComment: "spam"})
	if err != nil || res.Block.Domain != "spam.example" || res.JobsEnded != 0 || res.FollowsRemoved != 0 {
		t.Fatalf("silence: %+v %v", res, err)
	}
	if _, err := b.mod.Block.Handle(ctx, application.BlockDomain{Domain: "spam.example", Severity: domain.SeveritySuspend}); !errors.Is(err, domain.ErrAlreadyExists) {
		t.Fatalf("second block: %v", err)
	}
	// A silence becomes a suspension: the domain's queued jobs end and its
	// follows go; the fields not given are kept.
	suspend := domain.SeveritySuspend
	res, err = b.mod.UpdateBlock.Handle(ctx, application.UpdateDomainBlock{Domain: "SPAM.example", Severity: &suspend})
	if err != nil || res.JobsEnded != 2 || res.FollowsRemoved != 1 || res.Block.Reason != "spam wave" || res.Block.PublicComment != "spam" {
		t.Fatalf("suspend: %+v %v", res, err)
	}
	if c, _ := b.jobs.Counts(ctx); c[domain.JobQueued] != 1 || c[domain.JobDead] != 2 {
		t.Fatalf("counts after the suspension %v", c)
	}
	if _, err := b.follows.Get(ctx, "https://fine.example/users/y", alice); err != nil {
		t.Fatalf("another domain's follow went: %v", err)
	}
	empty := ""
	if res, err := b.mod.UpdateBlock.Handle(ctx, application.UpdateDomainBlock{Domain: "spam.example", Reason: &empty}); err != nil || res.Block.Reason != "" || res.Block.Severity != domain.SeveritySuspend {
		t.Fatalf("clear the reason: %+v %v", res, err)
	}
	if _, err := b.mod.UpdateBlock.Handle(ctx, application.UpdateDomainBlock{Domain: "other.example", Severity: &suspend}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("update of an unblocked domain: %v", err)
	}
	bad := domain.Severity("limit")
	if _, err := b.mod.UpdateBlock.Handle(ctx, application.UpdateDomainBlock{Domain: "spam.example", Severity: &bad}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("update to a bad severity: %v", err)
	}
	if err := b.mod.Unblock.Handle(ctx, "spam.example"); err != nil {
		t.Fatal(err)
	}
	if err := b.mod.Unblock.Handle(ctx, "spam.example"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("second lift: %v", err)
	}
}

func TestModeratorAllows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := newModerator(t, "")
	if _, err := b.mod.Allow.Handle(ctx, "not a domain"); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("malformed: %v", err)
	}
	a, err := b.mod.Allow.Handle(ctx, "Friends.Example")
	if err != nil || a.Domain != "friends.example" || !a.CreatedAt.Equal(opT0) {
		t.Fatalf("allow %+v %v", a, err)
	}
	if _, err := b.mod.Allow.Handle(ctx, "friends.example"); !errors.Is(err, domain.ErrAlreadyExists) {
		t.Fatalf("twice: %v", err)
	}
	if as, _ := b.mod.Allows(ctx); len(as) != 1 {
		t.Fatalf("allows %+v", as)
	}
	if err := b.mod.Disallow.Handle(ctx, "friends.example"); err != nil {
		t.Fatal(err)
	}
	if err := b.mod.Disallow.Handle(ctx, "friends.example"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("twice: %v", err)
	}
}

// importCSV is one list with a line of every kind, against stored blocks
// of kept.example (silence, as the list has it), changed.example
// (silence; the list suspends it) and wide.example (suspend).
var importCSV = "\ufeff#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate,#extra\n" +
	"new.example,suspend,false,false,spam,false,x\n" + // 2 added
	"changed.example,suspend,true,false,now worse,false\n" + // 3 changed
	"kept.example,silence,false,false,,false\n" + // 4 unchanged
	"mastodon.example,noop,true,false,,false\n" + // 5 skipped: noop
	"new.example,silence,false,false,,false\n" + // 6 skipped: listed again
	"sub.wide.example,silence,false,false,,false\n" + // 7 skipped: covered
	"bad domain.example,suspend,false,false,,false\n" + // 8 invalid
	"sev.example,limit,false,false,,false\n" + // 9 invalid
	"flag.example,suspend,maybe,false,,false\n" + // 10 invalid
	"\n" + // blank lines are not lines of the list
	"short.example,silence\n" + // 12 added, the missing cells false
	"long.example,silence,false,false," + strings.Repeat("c", domain.MaxCommentLength+1) + ",false\n" + // 13 invalid
	"empty-sev.example,,false,false,,false\n" + // 14 invalid
	",suspend\n" // 15 invalid: no domain

func (b *modBundle) seedBlocks(t *testing.T) {
	t.Helper()
	for _, s := range []struct {
		d   string
		sev domain.Severity
	}{{"kept.example", domain.SeveritySilence}, {"changed.example", domain.SeveritySilence}, {"wide.example", domain.SeveritySuspend}} {
		if _, err := b.mod.Block.Handle(t.Context(), application.BlockDomain{Domain: s.d, Severity: s.sev, Reason: "by hand"}); err != nil {
			t.Fatal(err)
		}
	}
}

func lines(cs []application.ImportChange) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%d:%s:%s", c.Line, c.Block.Domain, c.Block.Severity))
	}
	return strings.Join(out, " ")
}

func skipped(ls []application.ImportLine) string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%d:%s", l.Line, l.Domain))
	}
	return strings.Join(out, " ")
}

func TestImportDomainBlocks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := newModerator(t, "")
	b.seedBlocks(t)
	b.queue(t, "https://changed.example/inbox")

	dry, err := b.mod.ImportBlocks.Handle(ctx, application.ImportDomainBlocks{CSV: strings.NewReader(importCSV), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"added":     "2:new.example:suspend 12:short.example:silence",
		"changed":   "3:changed.example:suspend",
		"unchanged": "4:kept.example:silence",
		"skipped":   "5:mastodon.example 6:new.example 7:sub.wide.example",
		"invalid":   "8:bad domain.example 9:sev.example 10:flag.example 13:long.example 14:empty-sev.example 15:",
	}
	check := func(what string, r application.ImportResult) {
		t.Helper()
		for k, got := range map[string]string{"added": lines(r.Added), "changed": lines(r.Changed), "unchanged": lines(r.Unchanged),
			"skipped": skipped(r.Skipped), "invalid": skipped(r.Invalid)} {
			if got != want[k] {
				t.Errorf("%s %s: %q, want %q", what, k, got, want[k])
			}
		}
	}
	check("dry run", dry)
	if !dry.DryRun || fmt.Sprint(dry.IgnoredColumns) != "[#extra]" {
		t.Errorf("dry run %v, ignored %v", dry.DryRun, dry.IgnoredColumns)
	}
	for _, w := range []struct {
		list []application.ImportLine
		i    int
		says string
	}{{dry.Skipped, 0, "noop"}, {dry.Skipped, 1, "line 2"}, {dry.Skipped, 2, "wide.example (suspend)"},
		{dry.Invalid, 0, "not a domain"}, {dry.Invalid, 1, "severity"}, {dry.Invalid, 2, "#reject_media"},
		{dry.Invalid, 3, "at most"}, {dry.Invalid, 4, "no severity"}, {dry.Invalid, 5, "empty"}} {
		if !strings.Contains(w.list[w.i].Why, w.says) {
			t.Errorf("line %d: %q does not say %q", w.list[w.i].Line, w.list[w.i].Why, w.says)
		}
	}
	c := dry.Changed[0]
	if c.Before == nil || c.Before.Severity != domain.SeveritySilence || c.Block.Reason != "by hand" || !c.Block.RejectMedia || c.Block.PublicComment != "now worse" {
		t.Errorf("change %+v before %+v", c.Block, c.Before)
	}
	// The dry run changed nothing.
	if bs, _ := b.mod.Blocks(ctx); len(bs) != 3 {
		t.Fatalf("a dry run stored blocks: %+v", bs)
	}
	if c, _ := b.jobs.Counts(ctx); c[domain.JobQueued] != 1 {
		t.Fatalf("a dry run ended jobs: %v", c)
	}

	applied, err := b.mod.ImportBlocks.Handle(ctx, application.ImportDomainBlocks{CSV: strings.NewReader(importCSV)})
	if err != nil {
		t.Fatal(err)
	}
	check("apply", applied)
	if applied.DryRun || applied.JobsEnded != 1 {
		t.Errorf("apply: dry %v, jobs ended %d", applied.DryRun, applied.JobsEnded)
	}
	bs, _ := b.mod.Blocks(ctx)
	got := map[string]domain.DomainBlock{}
	for _, bl := range bs {
		got[bl.Domain] = bl
	}
	if len(bs) != 5 || got["new.example"].Severity != domain.SeveritySuspend || got["new.example"].PublicComment != "spam" ||
		got["short.example"].Severity != domain.SeveritySilence || got["changed.example"].Severity != domain.SeveritySuspend ||
		got["changed.example"].Reason != "by hand" || !got["changed.example"].RejectMedia {
		t.Fatalf("stored after the import: %+v", bs)
	}
	// The same list again changes nothing.
	again, err := b.mod.ImportBlocks.Handle(ctx, application.ImportDomainBlocks{CSV: strings.NewReader(importCSV), DryRun: true})
	if err != nil || len(again.Added)+len(again.Changed) != 0 || len(again.Unchanged) != 4 {
		t.Fatalf("again: %+v %v", again, err)
	}
}

func TestImportDomainBlocksColumns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tests := []struct {
		name, csv string
		want      domain.DomainBlock
	}{
		{"domain alone: suspend", "#domain\nspam.example\n", domain.DomainBlock{Domain: "spam.example", Severity: domain.SeveritySuspend}},
		{"some columns, any order, any case", "#Severity,#DOMAIN\nsilence,Spam.Example\n", domain.DomainBlock{Domain: "spam.example", Severity: domain.SeveritySilence}},
		{"without the #", "domain,severity,public_comment\nspam.example,silence,\"a, quoted comment\"\n", domain.DomainBlock{Domain: "spam.example", Severity: domain.SeveritySilence, PublicComment: "a, quoted comment"}},
		{"private comment is the reason", "#domain,#severity,#private_comment,#obfuscate,#reject_reports\nspam.example,suspend,ours,TRUE,1\n",
			domain.DomainBlock{Domain: "spam.example", Severity: domain.SeveritySuspend, Reason: "ours", Obfuscate: true, RejectReports: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newModerator(t, "")
			res, err := b.mod.ImportBlocks.Handle(ctx, application.ImportDomainBlocks{CSV: strings.NewReader(tt.csv)})
			if err != nil || len(res.Added) != 1 {
				t.Fatalf("%+v %v", res, err)
			}
			got := res.Added[0].Block
			got.CreatedAt = time.Time{}
			if got != tt.want {
				t.Fatalf("block %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestImportDomainBlocksRefusesWholeFiles(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tests := []struct{ name, csv, says string }{
		{"empty", "", "empty"},
		{"no header", "spam.example,suspend\n", "#domain"},
		{"not CSV", "#domain,#severity\n\"spam.example,suspend\n", "not a CSV"},
		{"too many lines", "#domain\n" + strings.Repeat("a.example\n", application.MaxImportRows+1), "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newModerator(t, "")
			_, err := b.mod.ImportBlocks.Handle(ctx, application.ImportDomainBlocks{CSV: strings.NewReader(tt.csv)})
			if !errors.Is(err, domain.ErrInvalidInput) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err %v, want invalid input saying %q", err, tt.says)
			}
			if bs, _ := b.mod.Blocks(ctx); len(bs) != 0 {
				t.Fatalf("stored %+v", bs)
			}
		})
	}
}

// A list exported here imports into another Herald as it was.
func TestExportDomainBlocksRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := newModerator(t, "")
	for _, cmd := range []application.BlockDomain{
		{Domain: "spam.example", Severity: domain.SeveritySuspend, Reason: "private", PublicComment: "spam, lots", Obfuscate: true},
		{Domain: "loud.example", Severity: domain.SeveritySilence, RejectMedia: true, RejectReports: true},
	} {
		if _, err := b.mod.Block.Handle(ctx, cmd); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	n, err := b.mod.ExportBlocks.Handle(ctx, &buf)
	if err != nil || n != 2 {
		t.Fatal(n, err)
	}
	want := "#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate\n" +
		"loud.example,silence,true,true,,false\n" +
		"spam.example,suspend,false,false,\"spam, lots\",true\n"
	if buf.String() != want {
		t.Fatalf("export:\n%s\nwant:\n%s", buf.String(), want)
	}
	other := newModerator(t, "")
	res, err := other.mod.ImportBlocks.Handle(ctx, application.ImportDomainBlocks{CSV: &buf})
	if err != nil || len(res.Added) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	mine, _ := b.mod.Blocks(ctx)
	theirs, _ := other.mod.Blocks(ctx)
	for i := range mine {
		mine[i].Reason = "" // the operators' own note stays home
		if mine[i] != theirs[i] {
			t.Errorf("%+v came back as %+v", mine[i], theirs[i])
		}
	}
}

func TestApproveAndRejectRegistrations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	t.Run("approved", func(t *testing.T) {
		t.Parallel()
		b := newModerator(t, domain.RegistrationsApproval)
		s, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse", Reason: "I run the club"})
		if err != nil || s.User.Status != domain.UserPending {
			t.Fatalf("pending sign-up: %+v %v", s, err)
		}
		pending, err := b.mod.Pending(ctx, 0)
		if err != nil || len(pending) != 1 || pending[0].ID != s.User.ID || pending[0].Reason != "I run the club" {
			t.Fatalf("pending %+v %v", pending, err)
		}
		u, err := b.mod.Approve.Handle(ctx, s.User.ID)
		if err != nil || !u.Active() {
			t.Fatalf("approve %+v %v", u, err)
		}
		if _, err := b.app.Login.Handle(ctx, application.Login{UserName: "alice", Password: "correct horse"}); err != nil {
			t.Fatalf("login once approved: %v", err)
		}
		if _, err := b.mod.Approve.Handle(ctx, s.User.ID); !errors.Is(err, domain.ErrInvalidInput) {
			t.Fatalf("approve an active account: %v", err)
		}
		if _, err := b.mod.Reject.Handle(ctx, s.User.ID); !errors.Is(err, domain.ErrInvalidInput) {
			t.Fatalf("reject an active account: %v", err)
		}
		if _, err := b.accounts.UserByID(ctx, s.User.ID); err != nil {
			t.Fatalf("a refused rejection deleted the account: %v", err)
		}
		for _, id := range []string{"nobody", " "} {
			if _, err := b.mod.Approve.Handle(ctx, id); !errors.Is(err, domain.ErrNotFound) && !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("approve %q: %v", id, err)
			}
		}
		if pending, _ := b.mod.Pending(ctx, 0); len(pending) != 0 {
			t.Fatalf("still pending %+v", pending)
		}
		if _, err := b.mod.Pending(ctx, -1); !errors.Is(err, domain.ErrInvalidInput) {
			t.Fatalf("limit -1: %v", err)
		}
	})

	t.Run("rejected", func(t *testing.T) {
		t.Parallel()
		b := newModerator(t, domain.RegistrationsApproval)
		s := signUp(t, b.app.SignUp, "mallory")
		// A remote server followed the waiting persona.
		b.remoteFollower(t, "https://remote.example/users/eve")
		f, _ := domain.NewFollower("https://remote.example/users/eve", "https://local.example/users/mallory", "x#f", domain.FollowAccepted, opT0)
		if _, err := b.follows.Add(ctx, f); err != nil {
			t.Fatal(err)
		}
		res, err := b.mod.Reject.Handle(ctx, s.User.ID)
		if err != nil || fmt.Sprint(res.Released) != "[mallory]" {
			t.Fatalf("reject %+v %v", res, err)
		}
		if _, err := b.accounts.UserByID(ctx, s.User.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatal("the account stayed")
		}
		if _, err := b.accounts.AvatarByName(ctx, "mallory"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatal("the persona stayed")
		}
		if n, _ := b.follows.CountFollowers(ctx, "https://local.example/users/mallory", domain.FollowAccepted); n != 0 {
			t.Fatal("its follows stayed")
		}
		if _, err := b.follows.Get(ctx, "https://remote.example/users/eve", alice); err != nil {
			t.Fatalf("another persona's follow went: %v", err)
		}
		if _, err := b.mod.Reject.Handle(ctx, s.User.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("reject twice: %v", err)
		}
		// The name is free: someone else may take it.
		if _, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "mallory", Password: "correct horse"}); err != nil {
			t.Fatalf("the name was not released: %v", err)
		}
	})
}

func TestModeratorReports(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := newModerator(t, "")
	for i := range 3 {
		r, err := domain.NewReport(fmt.Sprintf("r%d", i), fmt.Sprintf("https://remote.example/flags/%d", i), "https://remote.example/actor",
			[]string{alice}, nil, fmt.Sprintf("comment %d", i), opT0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.reports.AddReport(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.mod.ResolveReport.Handle(ctx, application.ResolveReport{ID: "r1", Note: strings.Repeat("n", domain.MaxReasonLength+1)}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("long note: %v", err)
	}
	b.clock.Advance(time.Hour)
	r, err := b.mod.ResolveReport.Handle(ctx, application.ResolveReport{ID: "r1", Note: " silenced remote.example "})
	if err != nil || r.Open() || r.Resolution != "silenced remote.example" || !r.ResolvedAt.Equal(opT0.Add(time.Hour)) {
		t.Fatalf("resolve %+v %v", r, err)
	}
	if r, err := b.mod.ResolveReport.Handle(ctx, application.ResolveReport{ID: "r1", Note: "again"}); err != nil || r.Resolution != "silenced remote.example" {
		t.Fatalf("resolve twice %+v %v", r, err)
	}
	if _, err := b.mod.ResolveReport.Handle(ctx, application.ResolveReport{ID: "nope"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	open, err := b.mod.Reports(ctx, true, 0)
	if err != nil || len(open) != 2 || open[0].ID != "r2" || open[1].ID != "r0" {
		t.Fatalf("open %+v %v", open, err)
	}
	all, err := b.mod.Reports(ctx, false, 2)
	if err != nil || len(all) != 2 || all[1].ID != "r1" {
		t.Fatalf("all %+v %v", all, err)
	}
	if _, err := b.mod.Reports(ctx, false, application.MaxModerationPage+1); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("limit: %v", err)
	}
	if got, err := b.mod.Report(ctx, "r0"); err != nil || got.Comment != "comment 0" {
		t.Fatalf("get %+v %v", got, err)
	}
}
