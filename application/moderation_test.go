package application_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

func (b *fedBundle) block(d string, s domain.Severity) application.Blocked {
	b.t.Helper()
	bl, err := domain.NewDomainBlock(d, s, "test", b.clock.Now())
	if err != nil {
		b.t.Fatal(err)
	}
	res, err := b.mod.Block(b.t.Context(), bl)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// TestSuspendedDomain: nothing is accepted from a suspended domain (or a
// subdomain of it), nothing is fetched from it, its actors cannot be
// followed, and what it left here is hidden until the block is lifted.
func TestSuspendedDomain(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFollowing(t)
	const note1 = "https://remote.example/users/bob/statuses/s1"
	mustDeliver(t, b, bob, note(note1, bob, "<p>before</p>", application.ASPublic))
	mustDeliver(t, b, bob, follow("https://remote.example/f/1", bob, alice))
	b.signer(carol)

	res := b.block("remote.example", domain.SeveritySuspend)
	if res.FollowsRemoved != 2 {
		t.Fatalf("%d follows removed, want 2 (alice→bob, bob→alice)", res.FollowsRemoved)
	}
	for _, host := range []string{"remote.example", "sub.remote.example:8443"} {
		if err := b.fed.Admit(ctx, host); !application.RefusedByPolicy(err) || !errors.Is(err, domain.ErrForbidden) {
			t.Fatalf("Admit(%s): %v, want a refusal (403)", host, err)
		}
	}
	if err := b.fed.Admit(ctx, "other.example", "notremote.example"); err != nil {
		t.Fatalf("other domains: %v", err)
	}
	// Hidden from every read.
	if _, err := b.fed.Collections.PostsBy(ctx, bob, time.Time{}, 10); err != nil {
		t.Fatal(err)
	}
	if ps, _ := b.fed.Collections.PostsBy(ctx, bob, time.Time{}, 10); len(ps) != 0 {
		t.Fatalf("bob's posts still shown: %d", len(ps))
	}
	// Nothing is fetched there, and its actors cannot be followed.
	before := len(b.fetcher.calls)
	const erin = "https://remote.example/users/erin"
	if _, err := b.fed.Resolver.Resolve(ctx, erin); !application.RefusedByPolicy(err) {
		t.Fatalf("resolving erin: %v", err)
	}
	if _, err := b.fed.FollowRemote.Handle(ctx, application.FollowRemote{UserID: b.userID, As: "alice", Target: carol}); !application.RefusedByPolicy(err) {
		t.Fatalf("following carol (cached): %v", err)
	}
	if n := len(b.fetcher.calls) - before; n != 0 {
		t.Fatalf("%d fetches to a suspended domain", n)
	}
	// Lifted: federation resumes, the hidden post shows again.
	if err := b.mod.Unblock(ctx, "remote.example"); err != nil {
		t.Fatal(err)
	}
	if err := b.fed.Admit(ctx, "remote.example"); err != nil {
		t.Fatal(err)
	}
	if ps, _ := b.fed.Collections.PostsBy(ctx, bob, time.Time{}, 10); len(ps) != 1 {
		t.Fatalf("bob's post after the lift: %d", len(ps))
	}
}

// TestSilencedDomain: a silenced domain's notes reach only the personas
// that follow their author, groups do not boost them, and its follows
// wait for approval.
func TestSilencedDomain(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFed(t)
	b.block("remote.example", domain.SeveritySilence)
	if err := b.fed.Admit(ctx, "remote.example"); err != nil {
		t.Fatalf("a silenced domain is not refused: %v", err)
	}
	const mention = "https://remote.example/users/bob/statuses/m"
	if res, err := b.deliver("", bob, noteMentioning(mention, bob, "<p>@alice</p>", []string{application.ASPublic}, alice)); err != nil || !res.Ignored {
		t.Fatalf("a stranger's mention from a silenced domain: %+v %v", res, err)
	}
	b.accepted(alice, bob)
	b.accepted(bob, club)
	const toClub = "https://remote.example/users/bob/statuses/g"
	jobs := len(b.allJobs())
	mustDeliver(t, b, bob, note(toClub, bob, "<p>club</p>", application.ASPublic, club))
	if p, err := b.content.PostByObjectURI(ctx, toClub); err != nil || p.GroupURI != "" {
		t.Fatalf("followed author's note: %+v %v (kept, without the group)", p, err)
	}
	if n := len(b.allJobs()) - jobs; n != 0 {
		t.Fatalf("%d deliveries queued: the group boosted a silenced note", n)
	}
	// Its follows stay pending: no Accept queued.
	res, err := b.deliver("", carol, follow("https://remote.example/f/2", carol, alice))
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := b.follower(carol, alice); !ok || f.State != domain.FollowPending {
		t.Fatalf("carol's follow %+v %v (%+v), want pending", f, ok, res)
	}
	if n := len(b.allJobs()) - jobs; n != 0 {
		t.Fatalf("%d deliveries queued: an Accept went out", n)
	}
	// alice approves: accepted, and the Accept goes to carol.
	res2, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: b.userID, As: "alice", Follower: carol, Accept: true})
	if err != nil || !res2.Changed || res2.State != domain.FollowAccepted {
		t.Fatalf("approve: %+v %v", res2, err)
	}
	if f, _ := b.follower(carol, alice); f.State != domain.FollowAccepted {
		t.Fatalf("carol's follow after approval: %+v", f)
	}
	all := b.allJobs()
	if len(all)-jobs != 1 || payload(t, all[len(all)-1])["type"] != "Accept" {
		t.Fatalf("after approval: %d new jobs", len(all)-jobs)
	}
	// A rejection removes the follow and sends a Reject.
	mustDeliver(t, b, bob, follow("https://remote.example/f/3", bob, alice))
	if _, err := b.fed.AnswerFollow.Handle(ctx, application.AnswerFollowRequest{UserID: b.userID, As: "alice", Follower: bob}); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.follower(bob, alice); ok {
		t.Fatal("bob's rejected follow kept")
	}
	if all := b.allJobs(); payload(t, all[len(all)-1])["type"] != "Reject" {
		t.Fatal("no Reject queued")
	}
}

// TestAllowlistMode: only allowed domains (and their subdomains)
// federate; first contact included.
func TestAllowlistMode(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFedMode(t, domain.FederationAllowlist)
	if err := b.fed.Admit(ctx, "remote.example"); !application.RefusedByPolicy(err) {
		t.Fatalf("not allowed: %v", err)
	}
	if _, err := b.fed.Resolver.Resolve(ctx, bob); !application.RefusedByPolicy(err) {
		t.Fatalf("first contact with a domain not allowed: %v", err)
	}
	a, _ := domain.NewDomainAllow("example", b.clock.Now())
	if err := b.mod.Allow(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := b.fed.Admit(ctx, "remote.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.fed.Resolver.Resolve(ctx, bob); err != nil {
		t.Fatal(err)
	}
	// A block still bites inside an allowed domain.
	b.block("remote.example", domain.SeveritySuspend)
	if err := b.fed.Admit(ctx, "remote.example"); !application.RefusedByPolicy(err) {
		t.Fatalf("blocked inside an allowed domain: %v", err)
	}
	if err := b.fed.Admit(ctx, "other.example"); err != nil {
		t.Fatal(err)
	}
}

// TestFlagIsKeptAsAReport: an incoming Flag names our actors and posts;
// one that names nothing of ours, or is oversized, is refused and keeps
// nothing; a redelivery is one report.
func TestFlagIsKeptAsAReport(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFed(t)
	p := publish(t, b.app.Publish, application.Publish{UserID: b.userID, As: "alice", Content: "hello", Visibility: domain.VisibilityPublic})
	flag := func(id, objects, content string) string {
		return `{"id":"` + id + `","type":"Flag","actor":"` + bob + `","content":"` + content + `","object":` + objects + `}`
	}
	mustDeliver(t, b, bob, flag("https://remote.example/flags/1", `["`+alice+`","`+p.ObjectURI+`","https://remote.example/x"]`, "spam"))
	if res, err := b.deliver("", bob, flag("https://remote.example/flags/1", `["`+alice+`"]`, "spam")); err != nil || !res.Duplicate {
		t.Fatalf("redelivered Flag: %+v %v", res, err)
	}
	rs, err := b.reports.Reports(ctx, true, 10)
	if err != nil || len(rs) != 1 {
		t.Fatalf("reports %+v %v", rs, err)
	}
	if r := rs[0]; len(r.Targets) != 1 || r.Targets[0] != alice || len(r.Objects) != 1 || r.Objects[0] != p.ObjectURI || r.Comment != "spam" || r.ReporterURI != bob {
		t.Fatalf("report %+v", r)
	}
	for name, act := range map[string]string{
		"names nothing of ours": flag("https://remote.example/flags/2", `["https://remote.example/users/x"]`, "x"),
		"an oversized comment":  flag("https://remote.example/flags/3", `["`+alice+`"]`, strings.Repeat("x", domain.MaxReportComment+1)),
		"an id on another host": flag("https://other.example/flags/4", `["`+alice+`"]`, "x"),
	} {
		if _, err := b.deliver("", bob, act); !errors.Is(err, domain.ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput (422)", name, err)
		}
	}
	if rs, _ := b.reports.Reports(ctx, false, 10); len(rs) != 1 {
		t.Fatalf("%d reports kept, want 1", len(rs))
	}
}

// slowBlocks holds the first read of the blocks after armed is set until
// release is closed, having read them already: a read that began before a
// change. It says so on reading, which the test waits for (a blocking
// send: the reader may get there before the test waits).
type slowBlocks struct {
	ports.ModerationStore
	armed   *atomic.Bool
	reading chan struct{}
	release chan struct{}
}

func (s slowBlocks) DomainBlocks(ctx context.Context) ([]domain.DomainBlock, error) {
	bs, err := s.ModerationStore.DomainBlocks(ctx)
	if s.armed.CompareAndSwap(true, false) {
		s.reading <- struct{}{}
		<-s.release
	}
	return bs, err
}

// TestModerationKeepsNoReadOlderThanAChange: a read of the rules that
// began before a block was lifted must not be kept as the current copy,
// or the lifted domain would stay refused for policyTTL (a sender's
// Follow refused with a 403 is lost for good).
func TestModerationKeepsNoReadOlderThanAChange(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFed(t)
	store := slowBlocks{ModerationStore: b.modStore, armed: new(atomic.Bool), reading: make(chan struct{}), release: make(chan struct{})}
	mod := application.NewModeration(application.ModerationDeps{Store: store, JobAdmin: b.jobs, Foreign: b.content, Followers: b.follows, Clock: b.clock})
	bl, _ := domain.NewDomainBlock("remote.example", domain.SeveritySilence, "", b.clock.Now())
	if _, err := mod.Block(ctx, bl); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	store.armed.Store(true)
	go func() {
		defer close(done)
		_, _ = mod.Verdict(ctx, "remote.example") // reads the block, then waits
	}()
	<-store.reading
	if err := mod.Unblock(ctx, "remote.example"); err != nil {
		t.Fatal(err)
	}
	close(store.release)
	<-done
	if v, err := mod.Verdict(ctx, "remote.example"); err != nil || v.Silenced() {
		t.Fatalf("after the lift: %+v %v, want no block", v, err)
	}
}

// brokenBlocks is a moderation store whose rules cannot be read.
type brokenBlocks struct{ ports.ModerationStore }

func (brokenBlocks) DomainBlocks(context.Context) ([]domain.DomainBlock, error) {
	return nil, errors.New("store down")
}

// RefusesDelivery is what the engine asks before a delivery: why a host is
// refused, nothing for a host that may federate, and an error (nothing is
// sent for now) when the rules cannot be read.
func TestModerationRefusesDelivery(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := setupFed(t)
	b.block("evil.example", domain.SeveritySuspend)
	for _, tc := range []struct {
		name, host, why string
	}{
		{"suspended", "evil.example", "suspended"},
		{"a subdomain of it", "sub.evil.example", "suspended"},
		{"federates", "good.example", ""},
	} {
		if why, err := b.mod.RefusesDelivery(ctx, tc.host); why != tc.why || err != nil {
			t.Errorf("%s: %q, %v; want %q", tc.name, why, err, tc.why)
		}
	}
	broken := application.NewModeration(application.ModerationDeps{Store: brokenBlocks{b.modStore}, JobAdmin: b.jobs, Foreign: b.content, Followers: b.follows, Clock: b.clock})
	if why, err := broken.RefusesDelivery(ctx, "good.example"); why != "" || !errors.Is(err, domain.ErrUnavailable) {
		t.Errorf("rules unreadable: %q, %v; want no reason and ErrUnavailable", why, err)
	}
}
