package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// leaseOne leases a batch of one: domain.ErrNoJob when nothing is due.
func leaseOne(ctx context.Context, s *postgres.JobStore, req ports.LeaseRequest) (domain.Job, error) {
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

// settleOne applies one settlement: the store's error, else the job's.
func settleOne(ctx context.Context, s *postgres.JobStore, st ports.Settlement) error {
	lost, err := s.Settle(ctx, []ports.Settlement{st})
	if err != nil {
		return err
	}
	return lost[0]
}

// The lease reads the ready hosts' index, then each host's own queued jobs:
// no scan of the queue, no sort of it, whatever the backlog of hosts at
// their cap (see readyFrom's comment in jobs.go).
func TestLeasePlanReadsReadyHosts(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	// 200,000 jobs on 500 hosts: 10% queued in groups of 500 sharing one
	// run_at (as a fan-out makes them), the rest finished; the hosts'
	// ready_at as migration 026 fills it.
	mustExec(t, p, `
INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at, finished_at)
SELECT `+sqlJobID(`'j' || lpad(g::text, 8, '0')`)+`, encode(substr(sha256(g::text::bytea), 1, 16), 'hex')::uuid, g / 500, 'https://h' || (g % 500) || '.example/inbox',
	'h' || (g % 500) || '.example',
	CASE WHEN g % 10 = 0 THEN 'queued' ELSE 'succeeded' END,
	timestamptz '2026-01-01' + ((g / 5000) || ' seconds')::interval, now(),
	CASE WHEN g % 10 <> 0 THEN now() END
FROM generate_series(1, 200000) g`)
	mustExec(t, p, `
INSERT INTO host_slots AS h (host, ready_at)
SELECT host, min(run_at) FROM jobs WHERE state = 'queued' GROUP BY host
ON CONFLICT (host) DO UPDATE SET ready_at = EXCLUDED.ready_at`)
	mustExec(t, p, `ANALYZE jobs`)
	mustExec(t, p, `ANALYZE host_slots`)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	// The plans the lease function runs: the generic ones (its SET
	// clause), planned without the parameters' values.
	explain := func(name, types, sql, values string) planNode {
		t.Helper()
		var raw []byte
		err := pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `PREPARE `+name+` (`+types+`) AS `+sql); err != nil {
				return err
			}
			// EXECUTE takes no bound parameters: the values go in as literals.
			return tx.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE `+name+` (`+values+`)`).Scan(&raw)
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []struct{ Plan planNode }
		if err := json.Unmarshal(raw, &plan); err != nil {
			t.Fatal(err)
		}
		plan[0].Plan.walk(func(n planNode) {
			if n.NodeType == "Seq Scan" || n.NodeType == "Bitmap Heap Scan" {
				t.Errorf("%s has a %s on %s: %s", name, n.NodeType, n.RelationName, raw)
			}
		})
		return plan[0].Plan
	}
	ready := explain("ready_plan", "timestamptz, text[], integer, integer", postgres.ReadyPlainSQL,
		fmt.Sprintf(`'%s', '{h0.example,h10.example}', 2, 12`, now.Format(time.RFC3339Nano)))
	readsReady := false
	ready.walk(func(n planNode) {
		readsReady = readsReady || n.IndexName == "host_slots_ready_idx"
	})
	if !readsReady {
		t.Errorf("the ready hosts are not read from host_slots_ready_idx")
	}
	lease := explain("lease_plan", "text, text, timestamptz, timestamptz, integer, text[], integer[]", postgres.LeasePlainSQL,
		fmt.Sprintf(`'w', 'tok', '%s', '%s', 8, '{h1.example,h2.example}', '{2,2}'`, now.Add(time.Minute).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano)))
	// cand reads each host's due jobs from jobs_queued_host_idx, in
	// run_at order (no sort under it).
	var cand *planNode
	lease.walk(func(n planNode) {
		if n.SubplanName == "CTE cand" {
			cand = &n
		}
	})
	if cand == nil {
		t.Fatalf("no CTE cand in the lease plan")
	}
	byHost := false
	cand.walk(func(n planNode) {
		switch {
		case n.RelationName == "jobs" && n.IndexName == "jobs_queued_host_idx":
			byHost = true
		case n.RelationName == "jobs":
			t.Errorf("cand reads jobs by %s %s", n.NodeType, n.IndexName)
		case strings.Contains(n.NodeType, "Sort") && len(n.Plans) > 0 && n.Plans[0].RelationName == "jobs":
			t.Errorf("cand sorts a host's jobs (%s)", n.NodeType)
		}
	})
	if !byHost {
		t.Fatalf("cand does not read jobs_queued_host_idx")
	}
	// And it does lease an oldest due job (of the first 5,000, due at
	// one instant on every host) of a host not skipped.
	j, err := leaseOne(ctx, postgres.NewJobStore(p), ports.LeaseRequest{Owner: "w", Token: "tok", Now: now, Until: now.Add(time.Minute),
		SkipHosts: []string{"h0.example", "h10.example"}})
	if err != nil || j.Host == "h0.example" || j.Host == "h10.example" || !j.RunAt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("leased %s of %s due %v, %v; want one of the oldest, of a host not skipped", j.ID, j.Host, j.RunAt, err)
	}
}

// The lease runs as a function that keeps its plan (leaseFunc), and where
// the function is missing (a schema EnsureIndexes has not seen) as the
// plain statement, leasing the same.
func TestLeaseFunctionAndItsFallback(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	// v5 (migration 017: inbox_ref), and no older one left behind.
	if got := column(t, p, `SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = current_schema() AND p.proname LIKE 'herald\_lease\_v%'`); !slices.Equal(got, []string{"herald_lease_v8"}) {
		t.Fatalf("lease functions after EnsureIndexes: %v, want [herald_lease_v8]", got)
	}
	s := postgres.NewJobStore(p)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var jobs []domain.Job
	for i := range 6 {
		jobs = append(jobs, newJob(t, fmt.Sprintf("f%d", i), fmt.Sprintf("h%d.example", i%2), now.Add(time.Duration(i-10)*time.Second)))
	}
	if _, err := s.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	lease := func(tok string) []string {
		got, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: tok, Now: now, Until: now.Add(time.Minute), Limit: 3, PerHost: 1})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range got {
			if j.LeaseToken != tok || j.State != domain.JobLeased || string(j.Payload) != `{"id":"`+contract.JobName(j.ID)+`"}` {
				t.Fatalf("leased %+v", j)
			}
			ids = append(ids, contract.JobName(j.ID))
		}
		return ids
	}
	if got := lease("t1"); !slices.Equal(got, []string{"f0", "f1"}) {
		t.Fatalf("through the function: leased %v, want f0 f1 (one per host)", got)
	}
	mustExec(t, p, `DROP FUNCTION herald_lease_v8`)
	if got := lease("t2"); len(got) != 0 {
		t.Fatalf("without the function: leased %v at the cap, want none", got)
	}
	mustExec(t, p, `UPDATE jobs SET state = 'queued', lease_token = NULL, lease_owner = NULL, lease_until = NULL WHERE lease_token = 't1'`)
	mustExec(t, p, `UPDATE host_slots SET in_flight = 0`)
	if got := lease("t3"); !slices.Equal(got, []string{"f0", "f1"}) {
		t.Fatalf("without the function: leased %v, want f0 f1", got)
	}
	// A start puts it back.
	if err := postgres.EnsureIndexes(ctx, p); err != nil {
		t.Fatal(err)
	}
	if n := count(t, p, `SELECT count(*) FROM pg_proc WHERE proname = 'herald_lease_v8' AND pronamespace = current_schema()::regnamespace`); n != 1 {
		t.Fatalf("%d lease functions after a second EnsureIndexes", n)
	}
}

// The other queue statements read the partial index made for them
// (indexes.go), never the table: the reaper the leases by their end, a
// quarantine's DeferHost and ResumeHost the host's queued jobs, the purge
// the finished jobs; and the settlement finds its jobs by id, not by a scan
// of every lease (its "state = 'leased'" must not make jobs_lease_until_idx
// look useful).
func TestQueueStatementsUseTheirIndexes(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	// 100,000 jobs: 2% queued, 1% leased, the rest finished.
	mustExec(t, p, `
INSERT INTO jobs (id, dedupe_key, activity, inbox_ref, host, state, run_at, created_at,
	lease_token, lease_until, finished_at)
SELECT `+sqlJobID(`'j' || lpad(g::text, 8, '0')`)+`, encode(substr(sha256(g::text::bytea), 1, 16), 'hex')::uuid, g / 500, 'https://h' || (g % 500) || '.example/inbox',
	'h' || (g % 500) || '.example',
	CASE WHEN g % 100 < 2 THEN 'queued' WHEN g % 100 = 2 THEN 'leased' ELSE 'succeeded' END,
	timestamptz '2026-01-01' + (g || ' seconds')::interval, now(),
	CASE WHEN g % 100 = 2 THEN 'tok' || g END,
	CASE WHEN g % 100 = 2 THEN timestamptz '2026-01-01' + (g || ' seconds')::interval END,
	CASE WHEN g % 100 > 2 THEN timestamptz '2026-01-01' + (g || ' seconds')::interval END
FROM generate_series(1, 100000) g`)
	mustExec(t, p, `ANALYZE jobs`)
	at := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	endSQL, end1, end2 := postgres.EndDomainJobsSQL("h7.example")
	cases := []struct {
		name, sql string
		args      []any
		index     string // the index the plan must read jobs through
	}{
		{"reap", postgres.ReapSQL, []any{at, 16, "expired"}, "jobs_lease_until_idx"},
		{"defer host", postgres.DeferHostSQL, []any{"h7.example", at}, "jobs_queued_host_idx"},
		{"resume host", postgres.ResumeHostSQL, []any{"h7.example", at.Add(time.Hour), at}, "jobs_queued_host_idx"},
		{"purge", postgres.PurgeSQL, []any{at, 5000}, "jobs_finished_idx"},
		// A suspension reads the queued jobs (the host's test is no index
		// condition), never the finished ones.
		{"end domain jobs", endSQL, []any{end1, end2, "suspended", at}, "jobs_queue_idx"},
		{"settle", postgres.SettleSQL, []any{[]int32{0}, []string{contract.JobID("j00000002")}, []string{"tok2"}, []string{"succeeded"}, []int32{1},
			[]*time.Time{nil}, []string{""}, []time.Time{at}}, "jobs_pkey"},
	}
	for _, c := range cases {
		var raw []byte
		if err := p.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+c.sql, c.args...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []struct{ Plan planNode }
		if err := json.Unmarshal(raw, &plan); err != nil {
			t.Fatal(err)
		}
		var read []string
		plan[0].Plan.walk(func(n planNode) {
			if n.RelationName == "jobs" && (strings.Contains(n.NodeType, "Scan") || n.NodeType == "Bitmap Heap Scan") {
				read = append(read, n.NodeType+" "+n.IndexName)
			}
			if strings.HasPrefix(n.IndexName, "jobs_") && n.IndexName != c.index {
				t.Errorf("%s reads %s, not %s: %s", c.name, n.IndexName, c.index, raw)
			}
			if n.RelationName == "jobs" && n.NodeType == "Seq Scan" {
				t.Errorf("%s scans the table: %s", c.name, raw)
			}
		})
		if len(read) == 0 {
			t.Errorf("%s does not read jobs: %s", c.name, raw)
		}
	}
}

// EnsureIndexes drops the full queue indexes of earlier versions, which
// the partial ones replace (every write would keep maintaining them), and
// gives back the default fillfactor an earlier version lowered to 70.
func TestEnsureIndexesDropsRetiredIndexes(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	mustExec(t, p, `CREATE INDEX jobs_state_run_at_idx ON jobs (state, run_at)`)
	mustExec(t, p, `CREATE INDEX jobs_host_state_idx ON jobs (host, state)`)
	mustExec(t, p, `CREATE INDEX jobs_finished_at_idx ON jobs (finished_at)`)
	mustExec(t, p, `ALTER TABLE jobs SET (fillfactor = 70, autovacuum_enabled = true)`)
	if err := postgres.EnsureIndexes(ctx, p); err != nil {
		t.Fatal(err)
	}
	have := column(t, p, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'jobs' ORDER BY 1`)
	want := []string{"jobs_activity_idx", "jobs_dedupe_key_key", "jobs_finished_idx", "jobs_lease_until_idx", "jobs_pkey", "jobs_queue_idx", "jobs_queued_host_idx"}
	if !slices.Equal(have, want) {
		t.Fatalf("indexes on jobs: %v, want %v", have, want)
	}
	// The fillfactor is reset, and only it: an option an operator set
	// stays.
	opts := column(t, p, `SELECT unnest(reloptions) FROM pg_class WHERE oid = 'jobs'::regclass`)
	if !slices.Equal(opts, []string{"autovacuum_enabled=true"}) {
		t.Fatalf("jobs reloptions %v, want only autovacuum_enabled=true", opts)
	}
	// And a second start changes nothing.
	if err := postgres.EnsureIndexes(ctx, p); err != nil {
		t.Fatal(err)
	}
}

type planNode struct {
	NodeType     string     `json:"Node Type"`
	IndexName    string     `json:"Index Name"`
	RelationName string     `json:"Relation Name"`
	SubplanName  string     `json:"Subplan Name"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// roundTrips counts what the pool sends: one per query, one per batch,
// one per COPY.
type roundTrips struct{ queries, batches, copies atomic.Int64 }

func (r *roundTrips) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	r.copies.Add(1)
	return ctx
}
func (r *roundTrips) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.queries.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.batches.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func TestEnqueueLargeBatchInFewRoundTrips(t *testing.T) {
	t.Parallel()
	s := newSchema(t)
	mustMigrate(t, s.pool(t))
	trips := &roundTrips{}
	cfg := s.cfg.Copy()
	cfg.ConnConfig.Tracer = trips
	p, err := pgxpool.NewWithConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	jobs := make([]domain.Job, 10_000)
	for i := range jobs {
		jobs[i] = newJob(t, fmt.Sprintf("j%05d", i), fmt.Sprintf("h%03d.example", i%100), base)
	}
	trips.queries.Store(0)
	n, err := postgres.NewJobStore(p).Enqueue(testCtx(t), jobs)
	if err != nil || n != len(jobs) {
		t.Fatalf("enqueue: %d, %v", n, err)
	}
	// New jobs go by COPY: BEGIN, one pipelined batch (bodies,
	// activities, NOTIFY), the COPY, the hosts' ready_at (which cannot be
	// pipelined with the COPY), COMMIT.
	if q, b, c := trips.queries.Load(), trips.batches.Load(), trips.copies.Load(); q+b > 4 || c != 1 {
		t.Fatalf("10,000 new jobs took %d queries, %d batches and %d COPYs, want at most 4 and 1 COPY", q, b, c)
	}
	// The same batch again with 10 new jobs among them: the COPY meets a
	// stored key and keeps nothing, and the INSERT skips the stored keys
	// (BEGIN, one pipelined batch of eleven chunks, COMMIT).
	again := slices.Clone(jobs)
	for i := range 10 {
		again = append(again, newJob(t, fmt.Sprintf("k%05d", i), "h000.example", base))
	}
	trips.queries.Store(0)
	trips.batches.Store(0)
	trips.copies.Store(0)
	n, err = postgres.NewJobStore(p).Enqueue(testCtx(t), again)
	if err != nil || n != 10 {
		t.Fatalf("enqueue of 10,000 stored jobs and 10 new: %d inserted, %v; want 10", n, err)
	}
	if q, b, c := trips.queries.Load(), trips.batches.Load(), trips.copies.Load(); q+b > 6 || c != 1 {
		t.Fatalf("10,010 jobs, 10 new, took %d queries, %d batches and %d COPYs, want at most 6 and 1 COPY", q, b, c)
	}
	if got := count(t, p, `SELECT count(*) FROM jobs`); got != len(again) {
		t.Fatalf("%d jobs stored, want %d", got, len(again))
	}
	// Between one host's jobs due at one instant the lease order is the
	// insertion order, which is dedupe-key order (Enqueue sorts to avoid
	// deadlocks); the 10 inserted later come after the first batch. (Of
	// jobs of several hosts due at one instant, the order of the hosts is
	// the store's: the ready hosts' index.)
	sorted := slices.Clone(again)
	slices.SortStableFunc(sorted[:len(jobs)], func(a, b domain.Job) int { return strings.Compare(a.DedupeKey, b.DedupeKey) })
	next := map[string][]string{} // each host's jobs in insertion order
	for _, j := range sorted {
		next[j.Host] = append(next[j.Host], j.ID)
	}
	store := postgres.NewJobStore(p)
	for round := range 3 {
		got, err := store.LeaseBatch(testCtx(t), ports.LeaseRequest{Owner: "w", Token: fmt.Sprint("t", round), Now: base, Until: base.Add(time.Minute), Limit: 50})
		if err != nil || len(got) != 50 {
			t.Fatalf("lease %d: %d jobs, %v", round, len(got), err)
		}
		for _, j := range got {
			if want := next[j.Host][0]; j.ID != want {
				t.Fatalf("leased %s of %s; want %s, the host's first queued", j.ID, j.Host, want)
			}
			next[j.Host] = next[j.Host][1:]
		}
	}
}

func TestEnqueueRefusesTakenIDAndInvalidJobs(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	s := postgres.NewJobStore(p)
	now := time.Now()
	if _, err := s.Enqueue(ctx, []domain.Job{newJob(t, "j1", "a.example", now)}); err != nil {
		t.Fatal(err)
	}
	clash := newJob(t, "j1", "b.example", now) // same id, other dedupe key
	n, err := s.Enqueue(ctx, []domain.Job{newJob(t, "j2", "a.example", now), clash})
	if !errors.Is(err, domain.ErrAlreadyExists) || n != 0 {
		t.Fatalf("taken id: %d, %v", n, err)
	}
	if _, err := s.Get(ctx, contract.JobID("j2")); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a failed batch left j2 behind: %v", err)
	}
	if n, err := s.Enqueue(ctx, nil); n != 0 || err != nil {
		t.Fatalf("empty batch: %d %v", n, err)
	}
	if _, err := s.LeaseBatch(ctx, ports.LeaseRequest{Now: now}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("lease without token: %v", err)
	}
}

// Enqueue in one process wakes the Waker of another; a batch of dedupe
// no-ops wakes nobody; another schema's enqueue is not ours. (The waker
// coalesces, so each silence is checked on its own.)
func TestEnqueueWakesOtherProcesses(t *testing.T) {
	t.Parallel()
	s, producer := migratedSchema(t)
	consumer := s.pool(t)
	other := migrated(t) // another deployment on the same database
	ctx := testCtx(t)
	wakeups := postgres.NewWaker(consumer, testLog(t)).Wakeups(ctx)
	mustWake(t, wakeups, "the wake-up after LISTEN")

	j := newJob(t, "j1", "a.example", time.Now())
	if n, err := postgres.NewJobStore(other).Enqueue(ctx, []domain.Job{j}); n != 1 || err != nil {
		t.Fatalf("enqueue in the other schema: %d %v", n, err)
	}
	mustNotWake(t, wakeups, "an enqueue in another schema")
	if n, err := postgres.NewJobStore(producer).Enqueue(ctx, []domain.Job{j}); n != 1 || err != nil {
		t.Fatalf("enqueue: %d %v", n, err)
	}
	mustWake(t, wakeups, "enqueue in another process")
	if n, err := postgres.NewJobStore(producer).Enqueue(ctx, []domain.Job{j}); n != 0 || err != nil {
		t.Fatalf("re-enqueue: %d %v", n, err)
	}
	mustNotWake(t, wakeups, "a batch that inserted nothing")
}

// mustNotWake fails if a wake-up comes within half a second. A slow
// notification could make it pass wrongly, never fail wrongly.
func mustNotWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("woken by %s", what)
	case <-time.After(500 * time.Millisecond):
	}
}

func mustWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no wake-up: %s", what)
	}
}

// recorder keeps log records for assertions.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) warned(msgPart string, keys ...string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if rec.Level != slog.LevelWarn || !strings.Contains(rec.Message, msgPart) {
			continue
		}
		have := map[string]bool{}
		rec.Attrs(func(a slog.Attr) bool { have[a.Key] = true; return true })
		if slices.ContainsFunc(keys, func(k string) bool { return !have[k] }) {
			continue
		}
		return true
	}
	return false
}

// The listener's connection is killed; it logs, reconnects, wakes the
// workers (jobs may have come meanwhile) and hears enqueues again.
func TestWakerReconnects(t *testing.T) {
	t.Parallel()
	s, p := migratedSchema(t)
	ctx := testCtx(t)
	rec := &recorder{}
	wakeups := postgres.NewWaker(p, slog.New(rec)).Wakeups(ctx)
	mustWake(t, wakeups, "the wake-up after LISTEN")
	listener := func() []string {
		return column(t, p, `SELECT pid::text FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, s.name)
	}
	first := waitFor(t, listener)
	mustExec(t, p, `SELECT pg_terminate_backend($1::int)`, first[0])
	mustWake(t, wakeups, "the wake-up after reconnecting")
	second := waitFor(t, listener)
	if second[0] == first[0] {
		t.Fatalf("still the killed backend %s", first[0])
	}
	if !rec.warned("listener is down", "err", "failures", "retry_in") {
		t.Fatalf("the lost connection was not logged: %+v", rec.records)
	}
	if _, err := postgres.NewJobStore(p).Enqueue(ctx, []domain.Job{newJob(t, "j1", "a.example", time.Now())}); err != nil {
		t.Fatal(err)
	}
	mustWake(t, wakeups, "enqueue after the reconnect")
}

func waitFor(t *testing.T, f func() []string) []string {
	t.Helper()
	for i := 0; i < 300; i++ {
		if got := f(); len(got) > 0 {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("condition not met in 30 s")
	return nil
}

// Several OS processes (this test binary, run again) share one queue: no
// job is leased twice and every job is done.
func TestLeaseFromSeveralProcesses(t *testing.T) {
	t.Parallel()
	s, p := migratedSchema(t)
	base := time.Now().Add(-time.Minute)
	jobs := make([]domain.Job, 300)
	for i := range jobs {
		jobs[i] = newJob(t, fmt.Sprintf("j%04d", i), fmt.Sprintf("h%02d.example", i%30), base)
	}
	if _, err := postgres.NewJobStore(p).Enqueue(testCtx(t), jobs); err != nil {
		t.Fatal(err)
	}
	outputs := runHelpers(t, s, "lease", 3)
	seen := map[string]int{}
	for i, out := range outputs {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "leased "); ok {
				if prev, dup := seen[id]; dup {
					t.Errorf("job %s leased by process %d and %d", id, prev, i)
				}
				seen[id] = i
			}
		}
	}
	if len(seen) != len(jobs) {
		t.Fatalf("%d of %d jobs leased", len(seen), len(jobs))
	}
	if n := count(t, p, `SELECT count(*) FROM jobs WHERE state = 'succeeded'`); n != len(jobs) {
		t.Fatalf("%d succeeded", n)
	}
	per := map[int]int{}
	for _, i := range seen {
		per[i]++
	}
	t.Logf("jobs per process: %v", per)
}

// Several OS processes start at once on an empty schema: one migrates.
func TestMigrateUpFromSeveralProcesses(t *testing.T) {
	t.Parallel()
	s := newSchema(t)
	runHelpers(t, s, "migrate", 3)
	checkMigratedOnce(t, s.pool(t))
}

// runHelpers runs n copies of this test binary as helper processes doing
// role on schema s, at once, and returns their outputs.
func runHelpers(t *testing.T, s schema, role string, n int) [][]byte {
	t.Helper()
	outs := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "HERALD_PG_HELPER="+role, "HERALD_PG_SCHEMA="+s.name, "DATABASE_URL="+databaseURL())
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("helper %d (%s): %v\n%s", i, role, err, outs[i])
		}
	}
	return outs
}

// TestHelperProcess is the body of a helper process; run by itself it does
// nothing.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv("HERALD_PG_HELPER")
	if role == "" {
		return
	}
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = os.Getenv("HERALD_PG_SCHEMA")
	ctx := testCtx(t)
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	switch role {
	case "migrate":
		if err := postgres.MigrateUp(ctx, p, testLog(t)); err != nil {
			t.Fatal(err)
		}
		if err := postgres.EnsureIndexes(ctx, p); err != nil {
			t.Fatal(err)
		}
	case "lease":
		store := postgres.NewJobStore(p)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					tok := fmt.Sprintf("%d-%d-%d", os.Getpid(), w, i)
					now := time.Now()
					j, err := leaseOne(ctx, store, ports.LeaseRequest{Owner: "p", Token: tok, Now: now, Until: now.Add(time.Minute)})
					if errors.Is(err, domain.ErrNoJob) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					fmt.Printf("leased %s\n", j.ID)
					mu.Unlock()
					if err := settleOne(ctx, store, ports.Settlement{ID: j.ID, Token: tok, State: domain.JobSucceeded, Attempts: 1, FinishedAt: time.Now()}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// A batch by COPY that is not fresh (a dedupe key a caller chose, a job
// already attempted, a dead one with its error and end) is copied with
// every column, and each job reads back as it went in.
func TestEnqueueByCopyKeepsEveryColumn(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	s := postgres.WithCopyMin(postgres.NewJobStore(p), 1)
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	custom := newJob(t, "custom", "a.example", base)
	custom.DedupeKey = domain.DedupeKey("another activity", custom.Inbox)
	retried := newJob(t, "retried", "b.example", base)
	retried.Attempts, retried.LastError = 2, "HTTP 503"
	dead := newJob(t, "dead", "c.example", base)
	dead.State, dead.Attempts, dead.LastError, dead.FinishedAt = domain.JobDead, 16, "HTTP 410", base.Add(time.Hour)
	in := []domain.Job{custom, retried, dead}
	if n, err := s.Enqueue(ctx, in); err != nil || n != 3 {
		t.Fatalf("enqueue: %d %v", n, err)
	}
	if got := count(t, p, `SELECT count(*) FROM jobs WHERE dedupe_full IS NOT NULL`); got != 1 {
		t.Fatalf("%d jobs keep their whole dedupe key, want 1 (the custom one)", got)
	}
	for _, want := range in {
		got, err := s.Get(ctx, want.ID)
		if err != nil || got.DedupeKey != want.DedupeKey || got.State != want.State || got.Attempts != want.Attempts ||
			got.LastError != want.LastError || !got.FinishedAt.Equal(want.FinishedAt) || !got.RunAt.Equal(want.RunAt) || got.Inbox != want.Inbox {
			t.Fatalf("%s read back as %+v (%v), want %+v", contract.JobName(want.ID), got, err, want)
		}
	}
	// The custom key dedupes as itself.
	again := newJob(t, "again", "a.example", base)
	again.DedupeKey = custom.DedupeKey
	if n, err := s.Enqueue(ctx, []domain.Job{again}); err != nil || n != 0 {
		t.Fatalf("a job with the custom key again: %d inserted (%v), want 0", n, err)
	}
}
