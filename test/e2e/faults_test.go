package e2e_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/adapters/httpapi/activitypub"
	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/fake"
	"github.com/heraldfed/herald/test/heraldtest"
)

// engineHarness is Herald built piece by piece as bootstrap builds it (the
// real HTTP surfaces, delivery client and engine over the memory store),
// but on a fake clock, so the retry, Retry-After, breaker and give-up
// rules can be driven through real HTTP without waiting for real delays.
type engineHarness struct {
	api
	clock     *fake.Clock
	jobs      *memory.JobStore
	instances *memory.InstanceStore
	engine    *engine.Engine
	token     string
	alice     string
}

type readyOK struct{}

func (readyOK) Ready(context.Context) error { return nil }

func startEngineHarness(t *testing.T) *engineHarness {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	domainName := ln.Addr().String()
	clock := fake.NewClock(time.Now().UTC().Truncate(time.Second))
	accounts, names, follows, content := memory.NewAccountStore(), memory.NewNameRegistry(), memory.NewFollowerStore(), memory.NewContentStore()
	h := &engineHarness{api: api{t: t, base: "http://" + domainName}, clock: clock, jobs: memory.NewJobStore(), instances: memory.NewInstanceStore()}
	log := heraldtest.Logger(t, "herald")
	client := delivery.New(delivery.Config{Timeout: 500 * time.Millisecond, AllowPrivate: true,
		UserAgent: "Herald/e2e (+http://" + domainName + ")", Now: clock.Now})
	t.Cleanup(client.Close)
	ids := fake.NewIDs("e2e")
	h.engine = engine.New(engine.Deps{
		Jobs: h.jobs, Instances: h.instances, Deliverer: client, Keys: engine.ActorKeys{Actors: accounts},
		Clock: clock, Random: fake.Random(0), IDs: ids, Log: log,
	}, engine.Config{PurgeEvery: -1})
	urls := application.NewURLs(domainName)
	policy, _ := domain.NewNamePolicy("instance", nil)
	app := application.New(application.Deps{
		Users: accounts, Tokens: accounts, Actors: accounts, Names: names, Followers: follows, Foreign: content, Posts: content, HTML: sanitizer.NewHTMLSanitizer(),
		Tombstones: content, Jobs: h.jobs, Passwords: fake.Passwords{}, Keys: security.RSAKeys{}, Fetcher: client, Waker: h.engine, Clock: clock, IDs: ids, Log: log,
		URLs: urls, NamePolicy: policy, InstanceActor: "instance",
	})
	handler := httpapi.New(app, readyOK{}, log, activitypub.New(app, clock, log, activitypub.Config{}), httpapi.NewFollowRoutes(app, log))
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: handler}}
	srv.Start()
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	if _, err := app.InstanceActor.Handle(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = h.engine.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("engine did not stop")
		}
	})
	h.token = h.signUp("alice")
	h.alice = h.base + "/users/alice"
	return h
}

// jobsTo lists the jobs for one remote server.
func (h *engineHarness) jobsTo(rm *remote) []domain.Job {
	h.t.Helper()
	js, err := h.jobs.List(context.Background(), ports.JobFilter{Host: rm.host()})
	if err != nil {
		h.t.Fatal(err)
	}
	return js
}

// createJob is the one Create job for a remote server.
func (h *engineHarness) createJobs(rm *remote) []domain.Job {
	var out []domain.Job
	for _, j := range h.jobsTo(rm) {
		if strings.Contains(string(j.Payload), `"type":"Create"`) {
			out = append(out, j)
		}
	}
	return out
}

func (h *engineHarness) breaker(rm *remote) domain.RemoteInstance {
	r, err := h.instances.Get(context.Background(), rm.host())
	if err != nil {
		return domain.NewRemoteInstance(rm.host())
	}
	return r
}

// followedBy makes a remote actor follow alice and waits for its Accept to
// be delivered.
func (h *engineHarness) followedBy(rm *remote, name string) {
	h.t.Helper()
	rm.follow(rm.actor(name), h.alice, h.alice+"/inbox")
	eventually(h.t, "the Accept at "+rm.base, func() bool {
		js := h.jobsTo(rm)
		return len(rm.received("Accept")) == 1 && len(js) == 1 && js[0].State == domain.JobSucceeded
	})
}

// settledAfter waits until a job has ended its n-th attempt (it is not
// leased any more).
func (h *engineHarness) settledAfter(rm *remote, n int) domain.Job {
	h.t.Helper()
	var j domain.Job
	eventually(h.t, "attempt "+itoa(n)+" at "+rm.base, func() bool {
		js := h.createJobs(rm)
		if len(js) != 1 {
			return false
		}
		j = js[0]
		return j.Attempts == n && j.State != domain.JobLeased
	})
	return j
}

// Each way a remote can answer, through real HTTP, ends as SPEC §2 says:
// 2xx delivered; 400 and 410 dead at once with the reason; 429 waits the
// Retry-After; 5xx, a timeout and a closed connection wait the retry curve
// and count against the host's breaker; a retry succeeds once the host is
// back and resets its breaker. A connection closed without an answer is
// the one case where an attempt sends the activity twice: the Create goes
// out on the connection kept alive from the Accept, and the client sends
// it again at once on a new one (adapters/delivery: a server that closes a
// kept-alive connection as we write is the common cause), which the
// remote drops too.
func TestDeliveryOutcomesEndToEnd(t *testing.T) {
	t.Parallel()
	h := startEngineHarness(t)
	names := []string{"ok", "bad", "gone", "limited", "broken", "slow", "hangup"}
	behaviors := map[string]behavior{
		"ok": accepted, "bad": answer(400), "gone": answer(410), "limited": answer(429, "Retry-After", "120"),
		"broken": answer(503), "slow": slow, "hangup": hangUp,
	}
	remotes := map[string]*remote{}
	for _, n := range names {
		remotes[n] = newRemote(t, false, h.clock.Now, "u")
		h.followedBy(remotes[n], "u")
	}
	for n, rm := range remotes {
		rm.setBehavior(behaviors[n])
	}
	t1 := h.clock.Now()
	h.post(h.token, map[string]any{"as": "alice", "content": "hello"})

	curve1 := domain.RetryDelay(1, 0)
	tests := []struct {
		name     string
		state    domain.JobState
		runAt    time.Time // zero: not checked
		reason   string
		failures int // the host's breaker count
		copies   int // of the Create the remote received
	}{
		{"ok", domain.JobSucceeded, time.Time{}, "", 0, 1},
		{"bad", domain.JobDead, time.Time{}, "HTTP 400 Bad Request", 0, 1},
		{"gone", domain.JobDead, time.Time{}, "HTTP 410 Gone", 0, 1},
		{"limited", domain.JobQueued, t1.Add(120 * time.Second), "HTTP 429 Too Many Requests", 0, 1},
		{"broken", domain.JobQueued, t1.Add(curve1), "HTTP 503 Service Unavailable", 1, 1},
		{"slow", domain.JobQueued, t1.Add(curve1), "", 1, 1},
		{"hangup", domain.JobQueued, t1.Add(curve1), "", 1, 2},
	}
	for _, tt := range tests {
		rm := remotes[tt.name]
		j := h.settledAfter(rm, 1)
		creates := rm.received("Create")
		if len(creates) != tt.copies || creates[0].verifyErr != nil {
			t.Fatalf("%s: %d copies, want %d; verify %v", tt.name, len(creates), tt.copies, creates[0].verifyErr)
		}
		if j.State != tt.state || (!tt.runAt.IsZero() && !j.RunAt.Equal(tt.runAt)) || !strings.Contains(j.LastError, tt.reason) ||
			(tt.state != domain.JobSucceeded && j.LastError == "") {
			t.Errorf("%s: job %s attempts %d runAt +%s error %q", tt.name, j.State, j.Attempts, j.RunAt.Sub(t1), j.LastError)
		}
		if tt.state.Finished() == j.FinishedAt.IsZero() {
			t.Errorf("%s: finishedAt %v for %s", tt.name, j.FinishedAt, j.State)
		}
		if f := h.breaker(rm).ConsecutiveFailures; f != tt.failures {
			t.Errorf("%s: breaker counts %d failures, want %d", tt.name, f, tt.failures)
		}
	}

	// The broken host comes back; at the end of the first wait, due jobs
	// are retried: broken succeeds, slow and hangup fail again, the 429
	// still waits its Retry-After, the dead stay dead.
	remotes["broken"].setBehavior(accepted)
	h.clock.Set(t1.Add(curve1))
	h.engine.Wake()
	if j := h.settledAfter(remotes["broken"], 2); j.State != domain.JobSucceeded {
		t.Fatalf("broken after recovery: %+v", j)
	}
	if b := h.breaker(remotes["broken"]); !b.Healthy() {
		t.Fatalf("breaker not reset by the success: %+v", b)
	}
	for _, n := range []string{"slow", "hangup"} {
		j := h.settledAfter(remotes[n], 2)
		if want := t1.Add(curve1).Add(domain.RetryDelay(2, 0)); j.State != domain.JobQueued || !j.RunAt.Equal(want) {
			t.Errorf("%s second attempt: %s at +%s, want +%s", n, j.State, j.RunAt.Sub(t1), want.Sub(t1))
		}
	}
	for _, n := range []string{"limited", "bad", "gone", "ok"} {
		if got := len(remotes[n].received("Create")); got != 1 {
			t.Errorf("%s got %d copies, want 1", n, got)
		}
	}
	for _, rm := range remotes {
		for _, g := range rm.received("") {
			if g.verifyErr != nil {
				t.Errorf("%s: a copy whose signature does not verify: %v", rm.base, g.verifyErr)
			}
		}
	}
}

// Ten consecutive failures quarantine the host for an hour: its jobs are
// not attempted meanwhile and spend no attempt; when the quarantine ends
// they are all delivered and the breaker closes.
func TestCircuitBreakerEndToEnd(t *testing.T) {
	t.Parallel()
	h := startEngineHarness(t)
	rm := newRemote(t, true, h.clock.Now, "u")
	h.followedBy(rm, "u")
	rm.setBehavior(answer(503))
	for i := range domain.BreakerThreshold {
		h.post(h.token, map[string]any{"as": "alice", "content": "post " + itoa(i)})
	}
	// Each 503 holds the host's other jobs until the curve's first step
	// (the engine's hold after a failure): the clock moves a step at a
	// time until the tenth consecutive failure opens the breaker.
	var opened time.Time
	for step := 0; opened.IsZero(); step++ {
		if step > 4*domain.BreakerThreshold {
			t.Fatal("the breaker never opened")
		}
		n := len(rm.received("Create"))
		eventually(t, "the attempts settled", func() bool {
			for _, j := range h.createJobs(rm) {
				if j.State == domain.JobLeased {
					return false
				}
			}
			return true
		})
		if h.breaker(rm).Quarantined(h.clock.Now()) {
			opened = h.clock.Now()
			break
		}
		h.clock.Advance(domain.RetryDelay(1, 0))
		h.engine.Wake()
		eventually(t, "the next attempt", func() bool { return len(rm.received("Create")) > n })
	}
	until := opened.Add(domain.FirstQuarantine)
	// Two deliveries to the host may be in flight when the tenth failure
	// is counted (the per-host cap): the other one's failure counts too.
	b := h.breaker(rm)
	if !b.QuarantinedUntil.Equal(until) || b.ConsecutiveFailures < domain.BreakerThreshold ||
		b.ConsecutiveFailures > domain.BreakerThreshold+1 || b.QuarantineLevel != 1 {
		t.Fatalf("breaker %+v", b)
	}
	failures := b.ConsecutiveFailures
	// Every job waits for the end of the quarantine, the ten attempts
	// spent and no more.
	h.clock.Advance(domain.RetryDelay(2, 0))
	h.engine.Wake()
	eventually(t, "every job deferred to the end of the quarantine", func() bool {
		attempts := 0
		for _, j := range h.createJobs(rm) {
			if !j.RunAt.Equal(until) || j.State != domain.JobQueued {
				return false
			}
			attempts += j.Attempts
		}
		return attempts == failures
	})
	// A new post to the quarantined host waits too, with no attempt spent.
	h.post(h.token, map[string]any{"as": "alice", "content": "during the quarantine"})
	eventually(t, "the new job deferred", func() bool {
		for _, j := range h.createJobs(rm) {
			if strings.Contains(string(j.Payload), "during the quarantine") {
				return j.Attempts == 0 && j.State == domain.JobQueued && j.RunAt.Equal(until)
			}
		}
		return false
	})
	if n := len(rm.received("Create")); n != failures {
		t.Fatalf("%d requests reached the quarantined host, want %d", n, failures)
	}

	rm.setBehavior(accepted)
	h.clock.Set(until)
	h.engine.Wake()
	eventually(t, "every job delivered after the quarantine", func() bool {
		js := h.createJobs(rm)
		for _, j := range js {
			if j.State != domain.JobSucceeded {
				return false
			}
		}
		return len(js) == domain.BreakerThreshold+1
	})
	if b := h.breaker(rm); !b.Healthy() {
		t.Fatalf("breaker after the quarantine: %+v", b)
	}
	if n := len(rm.received("Create")); n != failures+domain.BreakerThreshold+1 {
		t.Fatalf("%d requests in all, want %d failed and %d delivered", n, failures, domain.BreakerThreshold+1)
	}
}

// A host that keeps answering 429 (it is up, so its breaker stays closed)
// gets 16 attempts, each after the curve's wait, and then the job is dead
// with the reason.
func TestGiveUpAfterSixteenAttemptsEndToEnd(t *testing.T) {
	t.Parallel()
	h := startEngineHarness(t)
	rm := newRemote(t, false, h.clock.Now, "u")
	h.followedBy(rm, "u")
	rm.setBehavior(answer(429))
	h.post(h.token, map[string]any{"as": "alice", "content": "hello"})
	for n := 1; n < domain.MaxAttempts; n++ {
		j := h.settledAfter(rm, n)
		if j.State != domain.JobQueued {
			t.Fatalf("attempt %d: %s", n, j.State)
		}
		if want := h.clock.Now().Add(domain.RetryDelay(n, 0)); !j.RunAt.Equal(want) {
			t.Fatalf("attempt %d: runAt %v, want %v", n, j.RunAt, want)
		}
		h.clock.Set(j.RunAt)
		h.engine.Wake()
	}
	j := h.settledAfter(rm, domain.MaxAttempts)
	if j.State != domain.JobDead || !strings.HasPrefix(j.LastError, "gave up after 16 attempts") || j.FinishedAt.IsZero() {
		t.Fatalf("final: %+v", j)
	}
	creates := rm.received("Create")
	if len(creates) != domain.MaxAttempts {
		t.Fatalf("%d attempts reached the host, want %d", len(creates), domain.MaxAttempts)
	}
	for i, g := range creates {
		if g.verifyErr != nil {
			t.Fatalf("attempt %d: signature does not verify: %v", i+1, g.verifyErr)
		}
	}
}
