package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The backlog of issue 36: most queued jobs belong to a few hosts that are
// at their per-host cap (slow or dead servers holding their two slots), the
// rest to many hosts that answer. A lease must cost the same whether that
// backlog is 1,000 jobs or 100,000.
const (
	cappedHosts   = 10   // hosts at their cap: the 5 slow, 3 dead and 2 refusing servers
	cappedShare   = 0.9  // of the queued jobs, on the capped hosts
	cappedPerHost = 2    // SPEC §2's per-host cap
	cappedBatch   = 8    // jobs a lease asks for: the engine's 8 workers
	cappedOps     = 500  // timed leases per row
	cappedBound   = 1.5  // issue 36: the largest backlog's median within 1.5× of the smallest's
	freeHosts     = 1000 // hosts that answer
)

// benchLeaseCapped measures one lease's latency with 1,000 and 100,000
// jobs queued, 90% of them on hosts already at their cap, per store.
func benchLeaseCapped(ctx context.Context, r *report, kinds []storeKind) error {
	sizes := []int{1_000, 100_000}
	if r.quick {
		sizes = []int{1_000, 10_000}
	}
	t := &table{
		title:   "Lease cost against the backlog's shape",
		command: "go run ./test/bench/heraldbench -only lease-capped",
		intro: fmt.Sprintf("Median and 99th percentile latency of one `LeaseBatch` (up to %d jobs, per-host cap %d, one worker; the lease alone is timed, its jobs are then released at their own run_at so the queue keeps its shape) "+
			"with %.0f%% of the queued jobs on %d hosts already at their cap (another holder leases %d jobs of each) and due before all the others, the rest on %d hosts that are not. "+
			"Bound (issue 36): the largest backlog's median at most %.1f× the median at %d queued; a lease that walks past the capped hosts' jobs grows with their number.",
			cappedBatch, cappedPerHost, cappedShare*100, cappedHosts, cappedPerHost, freeHosts, cappedBound, sizes[0]),
		header: []string{"store", "queued", "on capped hosts", "p50", "p99", "ratio to " + strconv.Itoa(sizes[0]) + " queued", "bound"},
		notes: []string{"Every store leases from its ready hosts (one entry per host at or before its oldest queued job: the memory store's heap of hosts, " +
			"`host_slots.ready_at` on SQLite and PostgreSQL, `ready_hosts` on Mongo), so a lease reads the jobs of the hosts it visits and passes over " +
			"one entry per capped host, never their backlog. Where Mongo's lease cost grows on the MongoDB-compatible server, step by step and from its plan: " +
			"[storage.md](storage.md#what-the-lease-costs-on-ferretdb-v2)."},
	}
	for _, k := range kinds {
		if k.skip != "" {
			t.rows = append(t.rows, []string{k.name, "–", "–", "not measured: " + k.skip, "–", "–", "–"})
			continue
		}
		var first time.Duration
		for _, size := range sizes {
			p50, p99, err := leaseCappedLatency(ctx, k, size)
			if err != nil {
				return fmt.Errorf("%s at %d: %w", k.name, size, err)
			}
			if size == sizes[0] {
				first = p50
			}
			fmt.Fprintf(os.Stderr, "   %s %d queued: p50 %s p99 %s\n", k.name, size, ms(p50), ms(p99))
			t.rows = append(t.rows, []string{k.name, strconv.Itoa(size), strconv.Itoa(int(float64(size) * cappedShare)), ms(p50), ms(p99),
				ratio(float64(p50), float64(first)), fmt.Sprintf("%.1f×", cappedBound)})
		}
	}
	r.add(t)
	return nil
}

// leaseCappedLatency fills a fresh store with size queued jobs shaped as
// benchLeaseCapped describes and times cappedOps leases.
func leaseCappedLatency(ctx context.Context, k storeKind, size int) (p50, p99 time.Duration, err error) {
	s, cleanup, err := k.open(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer cleanup()
	now := time.Now()
	t0 := now.Add(-3 * time.Hour)
	// The holder's leases first: cappedPerHost jobs of each capped host,
	// the oldest in the queue, leased for longer than the run.
	var held []domain.Job
	for h := range cappedHosts {
		for i := range cappedPerHost {
			held = append(held, shapeJob("held", h*cappedPerHost+i, cappedHost(h), t0.Add(-time.Minute)))
		}
	}
	if _, err := s.Enqueue(ctx, held); err != nil {
		return 0, 0, err
	}
	got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "holder", Token: "holder", Now: now, Until: now.Add(24 * time.Hour),
		Limit: len(held), PerHost: cappedPerHost})
	if err != nil {
		return 0, 0, err
	}
	if len(got) != len(held) {
		return 0, 0, fmt.Errorf("the holder leased %d of %d", len(got), len(held))
	}
	capped := int(float64(size) * cappedShare)
	var batch []domain.Job
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := s.Enqueue(ctx, batch)
		if err == nil && n != len(batch) {
			err = fmt.Errorf("enqueued %d of %d", n, len(batch))
		}
		batch = batch[:0]
		return err
	}
	for i := range size {
		var j domain.Job
		if i < capped {
			j = shapeJob("cap", i, cappedHost(i%cappedHosts), t0.Add(time.Duration(i)*time.Millisecond))
		} else {
			f := i - capped
			j = shapeJob("free", f, fmt.Sprintf("h%04d.example", f%freeHosts), t0.Add(time.Hour+time.Duration(f)*time.Millisecond))
		}
		batch = append(batch, j)
		if len(batch) == 10_000 {
			if err := flush(); err != nil {
				return 0, 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, 0, err
	}
	// The setup's garbage collected before the timing: a collection of the
	// 100,000 enqueued jobs' leftovers, running beside the first leases,
	// is the setup's cost, not the lease's.
	runtime.GC()
	lats := make([]time.Duration, 0, cappedOps)
	for i := range cappedOps {
		now := time.Now()
		start := time.Now()
		jobs, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "bench", Token: fmt.Sprintf("c%d", i), Now: now, Until: now.Add(2 * time.Minute),
			Limit: cappedBatch, PerHost: cappedPerHost})
		lats = append(lats, time.Since(start))
		if err != nil {
			return 0, 0, err
		}
		if len(jobs) != cappedBatch {
			return 0, 0, fmt.Errorf("lease %d: %d jobs, want %d", i, len(jobs), cappedBatch)
		}
		back := make([]ports.Settlement, len(jobs))
		for n, j := range jobs {
			if strings.HasPrefix(j.Host, "cap") {
				return 0, 0, fmt.Errorf("lease %d took %s of %s, a host at its cap", i, j.ID, j.Host)
			}
			back[n] = ports.Settlement{ID: j.ID, Token: j.LeaseToken, State: domain.JobQueued, Attempts: j.Attempts, RunAt: j.RunAt}
		}
		lost, err := s.Settle(ctx, back)
		if err != nil {
			return 0, 0, err
		}
		for _, l := range lost {
			if l != nil {
				return 0, 0, l
			}
		}
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	return lats[len(lats)/2], lats[len(lats)*99/100], nil
}

func cappedHost(h int) string { return fmt.Sprintf("cap%02d.example", h) }

// shapeJob is job i of a kind of benchLeaseCapped's backlog, to host.
func shapeJob(kind string, i int, host string, runAt time.Time) domain.Job {
	id := benchJobID(kind, i)
	inbox := fmt.Sprintf("https://%s/users/u%d/inbox", host, i)
	j, err := domain.NewJob(id, "https://herald.example/activities/"+kind, inbox, "sender", "https://herald.example/users/alice#main-key", payload, runAt)
	if err != nil {
		panic(err)
	}
	j.RunAt = runAt
	return j
}
