package main

import (
	"context"
	"fmt"
	"os"
)

// benchEngineMongo is the engine run of "Engine throughput on SQLite" on
// the Mongo stores: no-op jobs over engineHosts hosts drained by the real
// Engine, 8 and 32 workers, per-host cap 2, interleaved with the memory
// stores as the bound. Commands are every command the stores' client sent
// during the drain (leases, settlements, bodies, the breaker), the round
// trips that cost on a network; commits are the job store's and breaker's
// write calls.
func benchEngineMongo(ctx context.Context, r *report, mongoURI string) error {
	if mongoURI == "" {
		r.notes = append(r.notes, "engine-mongo: not measured (no MONGODB_URI)")
		return nil
	}
	jobs, rounds := 5000, 2
	if r.quick {
		jobs, rounds = 1000, 1
	}
	runs := map[string][]engineRun{}
	for round := 0; round < rounds; round++ {
		for _, w := range []int{8, 32} {
			for _, store := range []string{"mongo", "memory"} {
				h, err := runHeraldOn(ctx, store, mongoURI, w, jobs)
				if err != nil {
					return fmt.Errorf("herald on %s, %d workers: %w", store, w, err)
				}
				fmt.Fprintf(os.Stderr, "   %-6s %2d workers: %.0f jobs/s, %.3f commands/job, %.3f commits/job\n", store, w, h.rate(),
					float64(h.Statements)/float64(h.Jobs), float64(h.Commits)/float64(h.Jobs))
				runs[key(store, w)] = append(runs[key(store, w)], h)
			}
		}
	}
	t := &table{
		title:   "Engine throughput on MongoDB",
		command: "go run ./test/bench/heraldbench -only engine-mongo",
		intro: fmt.Sprintf("%d no-op jobs over %d hosts drained by the real engine (`application/engine`) on the Mongo stores (the server at MONGODB_URI; per-host cap 2), "+
			"%d rounds interleaved with the same run on the memory stores, median. Commands: every command the stores' client sent during the drain. "+
			"Bound: the same engine on the memory stores, at the same worker count.", jobs, engineHosts, rounds),
		header: []string{"store", "workers", "jobs per second", "commands per job", "write calls per job", "bound (jobs/s)", "ratio to bound", "32 / 8 workers"},
	}
	for _, w := range []int{8, 32} {
		m, bound := median(runs[key("mongo", w)]), median(runs[key("memory", w)])
		vs8 := "–"
		if w == 32 {
			vs8 = ratio(m.rate(), median(runs[key("mongo", 8)]).rate())
		}
		t.rows = append(t.rows, []string{"mongo", fmt.Sprint(w), fmt.Sprintf("%.0f", m.rate()),
			fmt.Sprintf("%.3f", float64(m.Statements)/float64(m.Jobs)), fmt.Sprintf("%.3f", float64(m.Commits)/float64(m.Jobs)),
			fmt.Sprintf("%.0f", bound.rate()), ratio(m.rate(), bound.rate()), vs8})
	}
	r.add(t)
	return nil
}
