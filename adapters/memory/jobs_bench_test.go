package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// fanOut builds one activity's deliveries to n inboxes on hosts hosts, as
// the fan-out does: one payload slice shared by every job.
func fanOut(b *testing.B, prefix string, n, hosts int, now time.Time) []domain.Job {
	b.Helper()
	payload := []byte(`{"type":"Create","id":"https://herald.example/activities/` + prefix + `"}`)
	jobs := make([]domain.Job, n)
	for i := range jobs {
		inbox := fmt.Sprintf("https://h%04d.example/users/u%d/inbox", i%hosts, i)
		j, err := domain.NewJob(contract.JobID(fmt.Sprintf("%s-%08d", prefix, i)), "https://herald.example/activities/"+prefix,
			inbox, "sender", "https://herald.example/users/alice#main-key", payload, now)
		if err != nil {
			b.Fatal(err)
		}
		j.RunAt = now.Add(time.Duration(i) * time.Millisecond)
		jobs[i] = j
	}
	return jobs
}

// BenchmarkEnqueue enqueues one 10,000-job fan-out into a fresh store.
func BenchmarkEnqueue(b *testing.B) {
	const n = 10_000
	jobs := fanOut(b, "a", n, 1000, time.Now())
	for b.Loop() {
		if _, err := memory.NewJobStore().Enqueue(context.Background(), jobs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkLeaseSettle leases and settles one job at a time from a
// 100,000-job queue, the store's single-job cost.
func BenchmarkLeaseSettle(b *testing.B) {
	ctx := context.Background()
	now := time.Now()
	s := memory.NewJobStore()
	for k := range 10 {
		if _, err := s.Enqueue(ctx, fanOut(b, fmt.Sprintf("a%d", k), 10_000, 1000, now)); err != nil {
			b.Fatal(err)
		}
	}
	later := now.Add(time.Hour)
	b.ResetTimer()
	for i := range b.N {
		token := fmt.Sprint(i)
		jobs, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: token, Now: later, Until: later.Add(time.Minute), Limit: 1})
		if err != nil || len(jobs) != 1 {
			b.Fatal(len(jobs), err)
		}
		j := jobs[0]
		// Requeued at once, so the queue keeps its size however long b.N.
		if _, err := s.Settle(ctx, []ports.Settlement{{ID: j.ID, Token: token, State: domain.JobQueued, Attempts: 1, RunAt: j.RunAt}}); err != nil {
			b.Fatal(err)
		}
	}
}
