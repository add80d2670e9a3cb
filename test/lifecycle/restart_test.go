// Package lifecycle_test proves the graceful shutdown of SPEC §2 on the
// whole server over PostgreSQL, SQLite and Mongo: stopping a server in the middle of a
// fan-out and starting another loses no delivery and sends none twice.
package lifecycle_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	pgx "github.com/jackc/pgx/v5"

	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// sink is a loopback "remote server" that counts the deliveries it
// accepted, per activity and inbox. A request cut off by the sender
// before the sink answered is not counted: the sender will send it again.
type sink struct {
	*httptest.Server
	delay time.Duration
	hold  chan struct{} // when set, requests wait for it to close

	mu       sync.Mutex
	accepted map[string]int
	started  int
	cut      int
}

func newSink(t *testing.T, delay time.Duration) *sink {
	s := &sink{delay: delay, accepted: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var act struct {
		ID string `json:"id"`
	}
	if err != nil || json.Unmarshal(body, &act) != nil || act.ID == "" || r.Header.Get("Signature") == "" {
		http.Error(w, "bad delivery", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.started++
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
	}
	if r.Context().Err() != nil {
		s.mu.Lock()
		s.cut++
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	s.accepted[act.ID+" "+r.Host+r.URL.Path]++
	s.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (s *sink) counts() (accepted map[string]int, started, cut int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.accepted))
	for k, v := range s.accepted {
		out[k] = v
	}
	return out, s.started, s.cut
}

func (s *sink) total() int {
	a, _, _ := s.counts()
	n := 0
	for _, v := range a {
		n += v
	}
	return n
}

// schemaURL makes an empty schema and returns a DATABASE_URL whose
// connections use it, or skips naming what stays unverified.
func schemaURL(t *testing.T) string {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Skipf("UNVERIFIED: no PostgreSQL at DATABASE_URL (%v): the graceful restart under load (no job lost, none sent twice) was not run", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "herald_lifecycle_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func config(t *testing.T, dbURL string, grace time.Duration) bootstrap.Config {
	t.Helper()
	cfg, err := bootstrap.LoadConfig([]string{
		"--herald-addr=127.0.0.1:0", "--herald-store=postgres", "--database-url=" + dbURL,
		"--herald-allow-private-targets=true", "--herald-bcrypt-cost=4", "--herald-shutdown-grace=" + grace.String(),
		"--herald-workers=8", "--herald-per-host=2",
	}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// running is one started server.
type running struct {
	srv    *bootstrap.Server
	base   string
	stop   context.CancelFunc
	done   chan error
	closed func()
}

func start(t *testing.T, cfg bootstrap.Config, name string) *running {
	t.Helper()
	log := slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})).With("server", name)
	ctx, cancel := context.WithCancel(context.Background())
	srv, cleanup, err := bootstrap.InitializeServer(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &running{srv: srv, stop: cancel, done: make(chan error, 1), closed: cleanup}
	go func() { r.done <- srv.Run(ctx) }()
	wait, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	addr, err := srv.Addr(wait)
	if err != nil {
		t.Fatal(err)
	}
	r.base = "http://" + addr.String()
	t.Cleanup(func() { r.shutdown(t) })
	return r
}

// halt stops the server as SIGTERM does and waits for Run to return; its
// store stays open for inspection.
func (r *running) halt(t *testing.T) {
	t.Helper()
	if r.done == nil {
		return
	}
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("server did not stop")
	}
	r.done = nil
}

// shutdown halts the server and closes its store.
func (r *running) shutdown(t *testing.T) {
	t.Helper()
	r.halt(t)
	if r.closed != nil {
		r.closed()
		r.closed = nil
	}
}

func post(t *testing.T, u, token, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 201 {
		t.Fatalf("POST %s: %d %v", u, resp.StatusCode, out)
	}
	return out
}

// seed signs up alice through the API and gives her perHost followers on
// each sink; it returns her token.
func seed(t *testing.T, r *running, sinks []*sink, perHost int) string {
	t.Helper()
	tok := post(t, r.base+"/api/v1/accounts", "", `{"username":"alice","password":"correct horse"}`)["token"].(string)
	ctx := context.Background()
	st := r.srv.Stores()
	followed := r.srv.App().URLs.Persona("alice")
	for i, s := range sinks {
		for k := range perHost {
			actor := fmt.Sprintf("%s/users/f%d_%d", s.URL, i, k)
			if err := st.Foreign.Upsert(ctx, domain.ForeignAvatar{ActorURI: actor, Inbox: actor + "/inbox", FetchedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			f, _ := domain.NewFollower(actor, followed, "", domain.FollowAccepted, time.Now())
			if _, err := st.Followers.Add(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tok
}

// waitProgress waits until done holds, failing if progress (a count that
// only grows) stands still for stall, or if limit passes. It bounds
// liveness, not speed: a store whose leases are slow (Mongo on FerretDB
// v2: seconds per lease under load) takes longer but keeps moving, while
// a stuck queue fails after stall whatever the store.
func waitProgress(t *testing.T, what string, stall, limit time.Duration, progress func() int, done func() bool) {
	t.Helper()
	start := time.Now()
	last, lastAt := progress(), start
	for !done() {
		now := time.Now()
		if n := progress(); n > last {
			last, lastAt = n, now
		}
		if now.Sub(lastAt) > stall {
			t.Fatalf("waiting for %s: no progress for %s (stuck at %d after %s)", what, stall, last, now.Sub(start).Round(time.Second))
		}
		if now.Sub(start) > limit {
			t.Fatalf("waiting for %s: not done after %s (at %d, still moving)", what, limit, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func counts(t *testing.T, r *running) map[domain.JobState]int {
	t.Helper()
	c, err := r.srv.Stores().JobAdmin.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A fan-out of 3 posts to 4 hosts × 50 followers (600 deliveries) is under
// way when the first server gets its stop signal; a second server finishes
// the queue. Every delivery arrives exactly once.
func TestGracefulRestartUnderLoad(t *testing.T) {
	t.Parallel()
	gracefulRestartUnderLoad(t, config(t, schemaURL(t), 30*time.Second))
}

// gracefulRestartUnderLoad is that proof on the store cfg names; the second
// server starts on the same store once the first has closed it.
func gracefulRestartUnderLoad(t *testing.T, cfg bootstrap.Config) {
	sinks := []*sink{newSink(t, 15*time.Millisecond), newSink(t, 15*time.Millisecond), newSink(t, 30*time.Millisecond), newSink(t, 5*time.Millisecond)}
	const perHost, posts = 50, 3
	want := len(sinks) * perHost * posts

	first := start(t, cfg, "first")
	tok := seed(t, first, sinks, perHost)
	activities := map[string]bool{}
	for i := range posts {
		out := post(t, first.base+"/api/v1/posts", tok, fmt.Sprintf(`{"as":"alice","content":"post %d"}`, i))
		if out["queued"] != float64(len(sinks)*perHost) {
			t.Fatalf("post %d queued %v", i, out["queued"])
		}
		activities[out["activity"].(string)] = true
	}
	all := func() int {
		n := 0
		for _, s := range sinks {
			n += s.total()
		}
		return n
	}
	started := time.Now()
	waitProgress(t, "the fan-out to be under way", time.Minute, 10*time.Minute, all, func() bool { return all() >= want/5 })
	t.Logf("first server: %d deliveries in %s", all(), time.Since(started).Round(time.Millisecond))
	first.halt(t)

	// The first server stopped mid-run: part of the queue is left, nothing
	// stays leased (in-flight deliveries finished within the grace), and
	// no request was cut off.
	sentBefore := all()
	left := counts(t, first)
	t.Logf("first server delivered %d of %d; left %v", sentBefore, want, left)
	if sentBefore >= want || left[domain.JobQueued] == 0 {
		t.Fatalf("the stop did not come mid-run: %d delivered, %v", sentBefore, left)
	}
	if left[domain.JobLeased] != 0 {
		t.Fatalf("leases left behind by a graceful stop: %v", left)
	}
	if left[domain.JobSucceeded] != sentBefore {
		t.Fatalf("%d succeeded in the store, %d accepted by the sinks", left[domain.JobSucceeded], sentBefore)
	}
	first.shutdown(t)

	second := start(t, cfg, "second")
	started = time.Now()
	succeeded := func() int { return counts(t, second)[domain.JobSucceeded] }
	waitProgress(t, "the second server to finish the queue", time.Minute, 10*time.Minute, succeeded, func() bool { return succeeded() == want })
	t.Logf("second server: the other %d deliveries in %s", want-sentBefore, time.Since(started).Round(time.Millisecond))
	second.shutdown(t)

	seen := map[string]int{}
	for _, s := range sinks {
		accepted, _, cut := s.counts()
		if cut != 0 {
			t.Errorf("%s: %d requests cut off by a shutdown", s.URL, cut)
		}
		for k, n := range accepted {
			seen[k] += n
		}
	}
	if len(seen) != want {
		t.Fatalf("%d distinct deliveries, want %d", len(seen), want)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", k, n)
		}
		act, _, _ := strings.Cut(k, " ")
		if !activities[act] {
			t.Errorf("unknown activity delivered: %s", k)
		}
	}
}

// The shutdown order: on the signal /readyz turns false, the listener
// stops accepting and no new job is leased, while a delivery in flight
// still finishes (within the grace) and is recorded as succeeded.
func TestShutdownOrder(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	slow := newSink(t, 0)
	slow.hold = make(chan struct{})
	cfg := config(t, dbURL, 30*time.Second)
	cfg.PerHost = 1 // one delivery in flight, the rest wait
	r := start(t, cfg, "only")
	tok := seed(t, r, []*sink{slow}, 5)
	post(t, r.base+"/api/v1/posts", tok, `{"as":"alice","content":"hello"}`)
	waitFor(t, "a delivery in flight", 30*time.Second, func() bool { _, started, _ := slow.counts(); return started == 1 })
	if err := r.srv.Ready(context.Background()); err != nil {
		t.Fatalf("not ready before the stop: %v", err)
	}

	r.stop()
	waitFor(t, "/readyz to turn false", 10*time.Second, func() bool { return r.srv.Ready(context.Background()) != nil })
	if err := r.srv.Ready(context.Background()); !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("readiness: %v", err)
	}
	addr := strings.TrimPrefix(r.base, "http://")
	waitFor(t, "the listener to close", 10*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-r.done:
		t.Fatalf("Run returned (%v) while a delivery was in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(slow.hold) // the remote answers now
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatal(err)
		}
		r.done = nil
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the in-flight delivery ended")
	}
	if _, started, cut := slow.counts(); started != 1 || cut != 0 {
		t.Fatalf("%d deliveries started after the stop signal, %d cut off", started-1, cut)
	}
	c := counts(t, r)
	if c[domain.JobSucceeded] != 1 || c[domain.JobQueued] != 4 || c[domain.JobLeased] != 0 {
		t.Fatalf("after the stop: %v", c)
	}
}

// A delivery still running when the grace period ends is cut off, its job
// released without spending an attempt, and the next server sends it.
func TestGraceExpiryReleases(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	stuck := newSink(t, 0)
	stuck.hold = make(chan struct{})
	cfg := config(t, dbURL, 500*time.Millisecond)
	cfg.PerHost = 1
	first := start(t, cfg, "first")
	tok := seed(t, first, []*sink{stuck}, 1)
	post(t, first.base+"/api/v1/posts", tok, `{"as":"alice","content":"hello"}`)
	waitFor(t, "the delivery in flight", 30*time.Second, func() bool { _, started, _ := stuck.counts(); return started == 1 })
	first.halt(t)
	if _, _, cut := stuck.counts(); cut != 1 {
		t.Fatalf("the stuck delivery was not cut off at the end of the grace (cut %d)", cut)
	}
	jobs, err := first.srv.Stores().JobAdmin.List(context.Background(), ports.JobFilter{})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v %v", jobs, err)
	}
	if j := jobs[0]; j.State != domain.JobQueued || j.Attempts != 0 || j.LeaseToken != "" {
		t.Fatalf("after the grace: %+v", j)
	}

	first.shutdown(t)
	close(stuck.hold)
	second := start(t, cfg, "second")
	waitFor(t, "the second server to deliver it", 30*time.Second, func() bool { return counts(t, second)[domain.JobSucceeded] == 1 })
	if n := stuck.total(); n != 1 {
		t.Fatalf("accepted %d times", n)
	}
}
