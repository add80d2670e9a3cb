package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// BenchmarkLease measures one lease plus its completion at several queue
// sizes: SPEC §9 wants a million-job queue to cost what a thousand-job one
// does. Run with: go test -run '^$' -bench Lease ./adapters/postgres/
func BenchmarkLease(b *testing.B) {
	for _, size := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("queue=%d", size), func(b *testing.B) {
			p := migrated(b)
			mustExec(b, p, `
INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at)
SELECT lpad(to_hex(g), 32, '0')::uuid, encode(substr(sha256(g::text::bytea), 1, 16), 'hex')::uuid, g / 500, 'https://h' || (g % 1000) || '.example/inbox',
	'h' || (g % 1000) || '.example', 'queued',
	timestamptz '2026-01-01' + ((g / 500) || ' seconds')::interval, now()
FROM generate_series(1, $1) g`, size)
			mustExec(b, p, `ANALYZE jobs`)
			store := postgres.NewJobStore(p)
			now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
			skip := []string{"h1.example", "h2.example"}
			for i := 0; b.Loop(); i++ {
				tok := fmt.Sprintf("t%d", i)
				j, err := leaseOne(b.Context(), store, ports.LeaseRequest{Owner: "w", Token: tok, Now: now, Until: now.Add(time.Minute), SkipHosts: skip})
				if err != nil {
					b.Fatal(err)
				}
				if err := settleOne(b.Context(), store, ports.Settlement{ID: j.ID, Token: tok, State: domain.JobSucceeded, Attempts: 1, FinishedAt: now}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnqueue10k measures a fan-out's worth of jobs in one Enqueue.
func BenchmarkEnqueue10k(b *testing.B) {
	p := migrated(b)
	store := postgres.NewJobStore(p)
	now := time.Now()
	for i := 0; b.Loop(); i++ {
		jobs := make([]domain.Job, 10_000)
		for k := range jobs {
			id := fmt.Sprintf("b%03d-%05d", i, k)
			j, err := domain.NewJob(contract.JobID(id), "https://local.example/act/"+id, fmt.Sprintf("https://h%d.example/inbox", k%500),
				"actor", "https://local.example/users/a#main-key", []byte(`{"type":"Create"}`), now)
			if err != nil {
				b.Fatal(err)
			}
			jobs[k] = j
		}
		if n, err := store.Enqueue(b.Context(), jobs); err != nil || n != len(jobs) {
			b.Fatalf("enqueue: %d %v", n, err)
		}
	}
}

// BenchmarkQueueView measures the operator's queue view (Counts, then
// CountsByHost of queued, leased and dead, as application.Operator.Queue
// reads them) at the soak's load (issue 36): 30,000 queued and 120,000
// finished jobs kept on 200 hosts, first right after a reaper pass, then
// with 30 s of the soak's writes since (1,400 leases of 4 jobs and their
// settlements, each its own statement). Run with:
// go test -run '^$' -bench QueueView -benchtime 50x ./adapters/postgres/
func BenchmarkQueueView(b *testing.B) {
	p := migrated(b)
	ctx := b.Context()
	mustExec(b, p, `
INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at, finished_at, last_error)
SELECT gen_random_uuid(), gen_random_uuid(), g / 1000, '/inbox', 'h' || (g % 200) || '.example',
	CASE WHEN g <= 30000 THEN 'queued' WHEN g % 100 = 0 THEN 'dead' ELSE 'succeeded' END,
	timestamptz '2026-01-01' + (g || ' ms')::interval, now(),
	CASE WHEN g > 30000 THEN now() END, CASE WHEN g > 30000 AND g % 100 = 0 THEN 'HTTP 410' END
FROM generate_series(1, 150000) g`)
	mustExec(b, p, `INSERT INTO host_slots (host, ready_at) SELECT 'h' || h || '.example', timestamptz '2026-01-01' FROM generate_series(0, 199) h
ON CONFLICT (host) DO UPDATE SET ready_at = EXCLUDED.ready_at`)
	mustExec(b, p, `VACUUM ANALYZE jobs`)
	store := postgres.NewJobStore(p)
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	view := func(b *testing.B) {
		c, err := store.Counts(ctx)
		if err != nil || c[domain.JobQueued] == 0 {
			b.Fatalf("counts %v, %v", c, err)
		}
		for _, st := range []domain.JobState{domain.JobQueued, domain.JobLeased, domain.JobDead} {
			if _, err := store.CountsByHost(ctx, st, 20); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := store.Reap(ctx, now, domain.MaxAttempts); err != nil {
		b.Fatal(err)
	}
	b.Run("after a reaper pass", func(b *testing.B) {
		for b.Loop() {
			view(b)
		}
	})
	for i := range 1400 {
		tok := fmt.Sprintf("t%d", i)
		jobs, err := store.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: tok, Now: now, Until: now.Add(time.Minute), Limit: 4, PerHost: 2})
		if err != nil || len(jobs) == 0 {
			b.Fatalf("lease %d: %d jobs, %v", i, len(jobs), err)
		}
		batch := make([]ports.Settlement, len(jobs))
		for k, j := range jobs {
			batch[k] = ports.Settlement{ID: j.ID, Token: tok, State: domain.JobSucceeded, Attempts: 1, FinishedAt: now}
		}
		if _, err := store.Settle(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("30 s of writes since", func(b *testing.B) {
		for b.Loop() {
			view(b)
		}
	})
}
