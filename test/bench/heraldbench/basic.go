package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// benchSign compares signing a delivery (digest, signing string, RSA-2048
// signature, as adapters/delivery does it) on one goroutine with the sign
// rate openssl reaches on one core: the physical bound of signed delivery.
func benchSign(ctx context.Context, r *report) error {
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		return err
	}
	key, err := domain.ParsePrivateKey(kp.PrivatePEM)
	if err != nil {
		return err
	}
	const window = 3 * time.Second
	n := 0
	prof, profErr := os.CreateTemp("", "sign-*.pprof")
	if profErr == nil {
		defer os.Remove(prof.Name())
		profErr = pprof.StartCPUProfile(prof)
	}
	start := time.Now()
	for time.Since(start) < window {
		req, _ := http.NewRequest(http.MethodPost, "https://remote.example/users/bob/inbox", bytes.NewReader(payload))
		req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		req.Header.Set("Host", "remote.example")
		if err := delivery.Sign(req, "https://herald.example/users/alice#main-key", key, payload); err != nil {
			return err
		}
		n++
	}
	ours := float64(n) / time.Since(start).Seconds()
	var top string
	if profErr == nil {
		pprof.StopCPUProfile()
		_ = prof.Close()
		top = profileTop(ctx, prof.Name())
	}
	t := &table{
		title:   "Signing cost",
		command: "go run ./test/bench/heraldbench -only sign",
		intro:   "Signed deliveries prepared per second on one goroutine (one core), against `openssl speed -seconds 3 rsa2048` sign/s on one core of the same machine.",
		header:  []string{"what", "per second per core", "ratio to openssl"},
	}
	sslRate, sslErr := opensslSignRate(ctx)
	t.rows = append(t.rows, []string{"Herald: digest + signing string + RSA-2048 PKCS#1 v1.5 (go-fed/httpsig)", fmt.Sprintf("%.0f", ours), ratio(ours, sslRate)})
	if sslErr != nil {
		t.notes = append(t.notes, "openssl not measured: "+sslErr.Error())
	} else {
		t.rows = append(t.rows, []string{"openssl speed rsa2048 (sign, bound)", fmt.Sprintf("%.0f", sslRate), "1.00×"})
	}
	if top != "" {
		t.notes = append(t.notes, "Why below openssl: Go's crypto/rsa does its modular arithmetic in constant-time generic code (crypto/internal/fips140/bigmod) where OpenSSL uses hand-written assembly for each CPU; the CPU profile of the loop above (`go tool pprof -top`, flat time, first lines) puts the time there, not in Herald or go-fed/httpsig:\n\n```\n"+top+"```")
	}
	t.notes = append(t.notes, fmt.Sprintf("With %d cores, signing alone could feed about %.0f deliveries per second, far above what 8 slots of network-bound deliveries need; signing is not the bottleneck of the engine.", runtime.NumCPU(), ours*float64(runtime.NumCPU())))
	r.add(t)
	return nil
}

// profileTop is the head of `go tool pprof -top` for a profile of this
// binary.
func profileTop(ctx context.Context, path string) string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=8", self, path).Output()
	if err != nil {
		return ""
	}
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "flat") {
			return strings.Join(lines[i:min(len(lines), i+9)], "\n") + "\n"
		}
	}
	return ""
}

var sslSignLine = regexp.MustCompile(`(?m)^rsa\s+2048 bits\s+\S+s\s+\S+s\s+([\d.]+)`)

func opensslSignRate(ctx context.Context) (float64, error) {
	out, err := exec.CommandContext(ctx, "openssl", "speed", "-seconds", "3", "rsa2048").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("openssl speed: %v", err)
	}
	m := sslSignLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("could not read openssl's output")
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// benchMemory measures, in a child process, the RSS of the memory store
// holding 100,000 queued jobs (and of the same process without them).
func benchMemory(ctx context.Context, r *report) error {
	n := 100_000
	if r.quick {
		n = 10_000
	}
	base, err := holdRSS(ctx, 0)
	if err != nil {
		return err
	}
	full, err := holdRSS(ctx, n)
	if err != nil {
		return err
	}
	perGC := float64(full[0]-base[0]) * 1024 / float64(n)
	perFreed := float64(full[1]-base[1]) * 1024 / float64(n)
	r.add(&table{
		title:   "Memory: queued jobs in the memory store",
		command: "go run ./test/bench/heraldbench -only memory",
		intro: fmt.Sprintf("RSS of a process holding the memory store with %d queued jobs (each with a %d-byte activity, as a fan-out of one post stores it once per inbox), against the same process empty: "+
			"after two GCs (the pages the fill's garbage left free still held, as a serving process holds up to twice its live heap with GOGC=100), and after `debug.FreeOSMemory` too (what the store itself holds). "+
			"Bound: issue 15's 300 B per job.", n, len(payload)),
		header: []string{"jobs queued", "RSS after GC", "per job", "RSS after FreeOSMemory", "per job", "ratio to 300 B"},
		rows: [][]string{
			{"0", mib(base[0]), "–", mib(base[1]), "–", "–"},
			{fmt.Sprint(n), mib(full[0]), fmt.Sprintf("%.0f B", perGC), mib(full[1]), fmt.Sprintf("%.0f B", perFreed), ratio(perFreed, 300)},
		},
	})
	return nil
}

// holdRSS runs holdMain for n jobs and returns its two VmRSS readings in
// KiB: after the GCs, then after FreeOSMemory.
func holdRSS(ctx context.Context, n int) ([2]int, error) {
	self, err := os.Executable()
	if err != nil {
		return [2]int{}, err
	}
	out, err := exec.CommandContext(ctx, self, "hold", strconv.Itoa(n)).Output()
	if err != nil {
		return [2]int{}, fmt.Errorf("hold %d: %v", n, err)
	}
	var rss [2]int
	if _, err := fmt.Sscan(string(out), &rss[0], &rss[1]); err != nil {
		return [2]int{}, fmt.Errorf("hold %d: %q: %v", n, out, err)
	}
	return rss, nil
}

// holdMain is the child of benchMemory: fill, collect, print VmRSS in KiB;
// then hand back the free pages and print it again. FreeOSMemory returns
// the pages the fill's garbage (the jobs the bench builds, each batch's
// working copies) left free, which the runtime would otherwise keep, up to
// about twice the live heap (GOGC=100): the first reading is what a
// serving process shows, the second what the store holds.
func holdMain(args []string) int {
	n, _ := strconv.Atoi(args[0])
	s := memory.NewJobStore()
	if err := fill(context.Background(), s, "hold", n, 1000, time.Now()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runtime.GC()
	runtime.GC()
	gc := rssKiB(0)
	debug.FreeOSMemory()
	fmt.Println(gc, rssKiB(0))
	runtime.KeepAlive(s)
	return 0
}

// benchEnqueue times one 10,000-job Enqueue per store (median of three).
func benchEnqueue(ctx context.Context, r *report, kinds []storeKind) error {
	t := &table{
		title:   "Enqueue: a 10,000-recipient fan-out batch",
		command: "go run ./test/bench/heraldbench -only enqueue",
		intro:   "One `JobStore.Enqueue` of 10,000 deliveries (the store batches internally: PostgreSQL 1,000 rows per statement, pipelined in one transaction; SQLite one write transaction, a prepared INSERT per row, one fsync at commit). Median of three runs on a fresh store. Bound: the per-job cost of the memory store, which does no I/O.",
		header:  []string{"store", "10,000 jobs in", "jobs per second", "ratio to memory"},
	}
	var memRate float64
	for _, k := range kinds {
		if k.skip != "" {
			t.rows = append(t.rows, []string{k.name, "not measured: " + k.skip, "–", "–"})
			continue
		}
		s, cleanup, err := k.open(ctx)
		if err != nil {
			t.rows = append(t.rows, []string{k.name, "not measured: " + err.Error(), "–", "–"})
			continue
		}
		var times []time.Duration
		for run := 0; run < 3; run++ {
			jobs := makeJobs(fmt.Sprintf("enq%d", run), 10_000, 1000, time.Now())
			start := time.Now()
			n, err := s.Enqueue(ctx, jobs)
			took := time.Since(start)
			if err != nil || n != len(jobs) {
				cleanup()
				return fmt.Errorf("%s enqueue: %d %v", k.name, n, err)
			}
			times = append(times, took)
		}
		cleanup()
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		rate := 10_000 / times[1].Seconds()
		if k.name == "memory" {
			memRate = rate
		}
		t.rows = append(t.rows, []string{k.name, ms(times[1]), fmt.Sprintf("%.0f", rate), ratio(rate, memRate)})
	}
	r.add(t)
	return nil
}

// benchLease measures leasing: throughput with 1, 8 and 32 concurrent
// workers on a 100,000-job queue, and one worker's lease latency as the
// queue grows from 1,000 to 1,000,000 jobs.
func benchLease(ctx context.Context, r *report, kinds []storeKind) error {
	sizes := []int{1_000, 10_000, 100_000, 1_000_000}
	workers := []int{1, 8, 32}
	queue := 100_000
	if r.quick {
		sizes, queue = []int{1_000, 10_000}, 10_000
	}
	thr := &table{
		title:   "Lease throughput",
		command: "go run ./test/bench/heraldbench -only lease",
		intro: fmt.Sprintf("Jobs leased and completed per second with a no-op delivery, one job at a time (a `LeaseBatch` of one, then a `Settle` of one: the store's single-job cost; the engine's batched path is measured under \"Engine throughput against River\"), %d jobs queued on 1,000 hosts, two hosts skipped per lease. "+
			"Bound: a lease and its completion are two committed writes, so a store cannot beat half its rate of committed one-row UPDATEs at the same concurrency (measured on the same server, each worker on its own row; on SQLite through the store's one writer connection, each an fsync'd WAL commit); the memory store's bound is itself with one worker.", queue),
		header: []string{"store", "workers", "jobs per second", "bound (jobs/s)", "ratio to bound"},
	}
	lat := &table{
		title:   "Lease cost against queue size",
		command: "go run ./test/bench/heraldbench -only lease",
		intro:   "Median and 99th percentile latency of one lease (a `LeaseBatch` of one, then its `Settle`, one worker; the lease alone is timed) as the queue grows. [rules §9](rules.md#9-scale): a queue of millions must cost the same per lease as a queue of thousands. Bound: the latency at 1,000 queued jobs; the ratio column is the largest queue's median against it (linear growth would be 1000×).",
		header:  []string{"store", "queued", "p50", "p99", "ratio to 1,000 queued"},
	}
	var memOne float64
	var plot []series
	for _, k := range kinds {
		if k.skip != "" {
			thr.rows = append(thr.rows, []string{k.name, "–", "not measured: " + k.skip, "–", "–"})
			lat.rows = append(lat.rows, []string{k.name, "–", "not measured: " + k.skip, "–", "–"})
			continue
		}
		for _, w := range workers {
			rate, err := leaseThroughput(ctx, k, queue, w)
			if err != nil {
				return fmt.Errorf("%s throughput: %w", k.name, err)
			}
			if k.name == "memory" && w == 1 {
				memOne = rate
			}
			bound := memOne
			if k.roundTrips != nil {
				writes, err := k.roundTrips(ctx, w)
				if err != nil {
					return fmt.Errorf("%s floor: %w", k.name, err)
				}
				bound = writes / 2
			}
			thr.rows = append(thr.rows, []string{k.name, strconv.Itoa(w), fmt.Sprintf("%.0f", rate), fmt.Sprintf("%.0f", bound), ratio(rate, bound)})
		}
		s := series{name: k.name}
		var first time.Duration
		for _, size := range sizes {
			p50, p99, err := leaseLatency(ctx, k, size)
			if err != nil {
				return fmt.Errorf("%s latency at %d: %w", k.name, size, err)
			}
			if size == sizes[0] {
				first = p50
			}
			lat.rows = append(lat.rows, []string{k.name, strconv.Itoa(size), ms(p50), ms(p99), ratio(float64(p50), float64(first))})
			s.xs = append(s.xs, float64(size))
			s.ys = append(s.ys, float64(p50)/float64(time.Microsecond))
		}
		plot = append(plot, s)
	}
	lat.plot = r.svg("lease-latency.svg", lineChart("Lease latency (p50) against queue size", "jobs queued (log scale)", "µs per lease", plot))
	r.add(thr)
	r.add(lat)
	return nil
}

func leaseThroughput(ctx context.Context, k storeKind, queue, workers int) (float64, error) {
	s, cleanup, err := k.open(ctx)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	past := time.Now().Add(-time.Hour)
	if err := fill(ctx, s, "thr", queue, 1000, past); err != nil {
		return 0, err
	}
	ops := 20_000
	if k.name == "memory" {
		ops = 60_000
	}
	ops = min(ops, queue/2)
	var done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; done.Add(1) <= int64(ops); i++ {
				if err := leaseComplete(ctx, s, fmt.Sprintf("w%d-%d", w, i)); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(ops) / time.Since(start).Seconds(), nil
}

var skipTwo = []string{"h0001.example", "h0002.example"}

func leaseComplete(ctx context.Context, s jobStore, tok string) error {
	now := time.Now()
	j, err := leaseOne(ctx, s, ports.LeaseRequest{Owner: "bench", Token: tok, Now: now, Until: now.Add(2 * time.Minute), SkipHosts: skipTwo})
	if err != nil {
		return err
	}
	return complete(ctx, s, j, now)
}

// leaseOne is a lease batch of one, the single lease the engine made
// before batching: domain.ErrNoJob when nothing is runnable.
func leaseOne(ctx context.Context, s jobStore, req ports.LeaseRequest) (domain.Job, error) {
	req.Limit = 1
	jobs, err := s.LeaseBatch(ctx, req)
	if err != nil {
		return domain.Job{}, err
	}
	if len(jobs) == 0 {
		return domain.Job{}, domain.ErrNoJob
	}
	return jobs[0], nil
}

// complete settles one job succeeded.
func complete(ctx context.Context, s jobStore, j domain.Job, at time.Time) error {
	lost, err := s.Settle(ctx, []ports.Settlement{{ID: j.ID, Token: j.LeaseToken, State: domain.JobSucceeded, Attempts: j.Attempts + 1, FinishedAt: at}})
	if err != nil {
		return err
	}
	return lost[0]
}

func leaseLatency(ctx context.Context, k storeKind, size int) (p50, p99 time.Duration, err error) {
	s, cleanup, err := k.open(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer cleanup()
	if err := fill(ctx, s, "lat", size, 1000, time.Now().Add(-2*time.Hour)); err != nil {
		return 0, 0, err
	}
	ops := min(2000, size/2)
	lats := make([]time.Duration, 0, ops)
	for i := 0; i < ops; i++ {
		now := time.Now()
		tok := fmt.Sprintf("l%d", i)
		start := time.Now()
		j, err := leaseOne(ctx, s, ports.LeaseRequest{Owner: "bench", Token: tok, Now: now, Until: now.Add(2 * time.Minute), SkipHosts: skipTwo})
		lats = append(lats, time.Since(start))
		if err != nil {
			return 0, 0, err
		}
		if err := complete(ctx, s, j, now); err != nil {
			return 0, 0, err
		}
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	return lats[len(lats)/2], lats[len(lats)*99/100], nil
}
