package application_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/fake"
)

// deletionBundle is an app with fan-out records and job counts, an
// account "alice" with a second persona "carol", and an account "bob".
type deletionBundle struct {
	*appBundle
	fanOuts     *memory.FanOutStore
	clock       *fake.Clock
	alice, bob  string // user ids
	carol       string // carol's actor URI
	carolID     string
	carolPostID string
}

func newDeletionBundle(t *testing.T, mutate ...func(*application.Deps)) *deletionBundle {
	t.Helper()
	b := &deletionBundle{fanOuts: memory.NewFanOutStore(), clock: fake.NewClock(t0)}
	b.appBundle = newApp(t, append([]func(*application.Deps){func(d *application.Deps) {
		d.FanOuts, d.Clock = b.fanOuts, b.clock
		d.JobAdmin = d.Jobs.(ports.JobAdmin)
	}}, mutate...)...)
	ctx := t.Context()
	a := signUp(t, b.app.SignUp, "alice")
	bo := signUp(t, b.app.SignUp, "bob")
	c, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: a.User.ID, Name: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	b.alice, b.bob, b.carolID, b.carol = a.User.ID, bo.User.ID, c.ID, b.app.URLs.Persona("carol")
	return b
}

// activityJobs lists the queued jobs of one activity, by inbox.
func activityJobs(t *testing.T, b *deletionBundle, activityID string) map[string]domain.Job {
	t.Helper()
	all, err := b.jobs.List(t.Context(), ports.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]domain.Job{}
	for _, j := range all {
		if j.ActivityID != activityID {
			continue
		}
		if _, dup := out[j.Inbox]; dup {
			t.Fatalf("%s has two jobs of %s", j.Inbox, activityID)
		}
		out[j.Inbox] = j
	}
	return out
}

// deletesTo checks that carol's Delete is queued to each inbox of want
// once and to no other (each follower's and followed actor's inbox), and
// returns its jobs by inbox.
func deletesTo(t *testing.T, b *deletionBundle, want map[string]bool) map[string]domain.Job {
	t.Helper()
	jobs := activityJobs(t, b, b.carol+"#delete")
	if len(jobs) != len(want) {
		t.Fatalf("%d Delete jobs, want %d", len(jobs), len(want))
	}
	for inbox := range want {
		if _, ok := jobs[inbox]; !ok {
			t.Fatalf("no Delete to %s", inbox)
		}
	}
	return jobs
}

// settleAll delivers every queued job (succeeded), as the engine would.
func settleAll(t *testing.T, b *deletionBundle) {
	t.Helper()
	ctx := t.Context()
	for {
		now := b.clock.Now().Add(time.Hour)
		leased, err := b.jobs.LeaseBatch(ctx, ports.LeaseRequest{Owner: "test", Token: fmt.Sprint(now.UnixNano()), Now: now,
			Until: now.Add(time.Minute), Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(leased) == 0 {
			return
		}
		batch := make([]ports.Settlement, len(leased))
		for i, j := range leased {
			batch[i] = ports.Settlement{ID: j.ID, Token: j.LeaseToken, State: domain.JobSucceeded, Attempts: j.Attempts + 1, FinishedAt: now}
		}
		if _, err := b.jobs.Settle(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDeletePersona(t *testing.T) {
	t.Parallel()
	b := newDeletionBundle(t)
	ctx := t.Context()
	// carol's followers (a shared inbox on r000..r029) and whom she follows:
	// one on a follower's server (its shared inbox gets one job), one
	// elsewhere, one local persona (nothing to send).
	want := seedFollowers(t, b.appBundle, b.carol, 40)
	for _, fa := range []domain.ForeignAvatar{
		{ActorURI: "https://r001.example/users/followed", Inbox: "https://r001.example/users/followed/inbox", SharedInbox: "https://r001.example/inbox", Host: "r001.example"},
		{ActorURI: "https://far.example/users/x", Inbox: "https://far.example/users/x/inbox", Host: "far.example"},
	} {
		if err := b.content.Upsert(ctx, fa); err != nil {
			t.Fatal(err)
		}
		want[fa.DeliveryInbox()] = true
		f, _ := domain.NewFollower(b.carol, fa.ActorURI, b.carol+"#f-"+fa.Host, domain.FollowPending, t0)
		if _, err := b.follows.Add(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := domain.NewFollower(b.carol, b.app.URLs.Persona("alice"), b.carol+"#f-alice", domain.FollowAccepted, t0)
	if _, err := b.follows.Add(ctx, f); err != nil {
		t.Fatal(err)
	}
	post := publish(t, b.app.Publish, application.Publish{UserID: b.alice, As: "carol", Content: "soon gone", Visibility: domain.VisibilityPublic})
	settleAll(t, b) // the post's deliveries are out

	for _, tt := range []struct {
		name string
		cmd  application.DeletePersona
		want error
	}{
		{"another account's persona", application.DeletePersona{UserID: b.bob, Name: "carol"}, domain.ErrNotFound},
		{"no such persona", application.DeletePersona{UserID: b.alice, Name: "nobody"}, domain.ErrNotFound},
		{"not a name", application.DeletePersona{UserID: b.alice, Name: "../carol"}, domain.ErrNotFound},
		{"no user is not the operator", application.DeletePersona{Name: "carol"}, domain.ErrNotFound},
	} {
		if _, err := b.app.DeletePersona.Handle(ctx, tt.cmd); !errors.Is(err, tt.want) {
			t.Fatalf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := b.accounts.AvatarByName(ctx, "carol"); err != nil {
		t.Fatalf("a refused deletion touched carol: %v", err)
	}

	b.clock.Advance(time.Minute)
	del, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{UserID: b.alice, Name: "Carol"})
	if err != nil {
		t.Fatal(err)
	}
	if del.Name != "carol" || del.URI != b.carol || !del.DeletedAt.Equal(b.clock.Now()) {
		t.Fatalf("deleted %+v", del)
	}
	// Gone at once for every lookup; the name is taken for good.
	if _, err := b.accounts.AvatarByName(ctx, "carol"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("carol by name after her deletion: %v", err)
	}
	if rn, err := b.names.Get(ctx, "carol"); err != nil || !rn.Deleted() || rn.OwnerID != b.carolID {
		t.Fatalf("carol's name %+v %v", rn, err)
	}
	if _, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{UserID: b.alice, Name: "carol"}); !errors.Is(err, domain.ErrGone) {
		t.Fatalf("deleting again: %v, want gone", err)
	}
	if _, err := b.app.Publish.Handle(ctx, application.Publish{UserID: b.alice, As: "carol", Content: "still here?"}); err == nil {
		t.Fatal("a deleted persona posted")
	}
	for what, err := range map[string]error{
		"sign-up": func() error {
			_, err := b.app.SignUp.Handle(ctx, application.SignUp{UserName: "carol", Password: "correct horse"})
			return err
		}(),
		"persona": func() error {
			_, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: b.bob, Name: "CAROL"})
			return err
		}(),
		"group": func() error {
			_, err := b.app.CreateGroup.Handle(ctx, application.CreateGroup{UserID: b.bob, Name: "carol"})
			return err
		}(),
	} {
		if !errors.Is(err, domain.ErrNameTaken) {
			t.Fatalf("%s with a deleted persona's name: %v, want taken", what, err)
		}
	}

	// The pass sends the Delete and removes what carol left here; her key
	// stays while the Delete's deliveries are queued.
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 0 {
		t.Fatalf("first pass: %d finished, %v; want 0 (deliveries queued)", n, err)
	}
	for _, j := range deletesTo(t, b, want) {
		if j.SenderID != b.carolID || j.KeyID != b.carol+"#main-key" {
			t.Fatalf("job %+v is not signed by carol", j)
		}
		var act struct {
			ID, Type, Actor, Object string
			To                      []string
		}
		if err := json.Unmarshal(j.Payload, &act); err != nil {
			t.Fatal(err)
		}
		if act.Type != "Delete" || act.Actor != b.carol || act.Object != b.carol || act.ID != b.carol+"#delete" ||
			len(act.To) != 1 || act.To[0] != application.ASPublic {
			t.Fatalf("payload %s", j.Payload)
		}
	}
	if _, err := b.content.PostByObjectURI(ctx, post.ObjectURI); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("carol's post after the Delete went out: %v", err)
	}
	if n, _ := b.follows.CountFollowers(ctx, b.carol, domain.FollowAccepted); n != 0 {
		t.Fatalf("%d followers left", n)
	}
	if left, _ := b.follows.FollowedURIs(ctx, b.carol, "", 10); len(left) != 0 {
		t.Fatalf("carol still follows %v", left)
	}
	keys := engine.ActorKeys{Actors: b.accounts}
	if pem, err := keys.SigningKey(ctx, b.carolID); err != nil || pem == "" {
		t.Fatalf("carol's key while her Delete is queued: %v", err)
	}
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 0 {
		t.Fatalf("pass while queued: %d, %v", n, err)
	}
	if again := activityJobs(t, b, b.carol+"#delete"); len(again) != len(want) {
		t.Fatalf("a second pass queued %d jobs, want the same %d", len(again), len(want))
	}

	settleAll(t, b)
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 1 {
		t.Fatalf("pass after the deliveries: %d finished, %v; want 1", n, err)
	}
	if _, err := keys.SigningKey(ctx, b.carolID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("carol's key after her deletion: %v", err)
	}
	if left, _ := b.accounts.RetiredAvatars(ctx, "", 10); len(left) != 0 {
		t.Fatalf("retired left %+v", left)
	}
	if rn, err := b.names.Get(ctx, "carol"); err != nil || !rn.Deleted() {
		t.Fatalf("carol's name after the deletion finished: %+v %v", rn, err)
	}
	if mine, _ := b.accounts.AvatarsOf(ctx, b.alice); len(mine) != 1 || mine[0].Name != "alice" {
		t.Fatalf("alice's personas %+v", mine)
	}
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 0 {
		t.Fatalf("pass with nothing left: %d, %v", n, err)
	}
}

// A deletion whose fan-out dies half way keeps the followers (the fan-out
// that resumes reads them) and is finished by the process that resumes
// it: every inbox gets one Delete.
func TestPersonaDeletionResumesAfterACrash(t *testing.T) {
	t.Parallel()
	jobs := &crashingJobs{JobStore: memory.NewJobStore(), okCalls: 2}
	b := newDeletionBundle(t, func(d *application.Deps) { d.Jobs, d.JobAdmin = jobs, jobs.JobStore })
	b.jobs = jobs.JobStore
	ctx := t.Context()
	want := seedFollowers(t, b.appBundle, b.carol, 4500) // 5 pages

	if _, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{Name: "carol", ByOperator: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.PersonaDeletions.Finish(ctx); !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("pass during the crash: %v", err)
	}
	if n, _ := b.follows.CountFollowers(ctx, b.carol, domain.FollowAccepted); n != 4500 {
		t.Fatalf("%d followers after the crash, want all 4500 kept for the resumed fan-out", n)
	}
	jobs.okCalls = 1 << 40
	// Another pass leaves the recorded fan-out to the resumer.
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 0 {
		t.Fatalf("pass while the fan-out is leased: %d, %v", n, err)
	}
	if n, _ := b.follows.CountFollowers(ctx, b.carol, domain.FollowAccepted); n != 4500 {
		t.Fatalf("%d followers while the fan-out is unfinished", n)
	}
	b.clock.Advance(application.FanOutLease)
	if n, err := b.app.FanOuts.Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resume: %d, %v", n, err)
	}
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 0 {
		t.Fatalf("pass after the resume: %d, %v", n, err)
	}
	deletesTo(t, b, want)
	if n, _ := b.follows.CountFollowers(ctx, b.carol, domain.FollowAccepted); n != 0 {
		t.Fatalf("%d followers left once the fan-out was done", n)
	}
	settleAll(t, b)
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 1 {
		t.Fatalf("last pass: %d, %v", n, err)
	}
}

// A deletion begun where the name could not be marked (a crash between
// the two writes, or the CLI) is found by the pass, which marks the name;
// Run starts a pass as soon as a deletion here wakes it.
func TestPersonaDeletionPassFindsAndMarks(t *testing.T) {
	t.Parallel()
	b := newDeletionBundle(t)
	ctx := t.Context()
	if err := b.accounts.RetireAvatar(ctx, b.carolID, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if rn, _ := b.names.Get(ctx, "carol"); rn.Deleted() {
		t.Fatal("marked before the pass")
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.app.PersonaDeletions.Run(runCtx) }()
	defer func() { stop(); <-done }()
	waitFor(t, "the pass to remove carol (no follower, nothing to deliver)", func() bool {
		_, err := b.accounts.AvatarByID(ctx, b.carolID)
		return errors.Is(err, domain.ErrNotFound)
	})
	if rn, err := b.names.Get(ctx, "carol"); err != nil || !rn.Deleted() || !rn.DeletedAt.Equal(t0) {
		t.Fatalf("carol's name %+v %v", rn, err)
	}
	// A deletion begun now is woken into a pass without the clock moving.
	d, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: b.bob, Name: "dora"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{UserID: b.bob, Name: "dora"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the woken pass to remove dora", func() bool {
		_, err := b.accounts.AvatarByID(ctx, d.ID)
		return errors.Is(err, domain.ErrNotFound)
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Deletions waiting for their last deliveries, more than a page of them,
// never hide one that can finish after them.
func TestPersonaDeletionPassPages(t *testing.T) {
	t.Parallel()
	b := newDeletionBundle(t)
	ctx := t.Context()
	for i := range 101 {
		name := fmt.Sprintf("p%03d", i)
		a, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: b.bob, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if i < 100 { // a follower: a Delete to deliver, the key kept
			uri := fmt.Sprintf("https://r.example/users/f%03d", i)
			if err := b.content.Upsert(ctx, domain.ForeignAvatar{ActorURI: uri, Inbox: uri + "/inbox", Host: "r.example"}); err != nil {
				t.Fatal(err)
			}
			f, _ := domain.NewFollower(uri, b.app.URLs.Persona(name), uri+"#f", domain.FollowAccepted, t0)
			if _, err := b.follows.Add(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{UserID: b.bob, Name: a.Name}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 1 {
		t.Fatalf("pass: %d finished, %v; want p100 alone", n, err)
	}
	left, _ := b.accounts.RetiredAvatars(ctx, "", 0)
	if len(left) != 100 {
		t.Fatalf("%d deletions left, want the 100 waiting for their deliveries", len(left))
	}
	for _, a := range left {
		if a.Name == "p100" {
			t.Fatal("p100, with nothing to deliver, was not finished")
		}
	}
}

// A persona stored without a reservation (before names were reserved)
// gets one when it is deleted, marked: its name is taken for good too.
func TestPersonaDeletionReservesAnUnreservedName(t *testing.T) {
	t.Parallel()
	b := newDeletionBundle(t)
	ctx := t.Context()
	old := domain.Avatar{ID: "old-1", RootUserID: b.bob, Name: "olden", Keys: domain.KeyPair{PublicPEM: "PUBLIC KEY", PrivatePEM: "PRIVATE KEY"}, CreatedAt: t0}
	if err := b.accounts.CreateAvatar(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := b.app.DeletePersona.Handle(ctx, application.DeletePersona{UserID: b.bob, Name: "olden"}); err != nil {
		t.Fatal(err)
	}
	if n, err := b.app.PersonaDeletions.Finish(ctx); err != nil || n != 1 {
		t.Fatalf("pass: %d, %v", n, err)
	}
	if rn, err := b.names.Get(ctx, "olden"); err != nil || !rn.Deleted() || rn.OwnerID != "old-1" || rn.Kind != domain.NameKindPersona {
		t.Fatalf("olden's name %+v %v", rn, err)
	}
	if _, err := b.app.CreatePersona.Handle(ctx, application.CreatePersona{UserID: b.alice, Name: "olden"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("olden again: %v, want taken", err)
	}
}
