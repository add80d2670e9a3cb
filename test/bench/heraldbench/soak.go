package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldfed/herald/test/bench/pgcount"
)

// The soak scenario of issue 36: Herald as a busy instance lives, for a
// bounded time, on loopback. A `herald serve` process (built from the
// working tree, and from a baseline revision with -soak-baseline) on a
// fresh store; its persona followed by the 2,000 actors of soakFediverse;
// then, for -soak-duration, a post every 5 s (1,050 inboxes), 100 signed
// Create{Note} a second and one Like a second to its shared inbox, while 5
// servers answer after 2–5 s, 3 never answer and 2 refuse connections;
// then a drain of at most -soak-drain. The control run is the same with
// the slow servers answering at once.

const (
	soakPostEvery   = 5 * time.Second
	soakCreatesPerS = 100
	soakSampleEvery = 5 * time.Second
	soakAdminToken  = "soak-operator-token-0123456789"
	// soakInFlight bounds the inbound requests outstanding at once: past
	// it the load waits (and the table says it fell behind).
	soakInFlight = 256
)

// soakOpts are the scenario's flags.
type soakOpts struct {
	duration time.Duration // the load
	drain    time.Duration // the most the drain may take
	stores   []string      // sqlite, postgres
	variants []string      // slow, control
	baseline string        // git revision; empty: the working tree only
	current  string        // git revision; empty: the working tree
	dbURL    string
}

// soakSample is one reading of the server and of what the servers got,
// every soakSampleEvery from the start of the load.
type soakSample struct {
	at                     time.Duration // since the load started
	queued, leased         float64       // herald_jobs
	leaseSum, leaseCount   float64       // herald_lease_duration_seconds, both labels
	goroutines             float64
	rssKiB                 int
	cpu                    time.Duration // the herald process's, so far
	machine                pgcount.CPU
	healthy, slow          int // first deliveries so far
	published              int // posts published so far
	admin                  time.Duration
	adminAge               time.Duration // how old the answer's reading was (its at)
	adminOK                bool
	adminErr               string
	inboundSent, inboundOK int64
}

// soakRun is one run's record.
type soakRun struct {
	store, variant, build string
	duration              time.Duration
	samples               []soakSample
	// inbound latencies of each minute of the load (Creates and Likes)
	inbound    [][]time.Duration
	inboundBad int64 // answers other than 202, and failures
	badSample  string
	behind     int64 // requests sent more than a second late
	posts      int
	postErrs   int
	wantPost   int // healthy inboxes of a post
	healthyAt  []int
	slowAt     []int
	dups       int
	healthy    int
	lastHealth time.Time
	loadEnd    time.Time
	drained    bool
	drainTook  time.Duration
	setup      time.Duration
	notes      []string
}

func benchSoak(ctx context.Context, r *report, o soakOpts) error {
	if o.duration <= 0 {
		o.duration = 3 * time.Minute
		if r.quick {
			o.duration = time.Minute
		}
	}
	if o.drain <= 0 {
		o.drain = 3 * time.Minute
	}
	load0 := loadAverage()
	repo, err := gitOut(ctx, ".", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "heraldbench-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	type build struct {
		label, rev string
		b          *heraldBuild
	}
	builds := []*build{{label: "current", rev: o.current}}
	if o.baseline != "" {
		builds = []*build{{label: "baseline", rev: o.baseline}, builds[0]}
	}
	for _, b := range builds {
		fmt.Fprintf(os.Stderr, "   building the %s herald (%s)\n", b.label, orTree(b.rev))
		if b.b, err = buildHerald(ctx, repo, dir, b.label, b.rev); err != nil {
			return err
		}
	}
	f, err := newSoakFediverse()
	if err != nil {
		return err
	}
	defer f.close()
	fmt.Fprintf(os.Stderr, "   signing %d Create activities\n", int(o.duration.Seconds())*soakCreatesPerS)
	creates, err := f.creates(int(o.duration.Seconds()) * soakCreatesPerS)
	if err != nil {
		return err
	}
	var runs []*soakRun
	for _, store := range o.stores {
		for _, variant := range o.variants {
			for _, b := range builds {
				label := b.label + " " + b.b.rev
				fmt.Fprintf(os.Stderr, "   soak %s, %s, %s: %s of load\n", store, variant, label, o.duration)
				run, err := soakOnce(ctx, f, b.b, dir, store, variant, o, creates)
				if run != nil {
					run.build = label
					runs = append(runs, run)
				}
				if err != nil {
					if ctx.Err() != nil {
						return err
					}
					r.notes = append(r.notes, fmt.Sprintf("soak %s %s (%s) failed: %v", store, variant, label, err))
					fmt.Fprintf(os.Stderr, "   soak %s %s failed: %v\n", store, variant, err)
					continue
				}
				fmt.Fprintf(os.Stderr, "   %s\n", run.summary())
			}
		}
	}
	soakTables(r, f, runs, o, load0, loadAverage(), builds[len(builds)-1].b)
	return nil
}

// soakOnce runs one store, variant and build: set-up, load, drain.
func soakOnce(ctx context.Context, f *soakFediverse, b *heraldBuild, dir, store, variant string, o soakOpts, creates []signedPost) (*soakRun, error) {
	run := &soakRun{store: store, variant: variant, duration: o.duration, wantPost: f.inboxesOf(soakHealthy)}
	if err := f.setFaults(false, false); err != nil {
		return nil, err
	}
	setup := time.Now()
	env := []string{"HERALD_ADMIN_TOKEN=" + soakAdminToken, "HERALD_STORE=" + store}
	if store == "postgres" {
		u, cleanup, err := freshSchema(ctx, o.dbURL)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		env = append(env, "DATABASE_URL="+u)
	}
	s, err := startHerald(ctx, b, dir, env...)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(s.dataDir)
	defer os.Remove(s.logPath)
	defer s.stop()
	if err := s.signUp(ctx); err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConns: soakInFlight, MaxIdleConnsPerHost: soakInFlight, DisableCompression: true}}
	defer client.CloseIdleConnections()
	if err := soakFollow(ctx, f, client, s); err != nil {
		return nil, fmt.Errorf("set-up: %w (server log: %s)", err, s.logTail())
	}
	if err := waitQueueEmpty(ctx, client, s, 3*time.Minute); err != nil {
		return nil, fmt.Errorf("set-up: %w", err)
	}
	run.setup = time.Since(setup)
	if err := f.setFaults(true, variant == "slow"); err != nil {
		return nil, err
	}
	defer func() { _ = f.setFaults(false, false) }()

	start := time.Now()
	fmt.Fprintf(os.Stderr, "   load starts after a set-up of %s\n", run.setup.Round(time.Second))
	seconds := int((o.duration + o.drain + time.Minute) / time.Second)
	f.begin(start, seconds)
	end := start.Add(o.duration)
	minutes := int((o.duration + time.Minute - 1) / time.Minute)
	run.inbound = make([][]time.Duration, minutes)
	hz := clockTicks()

	var (
		mu        sync.Mutex
		postURIs  []string
		published atomic.Int64
		sent, ok  atomic.Int64
		wg        sync.WaitGroup
	)
	record := func(t0 time.Time, lat time.Duration, code int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if m := int(t0.Sub(start) / time.Minute); m >= 0 && m < len(run.inbound) {
			run.inbound[m] = append(run.inbound[m], lat)
		}
		if code != http.StatusAccepted {
			run.inboundBad++
			if run.badSample == "" {
				run.badSample = fmt.Sprintf("HTTP %d %v", code, err)
			}
		}
	}
	loadCtx, stopLoad := context.WithDeadline(ctx, end)
	defer stopLoad()
	// The posts: one every soakPostEvery from the start, each in its own
	// goroutine so that a slow Publish does not move the next.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; ; n++ {
			due := start.Add(time.Duration(n-1) * soakPostEvery)
			if !due.Before(end) || !sleepUntil(loadCtx, due) {
				return
			}
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				uri, inboxes, err := publishSoakPost(ctx, client, s, n)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					run.postErrs++
					run.notes = append(run.notes, fmt.Sprintf("post %d: %v", n, err))
					return
				}
				if inboxes != len(f.inboxes) && len(run.notes) < 5 {
					run.notes = append(run.notes, fmt.Sprintf("post %d went to %d inboxes, not %d", n, inboxes, len(f.inboxes)))
				}
				postURIs = append(postURIs, uri)
				published.Add(1)
			}(n)
		}
	}()
	// The Creates: soakCreatesPerS a second on a fixed schedule (an open
	// loop: a slow answer does not slow the load, up to soakInFlight
	// outstanding).
	wg.Add(1)
	go func() {
		defer wg.Done()
		sem := make(chan struct{}, soakInFlight)
		var reqs sync.WaitGroup
		defer reqs.Wait()
		for i := 0; i < len(creates); i++ {
			due := start.Add(time.Duration(i) * time.Second / soakCreatesPerS)
			if !due.Before(end) || !sleepUntil(loadCtx, due) {
				return
			}
			select {
			case sem <- struct{}{}:
			case <-loadCtx.Done():
				return
			}
			if time.Since(due) > time.Second {
				atomic.AddInt64(&run.behind, 1)
			}
			reqs.Add(1)
			go func(p signedPost) {
				defer reqs.Done()
				defer func() { <-sem }()
				t0 := time.Now()
				sent.Add(1)
				code, err := sendSigned(ctx, client, s.url, p)
				if code == http.StatusAccepted {
					ok.Add(1)
				}
				record(t0, time.Since(t0), code, err)
			}(creates[i])
		}
	}()
	// The Likes: one a second, of the newest post, by a different actor
	// each time.
	wg.Add(1)
	go func() {
		defer wg.Done()
		uris, kinds := f.actors()
		var healthy []string
		for i, u := range uris {
			if kinds[i] == soakHealthy {
				healthy = append(healthy, u)
			}
		}
		for n := 0; ; n++ {
			if !sleepUntil(loadCtx, start.Add(time.Duration(n)*time.Second+500*time.Millisecond)) {
				return
			}
			mu.Lock()
			object := ""
			if len(postURIs) > 0 {
				object = postURIs[len(postURIs)-1]
			}
			mu.Unlock()
			if object == "" {
				continue
			}
			p, err := f.like(healthy[n%len(healthy)], object, n)
			if err != nil {
				record(time.Now(), 0, 0, err)
				continue
			}
			t0 := time.Now()
			sent.Add(1)
			code, err := sendSigned(ctx, client, s.url, p)
			if code == http.StatusAccepted {
				ok.Add(1)
			}
			record(t0, time.Since(t0), code, err)
		}
	}()

	// The samples, through the load and the drain.
	sample := func(admin bool) {
		sm := soakSample{at: time.Since(start), machine: pgcount.MachineCPU(), rssKiB: rssKiB(s.cmd.Process.Pid), published: int(published.Load()),
			inboundSent: sent.Load(), inboundOK: ok.Load()}
		sm.cpu, _ = s.cpu(hz)
		if m, err := scrapeMetrics(ctx, client, s.url); err == nil {
			sm.queued, sm.leased = m[`herald_jobs{state="queued"}`], m[`herald_jobs{state="leased"}`]
			sm.leaseSum = m[`herald_lease_duration_seconds_sum{found="true"}`] + m[`herald_lease_duration_seconds_sum{found="false"}`]
			sm.leaseCount = m[`herald_lease_duration_seconds_count{found="true"}`] + m[`herald_lease_duration_seconds_count{found="false"}`]
			sm.goroutines = m["go_goroutines"]
		}
		if admin {
			t0 := time.Now()
			q, err := queueView(ctx, client, s)
			sm.admin, sm.adminOK = time.Since(t0), err == nil
			if err == nil {
				sm.adminAge = max(0, t0.Sub(q.At))
			}
			if err != nil {
				sm.adminErr = err.Error()
			}
		}
		f.snapshot(func(c *soakCount) { sm.healthy, sm.slow = c.healthy, c.slow })
		run.samples = append(run.samples, sm)
	}
	sample(true)
	for k := 1; sleepUntil(loadCtx, start.Add(time.Duration(k)*soakSampleEvery)); k++ {
		sample(k%2 == 0)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	run.loadEnd = time.Now()
	run.posts = int(published.Load())
	want := run.posts * run.wantPost
	// The drain: until every healthy inbox has every post, or o.drain.
	drainEnd := run.loadEnd.Add(o.drain)
	next := run.loadEnd.Add(soakSampleEvery)
	for time.Now().Before(drainEnd) {
		got := 0
		f.snapshot(func(c *soakCount) { got = c.healthy })
		if got >= want {
			break
		}
		if !sleepUntil(ctx, time.Now().Add(250*time.Millisecond)) {
			return run, ctx.Err()
		}
		if time.Now().After(next) {
			sample(true)
			next = next.Add(soakSampleEvery)
		}
	}
	sample(true)
	f.snapshot(func(c *soakCount) {
		run.healthyAt, run.slowAt = append([]int(nil), c.healthyAt...), append([]int(nil), c.slowAt...)
		run.dups, run.healthy, run.lastHealth = c.dups, c.healthy, c.lastHealthy
	})
	run.drained = run.healthy >= want
	if run.drained {
		run.drainTook = max(0, run.lastHealth.Sub(run.loadEnd))
	}
	return run, nil
}

// sleepUntil waits until t; false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// soakFollow has every actor of the fediverse follow the bench persona,
// 8 at a time; each Follow must be accepted (202).
func soakFollow(ctx context.Context, f *soakFediverse, client *http.Client, s *heraldServer) error {
	uris, _ := f.actors()
	follows := make([]signedPost, len(uris))
	var firstErr error
	var once sync.Once
	parallel(len(uris), func(i int) {
		p, err := f.follow(uris[i])
		if err != nil {
			once.Do(func() { firstErr = err })
		}
		follows[i] = p
	})
	if firstErr != nil {
		return firstErr
	}
	return postAll(ctx, client, s.url+"/inbox", follows, 8)
}

// waitQueueEmpty waits until no job is queued or leased (the Accepts of
// the set-up are delivered), at most limit.
func waitQueueEmpty(ctx context.Context, client *http.Client, s *heraldServer, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		q, err := queueView(ctx, client, s)
		if err != nil {
			return err
		}
		if q.ByState["queued"]+q.ByState["leased"] == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d jobs still queued and %d leased after %s", q.ByState["queued"], q.ByState["leased"], limit)
		}
		if !sleepUntil(ctx, time.Now().Add(500*time.Millisecond)) {
			return ctx.Err()
		}
	}
}

type queueViewJSON struct {
	At      time.Time      `json:"at"`
	ByState map[string]int `json:"by_state"`
}

// queueView is the operator API's queue view (GET /admin/api/queue).
func queueView(ctx context.Context, client *http.Client, s *heraldServer) (queueViewJSON, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/admin/api/queue", nil)
	if err != nil {
		return queueViewJSON{}, err
	}
	req.Header.Set("Authorization", "Bearer "+soakAdminToken)
	resp, err := client.Do(req)
	if err != nil {
		return queueViewJSON{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return queueViewJSON{}, fmt.Errorf("queue view: HTTP %d: %s", resp.StatusCode, b)
	}
	var q queueViewJSON
	return q, json.Unmarshal(b, &q)
}

// publishSoakPost publishes post n of the bench persona, public, through
// the client API, and returns its URI and how many inboxes it goes to.
func publishSoakPost(ctx context.Context, client *http.Client, s *heraldServer, n int) (string, int, error) {
	body, _ := json.Marshal(map[string]string{"as": inboxPersona, "content": soakPostContent(n), "visibility": "public"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/api/v1/posts", strings.NewReader(string(body)))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusCreated {
		return "", 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	var out struct {
		URI     string `json:"uri"`
		Inboxes int    `json:"inboxes"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return "", 0, err
	}
	return out.URI, out.Inboxes, nil
}

// scrapeMetrics reads /metrics into series → value ("name{labels}" as
// written, without the comment lines).
func scrapeMetrics(ctx context.Context, client *http.Client, base string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: HTTP %d", resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}
