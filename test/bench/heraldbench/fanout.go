package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
)

// Fan-out scenario of issues 8 and 14: 1,000 hosts, 10 inboxes each; most
// hosts answer in 5–50 ms, 5% take 2 s, and each fault row adds hosts that
// fail in one way the fediverse has: 2% that accept and never answer (the
// client's timeout ends each attempt), 2% that refuse connections, 2% that
// answer 503 or 429 with Retry-After. The faulty hosts are the same in every
// row, so every row has the same healthy work and the same bound.
const (
	fanHosts       = 1000
	fanWorkers     = 8 // the engine's slots, and as many waits beside them
	fanPerHost     = 2
	inboxesPerHost = 10
	deadShare      = 0.02
	refusedShare   = 0.02
	busyShare      = 0.02 // half 503, half 429, with Retry-After
	slowShare      = 0.05
	slowLatency    = 2 * time.Second
	timeout        = 10 * time.Second // HERALD_DELIVERY_TIMEOUT's default
	retryAfter     = "60"
)

type hostKind int

const (
	kindHealthy hostKind = iota
	kindSlow
	kindDead    // accepts, never answers
	kindRefused // nothing listens: connection refused
	kind503     // 503 with Retry-After
	kind429     // 429 with Retry-After
)

type hostProfile struct {
	kind    hostKind
	latency time.Duration
}

// answers says the host delivers: its work counts in the bound.
func (p hostProfile) answers() bool { return p.kind == kindHealthy || p.kind == kindSlow }

// fakeFediverse is one loopback listener per host that answers with each
// host's latency (or fault) and records every delivery.
type fakeFediverse struct {
	hosts   map[string]hostProfile // by host:port
	order   []string
	servers []*http.Server
	mu      sync.Mutex
	marker  string         // the post being counted: a delivery whose body lacks it is not
	got     map[string]int // inbox → deliveries
	last    time.Time      // of a healthy delivery
	healthy int            // distinct healthy inboxes delivered
	dups    int
	faulty  int // requests that reached a faulty host (refused ones never do)
	// The places the engine keeps busy, seen from the servers: requests in
	// flight, their integral over time (request-seconds) since reset, and
	// the end of each answering host's last request with the integral then.
	inFlight int
	busy     float64
	changed  time.Time
	ended    map[string]moment
	stop     chan struct{}
	stopOnce sync.Once
}

// moment is a time of a run with the request-seconds in flight at every
// host until then.
type moment struct {
	at   time.Time
	busy float64
}

func newFakeFediverse(seed uint64, hosts int) (*fakeFediverse, error) {
	f := &fakeFediverse{hosts: map[string]hostProfile{}, got: map[string]int{}, ended: map[string]moment{}, stop: make(chan struct{})}
	rng := rand.New(rand.NewPCG(seed, seed))
	perm := rng.Perm(hosts)
	share := func(x float64) int { return max(1, int(x*float64(hosts))) }
	nDead, nRefused, nBusy, nSlow := share(deadShare), share(refusedShare), share(busyShare), share(slowShare)
	var refused []net.Listener
	defer func() {
		for _, ln := range refused {
			_ = ln.Close()
		}
	}()
	for i := 0; i < hosts; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.close()
			return nil, err
		}
		var p hostProfile
		switch k := perm[i]; {
		case k < nDead:
			p.kind = kindDead
		case k < nDead+nRefused:
			p.kind = kindRefused
		case k < nDead+nRefused+nBusy/2:
			p.kind = kind503
		case k < nDead+nRefused+nBusy:
			p.kind = kind429
		case k < nDead+nRefused+nBusy+nSlow:
			p.kind, p.latency = kindSlow, slowLatency
		default:
			p.latency = 5*time.Millisecond + time.Duration(rng.Int64N(int64(45*time.Millisecond)))
		}
		host := ln.Addr().String()
		f.hosts[host] = p
		f.order = append(f.order, host)
		if p.kind == kindRefused {
			// Closed once every port is taken, so no later listener of
			// this loop gets it; then every connection to it is refused.
			refused = append(refused, ln)
			continue
		}
		srv := &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 5 * time.Second}
		f.servers = append(f.servers, srv)
		go func() { _ = srv.Serve(ln) }()
	}
	return f, nil
}

func (f *fakeFediverse) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	p := f.hosts[r.Host]
	f.mu.Lock()
	f.inFlightBy(1)
	if !p.answers() {
		f.faulty++
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlightBy(-1)
		if p.answers() {
			f.ended[r.Host] = moment{f.changed, f.busy}
		}
		f.mu.Unlock()
	}()
	switch p.kind {
	case kindDead:
		select { // never answers; the client gives up
		case <-r.Context().Done():
		case <-f.stop:
		}
		return
	case kind503, kind429:
		w.Header().Set("Retry-After", retryAfter)
		if p.kind == kind503 {
			w.WriteHeader(http.StatusServiceUnavailable)
		} else {
			w.WriteHeader(http.StatusTooManyRequests)
		}
		return
	}
	select {
	case <-time.After(p.latency):
	case <-f.stop:
		return
	}
	inbox := "http://" + r.Host + r.URL.Path
	f.mu.Lock()
	if f.marker != "" && !bytes.Contains(body, []byte(f.marker)) {
		f.mu.Unlock() // a late delivery of an earlier post
		w.WriteHeader(http.StatusAccepted)
		return
	}
	f.got[inbox]++
	if f.got[inbox] == 1 {
		f.healthy++
		f.last = time.Now()
	} else {
		f.dups++
	}
	f.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// inFlightBy counts requests starting (1) or ending (-1); f.mu is held.
func (f *fakeFediverse) inFlightBy(d int) {
	now := time.Now()
	if !f.changed.IsZero() {
		f.busy += float64(f.inFlight) * now.Sub(f.changed).Seconds()
	}
	f.inFlight += d
	f.changed = now
}

// reset starts counting the deliveries of the post whose body has marker.
func (f *fakeFediverse) reset(marker string) {
	f.mu.Lock()
	f.got, f.healthy, f.dups, f.faulty, f.last, f.marker = map[string]int{}, 0, 0, 0, time.Time{}, marker
	f.inFlightBy(0)
	f.busy, f.ended = 0, map[string]moment{}
	f.mu.Unlock()
}

// tail is when a run's tail began, and the share of the places kept busy
// until then (the requests in flight at every host on average from start,
// over the places). The tail begins when fewer answering hosts have
// deliveries left than the places can hold at the per-host cap: the end
// of the last request of the (places/perHost)-th host from the end. Until
// then a place left idle is time the engine lost; from then on what is
// left is chains of deliveries to hosts at their cap, which no engine
// keeping the cap can run in fewer places.
func (f *fakeFediverse) tail(start time.Time, places, perHost int) (from time.Duration, busy float64) {
	f.mu.Lock()
	ends := slices.Collect(maps.Values(f.ended))
	f.mu.Unlock()
	k := places / perHost
	if len(ends) < k {
		return 0, 0
	}
	slices.SortFunc(ends, func(a, b moment) int { return b.at.Compare(a.at) })
	at := ends[k-1]
	if d := at.at.Sub(start); d > 0 {
		return d, at.busy / d.Seconds() / float64(places)
	}
	return 0, 0
}

func (f *fakeFediverse) close() {
	f.stopOnce.Do(func() { close(f.stop) })
	for _, s := range f.servers {
		_ = s.Close()
	}
}

// inboxes lists the inboxes of the hosts for which keep is true, the
// latency work of those that answer, and how many inboxes are faulty.
func (f *fakeFediverse) inboxes(keep func(hostProfile) bool) (list []string, total, maxHost time.Duration, faulty int) {
	list, prompt, slow, maxHost, faulty := f.inboxesSplit(keep)
	return list, prompt + slow, maxHost, faulty
}

// inboxesSplit is inboxes with the answer time split as the engine may
// run it: the deliveries to hosts that answer within ParkAfter (1 s) run
// in the 8 slots (prompt), those to slower hosts in the 8 waits beside
// them, or in a slot while the waits are taken (slow); both summed over
// the healthy deliveries.
func (f *fakeFediverse) inboxesSplit(keep func(hostProfile) bool) (list []string, prompt, slow, maxHost time.Duration, faulty int) {
	const parkAfter = time.Second
	for _, h := range f.order {
		p := f.hosts[h]
		if !keep(p) {
			continue
		}
		for k := 0; k < inboxesPerHost; k++ {
			list = append(list, fmt.Sprintf("http://%s/users/u%d/inbox", h, k))
		}
		if !p.answers() {
			faulty += inboxesPerHost
			continue
		}
		if p.latency <= parkAfter {
			prompt += time.Duration(inboxesPerHost) * p.latency
		} else {
			slow += time.Duration(inboxesPerHost) * p.latency
		}
		maxHost = max(maxHost, time.Duration(inboxesPerHost)*p.latency)
	}
	return
}

type fanRun struct {
	makespan time.Duration
	healthy  int
	dups     int
	faulty   int // requests that reached faulty hosts during the run
	rssMax   int
	rssAt    [rssPoints]int // RSS when 5, 10, ... 100% of the healthy deliveries were made
	first    time.Duration
	tail     time.Duration // when the tail began (fakeFediverse.tail)
	busy     float64       // the share of the places busy until then
}

// rssPoints is how many points of the healthy deliveries RSS is read at
// (every 5%).
const rssPoints = 20

// rssAtShare is the RSS when share (0.25, 0.5, ...) of the healthy
// deliveries were made.
func (r fanRun) rssAtShare(share float64) int { return r.rssAt[int(share*rssPoints+0.5)-1] }

// runFanout starts a worker child on the targets, publishes posts (one, or
// two: the second once the first's healthy deliveries are all made, while
// its retries to faulty hosts come due), waits until every healthy inbox got
// the last post, then stops the child. The run measured is the last post's.
func runFanout(ctx context.Context, f *fakeFediverse, store, dbURL string, targets []string, workers, perHost, posts int, extra ...string) (fanRun, error) {
	f.reset("post 1 ")
	wantHealthy := 0
	for _, in := range targets {
		if u, err := url.Parse(in); err == nil && f.hosts[u.Host].answers() {
			wantHealthy++
		}
	}
	dir, err := os.MkdirTemp("", "heraldbench")
	if err != nil {
		return fanRun{}, err
	}
	defer os.RemoveAll(dir)
	tf := filepath.Join(dir, "targets.json")
	b, _ := json.Marshal(targets)
	if err := os.WriteFile(tf, b, 0o600); err != nil {
		return fanRun{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return fanRun{}, err
	}
	args := append([]string{"worker", "-store", store, "-targets", tf, "-database-url", dbURL,
		"-workers", strconv.Itoa(workers), "-per-host", strconv.Itoa(perHost)}, extra...)
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fanRun{}, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return fanRun{}, err
	}
	if err := cmd.Start(); err != nil {
		return fanRun{}, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	started := make(chan time.Time, 2)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "PUBLISHING "); ok {
				ns, _ := strconv.ParseInt(v, 10, 64)
				started <- time.Unix(0, ns)
			}
		}
	}()
	run := fanRun{}
	var firstStart time.Time
	for post := 1; post <= posts; post++ {
		if post > 1 {
			f.reset(fmt.Sprintf("post %d ", post))
			if _, err := fmt.Fprintln(in, "PUBLISH"); err != nil {
				return run, err
			}
		}
		var start time.Time
		select {
		case start = <-started:
		case <-time.After(5 * time.Minute):
			return fanRun{}, errors.New("worker never started publishing")
		case <-ctx.Done():
			return fanRun{}, ctx.Err()
		}
		if post == 1 {
			firstStart = start
		}
		run = fanRun{first: start.Sub(firstStart)}
		lastLog := time.Now()
		deadline := time.Now().Add(20 * time.Minute)
		for {
			f.mu.Lock()
			healthy, last, dups, faulty := f.healthy, f.last, f.dups, f.faulty
			f.mu.Unlock()
			if kib := rssKiB(cmd.Process.Pid); kib > 0 {
				run.rssMax = max(run.rssMax, kib)
				for q := range run.rssAt {
					if run.rssAt[q] == 0 && healthy*rssPoints >= wantHealthy*(q+1) {
						run.rssAt[q] = kib
					}
				}
			}
			if time.Since(lastLog) > 15*time.Second {
				fmt.Fprintf(os.Stderr, "     post %d: %d/%d healthy deliveries after %s\n", post, healthy, wantHealthy, time.Since(start).Round(time.Second))
				lastLog = time.Now()
			}
			if healthy >= wantHealthy {
				run.makespan, run.healthy, run.dups, run.faulty = last.Sub(start), healthy, dups, faulty
				run.tail, run.busy = f.tail(start, 2*workers, perHost)
				break
			}
			if time.Now().After(deadline) {
				return run, fmt.Errorf("only %d of %d healthy deliveries after 20 min", healthy, wantHealthy)
			}
			select {
			case <-ctx.Done():
				return run, ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	return run, nil
}

// fanoutRow is one fault row of the fan-out table.
type fanoutRow struct {
	name  string // for -fanout-rows
	label string
	keep  func(hostProfile) bool
	posts int
	store string
	args  []string // the worker's extra flags
}

func benchFanout(ctx context.Context, r *report, dbURL string, rows map[string]bool) error {
	hosts := fanHosts
	if r.quick {
		hosts = 100 // a smoke run of every row in a few minutes
	}
	f, err := newFakeFediverse(42, hosts)
	if err != nil {
		return err
	}
	defer f.close()
	healthyOnly, prompt, slow, maxHost, _ := f.inboxesSplit(hostProfile.answers)
	// places is the slots and the waits beside them: work that may run in
	// either (slow hosts', dead hosts') shares them.
	const places = 2 * fanWorkers
	boundWith := func(dead time.Duration) time.Duration {
		return max(prompt/fanWorkers, (prompt+slow+dead)/places, maxHost/fanPerHost)
	}
	bound := boundWith(0)
	// rowBound adds to the healthy work what a row's dead hosts force on
	// any engine with these places: a host that accepts and never answers
	// is known dead only once an attempt has waited out the delivery
	// timeout, so each costs at least one timeout of a place (in a slot
	// until ParkAfter, then in a wait). The second post's dead hosts are
	// known already (their first attempts were the first post's), so its
	// bound is the healthy work's.
	rowBound := func(row fanoutRow) time.Duration {
		if row.posts > 1 {
			return bound
		}
		dead := time.Duration(0)
		for _, p := range f.hosts {
			if p.kind == kindDead && row.keep(p) {
				dead += timeout
			}
		}
		return boundWith(dead)
	}
	with := func(kinds ...hostKind) func(hostProfile) bool {
		return func(p hostProfile) bool { return p.answers() || slices.Contains(kinds, p.kind) }
	}
	count := func(k hostKind) int {
		n := 0
		for _, p := range f.hosts {
			if p.kind == k {
				n++
			}
		}
		return n
	}
	all := []fanoutRow{
		{"clean", fmt.Sprintf("no faulty host (the %d slow 2 s hosts only)", count(kindSlow)), hostProfile.answers, 1, "memory", nil},
		{"dead", fmt.Sprintf("%d dead hosts: accept, never answer", count(kindDead)), with(kindDead), 1, "memory", nil},
		{"refused", fmt.Sprintf("%d hosts refuse connections", count(kindRefused)), with(kindRefused), 1, "memory", nil},
		{"retry-after", fmt.Sprintf("%d hosts answer 503 and %d answer 429, with Retry-After: %s", count(kind503), count(kind429), retryAfter), with(kind503, kind429), 1, "memory", nil},
		{"all", "every fault above at once", with(kindDead, kindRefused, kind503, kind429), 1, "memory", nil},
		{"second-post", "second post, published as the first's healthy deliveries end, while its retries to the dead hosts come due", with(kindDead), 2, "memory", nil},
		{"postgres", "no faulty host, PostgreSQL store", hostProfile.answers, 1, "postgres", nil},
		// What each rule is worth, on the dead-host row.
		{"dead-no-park", "dead hosts; waits keep their slots (ParkAfter 1 h)", with(kindDead), 1, "memory", []string{"-park-after", "1h"}},
		{"dead-no-hold", "dead hosts; no hold after a failure (NoHold)", with(kindDead), 1, "memory", []string{"-no-hold"}},
		{"dead-neither", "dead hosts; neither", with(kindDead), 1, "memory", []string{"-park-after", "1h", "-no-hold"}},
	}
	t := &table{
		title:   fmt.Sprintf("Fan-out makespan: one post to %d inboxes on %d hosts, with the faults of the fediverse", hosts*inboxesPerHost, hosts),
		command: "go run ./test/bench/heraldbench -only fanout [-fanout-rows clean,dead,...]",
		intro: fmt.Sprintf("One `Publish` to followers on loopback hosts (%d inboxes each; hosts answer in 5–50 ms and %d%% take %s), 8 slots and 2 per host, real signed HTTP deliveries, the engine in its own process with the default engine and client settings (delivery timeout %s, connect timeout 3 s). "+
			"Each row adds one kind of faulty host (the same hosts in every row). Makespan: from the start of `Publish` to the last delivery to a host that answers. "+
			"Bound: max(prompt_work/8, (prompt_work+slow_work+dead_work)/16, max_host_work/2); for the hosts that answer, the same in every row, max(%s/8, %s/16, %s/2) = %s, where work is the servers' answer time: a delivery to a host that answers within 1 s (ParkAfter) runs in one of the 8 slots, one to a slower host in one of the 8 waits beside them, or in a slot while the waits are taken. "+
			"dead_work is one delivery timeout for each dead host of the row: a host that accepts and never answers is known dead only once an attempt has waited the timeout out, in one of the same 16 places (the second post's dead hosts are known from the first post's attempts, so its bound is the healthy work's). "+
			"Faulty requests: requests that reached a faulty host during the run (a refused connection reaches none).",
			inboxesPerHost, int(slowShare*100), slowLatency, timeout, ms(prompt), ms(prompt+slow), ms(maxHost), ms(bound)),
		header: []string{"row", "inboxes", "healthy deliveries", "makespan", "bound", "ratio to bound", "tail from", "places busy before it", "faulty requests", "duplicates"},
	}
	var labels []string
	var values []float64
	type rssRow struct {
		row fanoutRow
		run fanRun
	}
	var rss []rssRow
	asked := false // a row of this table was asked for
	for _, row := range all {
		if len(rows) > 0 && !rows[row.name] {
			continue
		}
		asked = true
		targets, _, _, faulty := f.inboxes(row.keep)
		fmt.Fprintf(os.Stderr, "   fan-out row %s (%d inboxes, %d faulty, %s store)\n", row.name, len(targets), faulty, row.store)
		run, err := runFanout(ctx, f, row.store, dbURL, targets, fanWorkers, fanPerHost, row.posts, row.args...)
		if err != nil {
			t.notes = append(t.notes, fmt.Sprintf("Row %q not measured: %v", row.name, err))
			if ctx.Err() != nil {
				return err
			}
			continue
		}
		b := rowBound(row)
		fmt.Fprintf(os.Stderr, "   row %s: makespan %s, bound %s, ratio %s, tail from %s, %s of the places busy before it, %d faulty requests, %d duplicates, RSS %s at 25%% and %s at the end (%s)\n",
			row.name, ms(run.makespan), ms(b), ratio(run.makespan.Seconds(), b.Seconds()), ms(run.tail), percent(run.busy), run.faulty, run.dups,
			mib(run.rssAtShare(0.25)), mib(run.rssAtShare(1)), ratio(float64(run.rssAtShare(1)), float64(run.rssAtShare(0.25))))
		label := row.label
		if row.posts > 1 {
			label += fmt.Sprintf(" (the first published %s earlier)", ms(run.first))
		}
		t.rows = append(t.rows, []string{label, strconv.Itoa(len(targets)), strconv.Itoa(run.healthy), ms(run.makespan), ms(b),
			ratio(run.makespan.Seconds(), b.Seconds()), ms(run.tail), percent(run.busy), strconv.Itoa(run.faulty), strconv.Itoa(run.dups)})
		labels = append(labels, fmt.Sprintf("%s (%s)", row.name, ratio(run.makespan.Seconds(), b.Seconds())))
		values = append(values, run.makespan.Seconds())
		rss = append(rss, rssRow{row, run})
	}
	if len(rows) == 0 || rows["serial"] {
		made := map[string]fanRun{}
		for _, x := range rss {
			made[x.row.name] = x.run
		}
		if err := benchSerial(ctx, r, f, made); err != nil {
			r.notes = append(r.notes, "the serial worker's headline: "+err.Error())
		}
	}
	if !asked {
		return nil // -fanout-rows serial alone: the tables below keep their sections
	}
	t.rows = append(t.rows, []string{"bound of the hosts that answer: max(prompt_work/8, (prompt_work+slow_work)/16, max_host_work/2)", strconv.Itoa(len(healthyOnly)), "–", ms(bound), ms(bound), "1.00×", "–", "–", "–", "–"})
	labels = append(labels, "bound")
	values = append(values, bound.Seconds())
	t.notes = append(t.notes,
		"What keeps a faulty or slow host's cost small ([the life of a delivery](delivery.md)): a delivery to a host that has not answered lately gives its slot back after 1 s (engine.Config.ParkAfter) without an answer and waits out its answer or timeout in a separate budget of 8 waits, so a dead host costs 1 s of a slot, not the 10 s timeout; once a host has answered slower than 1 s (the 2 s hosts), its deliveries run in those waits from their start while one is free, and hold a slot only while all are taken; deliveries to hosts whose last attempt failed run in that budget from the start, at most 2 at a time; and a host failure or a Retry-After holds the host's other jobs, unattempted, until the first step of the retry curve (16 s) or the Retry-After, so a dead host's 10 jobs cost it at most 2 attempts (its 2 per-host slots) per hold, not 10, and mostly 1 (a delivery parked on a host not heard from makes leases pass the host over). The dead-no-park, dead-no-hold and dead-neither rows show what the first and the last rule are worth.",
		"Faulty requests per faulty job show the hold: without it every job of a faulty host is attempted when leased.",
		fmt.Sprintf("Tail from: when fewer hosts that answer had deliveries left than the %d places hold at %d per host (the end of the last delivery of the %dth host from the end). Places busy before it: the requests in flight at the servers, on average from the start until then, over the %d places. Before the tail a place left idle is time the engine lost; in the tail the last hosts' deliveries run at most %d at a time whatever the engine does. The queue is leased oldest job first ([rules §2](rules.md#2-delivery-engine)), and a fan-out enqueues its followers a page at a time in URI order (each page spread by host: domain.SpreadHosts), so the slow hosts of the last page are reached only once the pages before it are leased: their chains of %d deliveries of %s, %d at a time, are most of the tail, and what the bound (which lets any delivery start at once) does not count.",
			places, fanPerHost, places/fanPerHost, places, fanPerHost, inboxesPerHost, slowLatency, fanPerHost),
		fmt.Sprintf("A dead host costs one delivery timeout, as the bound counts: once its first delivery has waited %s (ParkAfter) without an answer, leases pass over the host until that delivery's failure is recorded, and the failure holds the host. A job of it leased before then (in the same lease as the first, or leased ahead) still makes a second attempt: the dead row's faulty requests beyond its %d dead hosts. Two attempts for every dead host would cost (%s + %d × %d × %s)/%d = %s.",
			time.Second, count(kindDead), ms(prompt+slow), count(kindDead), fanPerHost, timeout, places, ms((prompt+slow+time.Duration(fanPerHost*count(kindDead))*timeout)/places)),
	)
	t.plot = r.svg("fanout-makespan.svg", barChart("Fan-out makespan (s) by fault row, against the bound", "s", labels, values))
	r.add(t)
	// The RSS of every row's engine process: the plateau is the
	// PostgreSQL row's; the memory store's rows show the same client.
	rt := &table{
		title:   "Memory: RSS plateau under a fan-out",
		command: "go run ./test/bench/heraldbench -only fanout -fanout-rows postgres",
		intro: fmt.Sprintf("RSS of the engine process (8 workers, signed HTTP deliveries to %d hosts) through each fan-out row above, sampled every 250 ms and read when a quarter, half, three quarters and all of the healthy deliveries were made. "+
			"Bound (issue 14, on the PostgreSQL row): the end at most 1.1× the RSS at a quarter, once the pools and buffers are warm. The memory store's rows hold every job in the process, so their RSS grows with the queue by design.", hosts),
		header: []string{"row", "store", "at 25%", "at 50%", "at 75%", "at 100%", "max", "end against 25%"},
		notes: []string{"The delivery client keeps at most 512 idle connections, for 30 s (delivery.Config.MaxIdleConns, IdleConnTimeout): a fan-out visits each host's inboxes one after the other, so a connection kept per host visited would seldom be used again. " +
			"A heap profile of the worker at its end: `HERALDBENCH_HEAP_PROFILE=/tmp/heap.pprof go run ./test/bench/heraldbench -only fanout -fanout-rows postgres`, then `go tool pprof`."},
	}
	var curves []series
	for _, x := range rss {
		run := x.run
		rt.rows = append(rt.rows, []string{x.row.name, x.row.store, mib(run.rssAtShare(0.25)), mib(run.rssAtShare(0.5)), mib(run.rssAtShare(0.75)), mib(run.rssAtShare(1)),
			mib(run.rssMax), ratio(float64(run.rssAtShare(1)), float64(run.rssAtShare(0.25)))})
		c := series{name: x.row.name}
		for q, kib := range run.rssAt {
			if kib > 0 {
				c.xs = append(c.xs, float64(q+1)*100/rssPoints)
				c.ys = append(c.ys, float64(kib)/1024)
			}
		}
		curves = append(curves, c)
	}
	if len(rss) == 0 {
		rt.rows = append(rt.rows, []string{"not measured: no fan-out row ran (see the notes of the fan-out table)", "–", "–", "–", "–", "–", "–", "–"})
	} else {
		rt.plot = r.svg("fanout-rss.svg", linearChart("Engine RSS (MiB) through each fan-out row", "healthy deliveries made (%)", "RSS (MiB)", curves))
	}
	r.add(rt)
	return nil
}

// workerMain is the engine process of a fan-out run: it seeds one persona
// with followers at the targets, prints PUBLISHING <unix ns>, publishes one
// post, and delivers until SIGTERM.
func workerMain(args []string) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	store := fs.String("store", "memory", "memory or postgres")
	targets := fs.String("targets", "", "JSON file of inbox URLs")
	dbURL := fs.String("database-url", "", "PostgreSQL")
	workers := fs.Int("workers", 8, "")
	perHost := fs.Int("per-host", 2, "")
	parkAfter := fs.Duration("park-after", 0, "engine.Config.ParkAfter (0: the default)")
	noHold := fs.Bool("no-hold", false, "engine.Config.NoHold")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := engine.Config{Workers: *workers, PerHost: *perHost, ParkAfter: *parkAfter, NoHold: *noHold, PurgeEvery: -1}
	if err := worker(*store, *targets, *dbURL, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

func worker(store, targetsFile, dbURL string, engineCfg engine.Config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var inboxes []string
	b, err := os.ReadFile(targetsFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &inboxes); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cfg := bootstrap.Config{Store: store, Addr: "127.0.0.1:0", Domain: "herald.example"}
	if store == "postgres" {
		u, cleanup, err := freshSchema(ctx, dbURL)
		if err != nil {
			return err
		}
		defer cleanup()
		cfg.DatabaseURL = bootstrap.Secret(u)
	}
	stores, closeStores, err := bootstrap.OpenStores(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeStores()

	clock, ids := system.Clock{}, system.IDs{}
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		return err
	}
	urls := application.NewURLs("herald.example")
	alice := domain.Avatar{ID: ids.NewID(), RootUserID: "bench-user", Name: "alice", Keys: kp, CreatedAt: clock.Now()}
	if err := stores.Actors.CreateAvatar(ctx, alice); err != nil {
		return err
	}
	for i, inbox := range inboxes {
		actor := strings.TrimSuffix(inbox, "/inbox")
		if err := stores.Foreign.Upsert(ctx, domain.ForeignAvatar{ActorURI: actor, PublicKeyID: actor + "#main-key", Inbox: inbox, FetchedAt: clock.Now()}); err != nil {
			return err
		}
		f, err := domain.NewFollower(actor, urls.Persona("alice"), fmt.Sprintf("%s#follow-%d", actor, i), domain.FollowAccepted, clock.Now())
		if err != nil {
			return err
		}
		if _, err := stores.Followers.Add(ctx, f); err != nil {
			return err
		}
	}
	client := delivery.New(delivery.Config{Timeout: timeout, AllowPrivate: true, UserAgent: "Herald/bench"})
	defer client.Close()
	eng := engine.New(engine.Deps{
		Jobs: stores.Jobs, Instances: stores.Instances, Deliverer: client, Keys: engine.NewCachedKeys(engine.ActorKeys{Actors: stores.Actors}, clock),
		Clock: clock, Random: system.Random{}, IDs: ids, Wakes: stores.Wakes, Log: log,
	}, engineCfg)
	policy, _ := domain.NewNamePolicy("instance", nil)
	app := application.New(application.Deps{
		Users: stores.Users, Tokens: stores.Tokens, Actors: stores.Actors, Names: stores.Names, Followers: stores.Followers,
		Foreign: stores.Foreign, Posts: stores.Posts, HTML: sanitizer.NewHTMLSanitizer(), Jobs: stores.Jobs, Passwords: security.Bcrypt{Cost: 4}, Keys: security.RSAKeys{},
		Clock: clock, IDs: ids, Log: log,
		URLs: urls, NamePolicy: policy, InstanceActor: "instance", Waker: eng,
	})
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	publish := func(n int) error {
		fmt.Printf("PUBLISHING %d\n", time.Now().UnixNano())
		_, err := app.Publish.Handle(ctx, application.Publish{UserID: "bench-user", As: "alice", Content: fmt.Sprintf("post %d hello, fediverse", n), Visibility: domain.VisibilityPublic})
		return err
	}
	if err := publish(1); err != nil {
		return err
	}
	// Each PUBLISH line on stdin publishes one more post.
	go func() {
		s := bufio.NewScanner(os.Stdin)
		for n := 2; s.Scan(); n++ {
			if s.Text() == "PUBLISH" {
				if err := publish(n); err != nil {
					fmt.Fprintln(os.Stderr, "worker: publish:", err)
				}
			}
		}
	}()
	<-done
	if path := os.Getenv("HERALDBENCH_HEAP_PROFILE"); path != "" {
		// Where the engine's memory is at the end of a run (go tool pprof).
		if f, err := os.Create(path); err == nil {
			runtime.GC()
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
	}
	return nil
}

// freshSchema creates a schema for one run and returns a URL using it.
func freshSchema(ctx context.Context, dbURL string) (string, func(), error) {
	admin, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return "", nil, err
	}
	schema := fmt.Sprintf("fanout_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	}, nil
}
