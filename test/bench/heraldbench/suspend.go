package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/heraldfed/herald/domain"
)

// benchSuspend measures JobAdmin.EndDomainJobs, what a suspension of a
// domain costs the queue (SPEC §11): 100,000 queued jobs of the suspended
// host ended dead in one store operation, beside 100,000 queued jobs of
// 1,000 other hosts that stay. Baseline: the same jobs ended one at a
// time, one committed single-row write each, at the store's measured rate
// of such writes (the lease table's floor, one worker).
func benchSuspend(ctx context.Context, r *report, kinds []storeKind, mongoURI string) error {
	const host = "suspended.example"
	n, others, runs := 100_000, 100_000, 3
	if r.quick {
		n, others, runs = 10_000, 10_000, 1
	}
	t := &table{
		title:   fmt.Sprintf("Suspension: the queued jobs of one host ended in one operation (%d, beside %d of other hosts)", n, others),
		command: "go run ./test/bench/heraldbench -only suspend",
		intro: fmt.Sprintf("One `JobAdmin.EndDomainJobs(%q)` on a fresh store holding %d queued jobs of that host and %d of 1,000 other hosts: every job of the host ends dead (\"suspended\") in one store operation (one `UPDATE` on SQLite and PostgreSQL, one `UpdateMany` on Mongo, one pass under the mutex on memory), the others stay queued (checked by `Counts` after each run). Median of %d runs, each on a fresh store. "+
			"Baseline: ending the same jobs one by one, one committed single-row write each, at the store's measured rate of such writes (one worker; none for memory, whose writes are not committed anywhere).", host, n, others, runs),
		header: []string{"store", fmt.Sprintf("%d jobs ended in", n), "µs per job", "one by one (baseline)", "ratio to baseline"},
	}
	for _, k := range kinds {
		if k.skip != "" {
			t.rows = append(t.rows, []string{k.name, "not measured: " + k.skip, "–", "–", "–"})
			continue
		}
		var times []time.Duration
		for run := 0; run < runs; run++ {
			took, err := suspendOnce(ctx, k, host, n, others)
			if err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
			times = append(times, took)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		med := times[len(times)/2]
		baseline, ratioCell := "–", "–"
		if k.roundTrips != nil {
			writes, err := k.roundTrips(ctx, 1)
			if err != nil {
				return fmt.Errorf("%s floor: %w", k.name, err)
			}
			oneByOne := time.Duration(float64(n) / writes * float64(time.Second))
			baseline, ratioCell = ms(oneByOne), ratio(med.Seconds(), oneByOne.Seconds())
		}
		t.rows = append(t.rows, []string{k.name, ms(med), fmt.Sprintf("%.2f", float64(med.Microseconds())/float64(n)), baseline, ratioCell})
		if k.name == "mongo" {
			t.notes = append(t.notes, fmt.Sprintf("The mongo row ran against %s: its figures are that server's, whose cost of an `updateMany` per document the ratio compares with a single-document update's.", mongoServer(ctx, mongoURI)))
		}
	}
	r.add(t)
	return nil
}

// suspendOnce fills a fresh store of kind k and times one EndDomainJobs of
// host, checking what it ended and what it left.
func suspendOnce(ctx context.Context, k storeKind, host string, n, others int) (time.Duration, error) {
	s, cleanup, err := k.open(ctx)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	now := time.Now()
	for start := 0; start < n; start += 10_000 {
		jobs := make([]domain.Job, min(10_000, n-start))
		for i := range jobs {
			id := benchJobID(fmt.Sprintf("sus%03d", start/10_000), i)
			j, err := domain.NewJob(id, "https://herald.example/activities/sus", fmt.Sprintf("https://%s/users/u%d/inbox", host, start+i),
				"sender", "https://herald.example/users/alice#main-key", payload, now)
			if err != nil {
				return 0, err
			}
			jobs[i] = j
		}
		if _, err := s.Enqueue(ctx, jobs); err != nil {
			return 0, err
		}
	}
	if err := fill(ctx, s, "oth", others, 1000, now); err != nil {
		return 0, err
	}
	start := time.Now()
	ended, err := s.EndDomainJobs(ctx, host, "suspended", now)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	c, err := s.Counts(ctx)
	if err != nil {
		return 0, err
	}
	if ended != n || c[domain.JobDead] != n || c[domain.JobQueued] != others {
		return 0, fmt.Errorf("ended %d of %d; counts %v (want %d dead, %d queued)", ended, n, c, n, others)
	}
	return took, nil
}
