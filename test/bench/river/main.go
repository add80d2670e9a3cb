// Command river measures River (riverqueue/river v0.51.2, riverpgxv5) on
// the same task as Herald's engine in test/bench/heraldbench: N no-op jobs
// over H hosts drained by W workers, on the PostgreSQL database it is
// given, in a schema of its own. heraldbench builds and runs it, one run per
// line of its table, interleaved with Herald's runs, and reads the one JSON
// line it prints. It lives in a module of its own so that River never
// becomes a dependency of Herald's go.mod.
//
// Statements are counted by a pgx tracer on the pool River works on, and
// commits as pg_stat_database.xact_commit deltas, both by test/bench/pgcount,
// exactly as for Herald. FetchCooldown is 1 ms (River's default is 100 ms,
// which caps a client far below what the machine can do), the fetch poll
// interval River's default.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/heraldfed/herald/test/bench/pgcount"
)

// deliverArgs is one job: an inbox and an activity of the size Herald's
// jobs carry, so both queues move rows of about the same width.
type deliverArgs struct {
	Inbox   string `json:"inbox"`
	Payload string `json:"payload"`
}

func (deliverArgs) Kind() string { return "deliver" }

// noopWorker succeeds at once, as the no-op deliverer on Herald's side.
type noopWorker struct {
	river.WorkerDefaults[deliverArgs]
}

func (noopWorker) Work(context.Context, *river.Job[deliverArgs]) error { return nil }

// Result is what one run printed.
type Result struct {
	System     string  `json:"system"`
	Workers    int     `json:"workers"`
	Jobs       int     `json:"jobs"`
	Seconds    float64 `json:"seconds"`
	Statements int64   `json:"statements"`
	Commits    int64   `json:"commits"`
	CPUMicros  int64   `json:"cpu_micros"` // the machine's busy CPU over the drain (pgcount.MachineCPU)
}

func main() {
	dbURL := flag.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL (a postgres:// URL; heraldbench gives a database of the run's own)")
	workers := flag.Int("workers", 8, "River's MaxWorkers for the queue")
	jobs := flag.Int("jobs", 20_000, "jobs to drain")
	hosts := flag.Int("hosts", 1000, "distinct inbox hosts")
	payloadBytes := flag.Int("payload-bytes", 1271, "size of each job's activity")
	insertOnly := flag.Bool("insert-only", false, "only time inserting -jobs jobs with InsertManyFast, 1,000 a call, and print {insert_per_second, cpu_micros}")
	flag.Parse()
	if *insertOnly {
		rate, cpu, err := insertRate(*dbURL, *jobs, *hosts, *payloadBytes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "river bench:", err)
			os.Exit(1)
		}
		_ = json.NewEncoder(os.Stdout).Encode(map[string]float64{"insert_per_second": rate,
			"cpu_micros": float64(cpu.Busy.Microseconds())})
		return
	}
	res, err := run(*dbURL, *workers, *jobs, *hosts, *payloadBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "river bench:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

func run(dbURL string, workers, jobs, hosts, payloadBytes int) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return Result{}, err
	}
	defer admin.Close(context.Background())
	tag := strings.ToLower(rand.Text()[:10])
	schema := "river_" + tag
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return Result{}, err
	}
	defer func() { _, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }()

	ws := river.NewWorkers()
	river.AddWorker(ws, &noopWorker{})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	// Set up on a pool that is not measured: River's tables, then the jobs.
	setup, err := pgxpool.New(ctx, pgcount.WithParams(dbURL, map[string]string{"search_path": schema}))
	if err != nil {
		return Result{}, err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(setup), &rivermigrate.Config{Schema: schema, Logger: quiet})
	if err == nil {
		_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		setup.Close()
		return Result{}, fmt.Errorf("migrate: %w", err)
	}
	inserter, err := river.NewClient(riverpgxv5.New(setup), &river.Config{Schema: schema, Workers: ws, Logger: quiet})
	if err != nil {
		setup.Close()
		return Result{}, err
	}
	payload := strings.Repeat("x", payloadBytes)
	for start := 0; start < jobs; start += 1000 {
		var params []river.InsertManyParams
		for i := start; i < min(start+1000, jobs); i++ {
			params = append(params, river.InsertManyParams{Args: deliverArgs{
				Inbox: fmt.Sprintf("https://h%04d.example/users/u%d/inbox", i%hosts, i), Payload: payload}})
		}
		if _, err := inserter.InsertManyFast(ctx, params); err != nil {
			setup.Close()
			return Result{}, fmt.Errorf("insert: %w", err)
		}
	}
	setup.Close()

	// The measured client: its own pool, traced and named.
	app := "riverbench_" + tag
	cfg, err := pgxpool.ParseConfig(pgcount.WithParams(dbURL, map[string]string{"search_path": schema, "application_name": app}))
	if err != nil {
		return Result{}, err
	}
	stmts := &pgcount.Statements{}
	cfg.ConnConfig.Tracer = stmts
	cfg.MaxConns = 10
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Schema:        schema,
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:       ws,
		FetchCooldown: time.Millisecond,
		Logger:        quiet,
	})
	if err != nil {
		pool.Close()
		return Result{}, err
	}
	events, unsubscribe := client.SubscribeConfig(&river.SubscribeConfig{Kinds: []river.EventKind{river.EventKindJobCompleted}, ChanSize: jobs + 1000})
	defer unsubscribe()
	commits0, err := pgcount.Commits(ctx, admin)
	if err != nil {
		pool.Close()
		return Result{}, err
	}
	cpu0 := pgcount.MachineCPU()
	started := time.Now()
	if err := client.Start(ctx); err != nil {
		pool.Close()
		return Result{}, err
	}
	deadline := time.After(5 * time.Minute)
	for done := 0; done < jobs; {
		select {
		case <-events:
			done++
		case <-deadline:
			pool.Close()
			return Result{}, fmt.Errorf("only %d of %d jobs completed in 5 minutes", done, jobs)
		}
	}
	took := time.Since(started)
	cpu := pgcount.MachineCPU().Since(cpu0)
	statements := stmts.Count()
	stopCtx, stopCancel := context.WithTimeout(ctx, 30*time.Second)
	_ = client.Stop(stopCtx)
	stopCancel()
	pool.Close()
	if err := pgcount.WaitGone(ctx, admin, app); err != nil {
		return Result{}, err
	}
	commits1, err := pgcount.Commits(ctx, admin)
	if err != nil {
		return Result{}, err
	}
	return Result{System: "river", Workers: workers, Jobs: jobs, Seconds: took.Seconds(), Statements: statements, Commits: commits1 - commits0,
		CPUMicros: cpu.Busy.Microseconds()}, nil
}

// insertRate times inserting jobs with InsertManyFast, 1,000 a call (as
// Herald's fan-out enqueues), into a schema of its own: jobs/s and the
// machine's busy CPU over the inserts (pgcount.MachineCPU: River's process
// and PostgreSQL's).
func insertRate(dbURL string, jobs, hosts, payloadBytes int) (float64, pgcount.CPU, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, pgcount.CPU{}, err
	}
	defer admin.Close(context.Background())
	schema := "river_ins_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return 0, pgcount.CPU{}, err
	}
	defer func() { _, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, err := pgxpool.New(ctx, pgcount.WithParams(dbURL, map[string]string{"search_path": schema}))
	if err != nil {
		return 0, pgcount.CPU{}, err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema, Logger: quiet})
	if err == nil {
		_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		return 0, pgcount.CPU{}, fmt.Errorf("migrate: %w", err)
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, &noopWorker{})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: schema, Workers: ws, Logger: quiet})
	if err != nil {
		return 0, pgcount.CPU{}, err
	}
	payload := strings.Repeat("x", payloadBytes)
	params := make([]river.InsertManyParams, 0, 1000)
	start, cpu0 := time.Now(), pgcount.MachineCPU()
	for from := 0; from < jobs; from += 1000 {
		params = params[:0]
		for i := from; i < min(from+1000, jobs); i++ {
			params = append(params, river.InsertManyParams{Args: deliverArgs{
				Inbox: fmt.Sprintf("https://h%04d.example/users/u%d/inbox", i%hosts, i), Payload: payload}})
		}
		if _, err := client.InsertManyFast(ctx, params); err != nil {
			return 0, pgcount.CPU{}, fmt.Errorf("insert: %w", err)
		}
	}
	took, cpu := time.Since(start), pgcount.MachineCPU().Since(cpu0)
	return float64(jobs) / took.Seconds(), cpu, nil
}
