package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/bench/pgcount"
)

// Engine throughput of issue 13: 20,000 no-op jobs over 1,000 hosts,
// drained by the real Engine on PostgreSQL (a deliverer that succeeds at
// once) and by River on the same server, 8 and 32 workers, runs
// interleaved (Herald 8, River 8, Herald 32, River 32, three rounds), each
// system in a schema of its own inside a database of the run's own.
const (
	engineJobs  = 20_000
	engineHosts = 1000
)

// engineRun is one drain, by either system.
type engineRun struct {
	System     string  `json:"system"`
	Workers    int     `json:"workers"`
	Jobs       int     `json:"jobs"`
	Seconds    float64 `json:"seconds"`
	Statements int64   `json:"statements"`
	Commits    int64   `json:"commits"`
	// CPUMicros is the machine's busy CPU time over the drain
	// (pgcount.MachineCPU): the system's process and PostgreSQL's.
	CPUMicros int64 `json:"cpu_micros"`
}

func (r engineRun) rate() float64 { return float64(r.Jobs) / r.Seconds }

// cpuPerJob is the machine's busy CPU per job over the drain, in µs.
func (r engineRun) cpuPerJob() float64 { return float64(r.CPUMicros) / float64(max(r.Jobs, 1)) }

// engineOpts are the engine rows' flags.
type engineOpts struct {
	systems map[string]bool // herald, river
	jobs    int             // 0: the default
	rounds  int             // 0: the default
}

func benchEngine(ctx context.Context, r *report, dbURL string, opts engineOpts) error {
	jobs, rounds := engineJobs, 3
	if r.quick {
		jobs, rounds = 5000, 1
	}
	if opts.jobs > 0 {
		jobs = opts.jobs
	}
	if opts.rounds > 0 {
		rounds = opts.rounds
	}
	if len(opts.systems) == 0 {
		opts.systems = map[string]bool{"herald": true, "river": true}
	}
	db, drop, err := pgcount.TempDatabase(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("a database of the run's own (for its commit counts): %w", err)
	}
	defer drop()
	riverBin, riverErr := "", errors.New("not asked for (-engine-systems)")
	if opts.systems["river"] {
		riverBin, riverErr = buildRiver(ctx)
	}
	if riverBin != "" {
		defer os.RemoveAll(filepath.Dir(riverBin))
	}
	runs := map[string][]engineRun{}
	for round := 0; round < rounds; round++ {
		for _, w := range []int{8, 32} {
			if opts.systems["herald"] {
				h, err := runHerald(ctx, db, engine.Config{Workers: w}, jobs)
				if err != nil {
					return fmt.Errorf("herald, %d workers: %w", w, err)
				}
				h.System = "herald"
				fmt.Fprintf(os.Stderr, "   herald %2d workers: %.0f jobs/s, %.3f statements/job, %.3f commits/job, %.0f µs CPU/job\n", w, h.rate(),
					float64(h.Statements)/float64(h.Jobs), float64(h.Commits)/float64(h.Jobs), h.cpuPerJob())
				runs[key("herald", w)] = append(runs[key("herald", w)], h)
			}
			if riverErr != nil {
				continue
			}
			rv, err := runRiver(ctx, riverBin, db, w, jobs)
			if err != nil {
				return fmt.Errorf("river, %d workers: %w", w, err)
			}
			fmt.Fprintf(os.Stderr, "   river  %2d workers: %.0f jobs/s, %.3f statements/job, %.3f commits/job, %.0f µs CPU/job\n", w, rv.rate(),
				float64(rv.Statements)/float64(rv.Jobs), float64(rv.Commits)/float64(rv.Jobs), rv.cpuPerJob())
			runs[key("river", w)] = append(runs[key("river", w)], rv)
		}
	}
	t := &table{
		title:   "Engine throughput against River",
		command: "go run ./test/bench/heraldbench -only engine",
		intro: fmt.Sprintf("%d no-op jobs over %d hosts drained on PostgreSQL by Herald's real engine (`application/engine`, a deliverer that succeeds at once, per-host cap 2, "+
			"the PostgreSQL stores and LISTEN/NOTIFY waker) and by River v0.51.2 (`riverpgxv5`, FetchCooldown 1 ms, a no-op worker; `test/bench/river`, a module of its own), "+
			"%d interleaved rounds (Herald 8, River 8, Herald 32, River 32), median of the rounds. Each system works in a schema of its own in a database made for the run. "+
			"Statements: every query, batch query and COPY the system's pool sent, counted by a pgx tracer (`test/bench/pgcount`); commits: `pg_stat_database.xact_commit` of that database, before and after, "+
			"once the system's backends have exited. CPU per job: the machine's busy time (all cores, /proc/stat: the system's process and PostgreSQL's) over the drain, divided by the jobs; \"River / Herald CPU\" is the median River's over the median Herald's, what the rates' ratio tends to when both saturate the cores. Goals of issue 13: Herald ≥ 1.5× River at 8 and at 32 workers, Herald at 32 ≥ 3× Herald at 8, ≤ 0.2 statements and ≤ 0.2 commits per job.",
			jobs, engineHosts, rounds),
		header: []string{"system", "workers", "jobs per second", "statements per job", "commits per job", "CPU per job (µs)", "Herald / River", "River / Herald CPU", "32 / 8 workers"},
	}
	for _, sys := range []string{"herald", "river"} {
		if !opts.systems[sys] {
			continue
		}
		for _, w := range []int{8, 32} {
			rs := runs[key(sys, w)]
			if len(rs) == 0 {
				t.rows = append(t.rows, []string{sys, fmt.Sprint(w), "not measured: " + fmt.Sprint(riverErr), "–", "–", "–", "–", "–", "–"})
				continue
			}
			m := median(rs)
			vsRiver, cpuVsRiver, vs8 := "–", "–", "–"
			if sys != "river" && len(runs[key("river", w)]) > 0 {
				rv := median(runs[key("river", w)])
				vsRiver = ratio(m.rate(), rv.rate())
				if m.CPUMicros > 0 && rv.CPUMicros > 0 {
					cpuVsRiver = ratio(rv.cpuPerJob(), m.cpuPerJob())
				}
			}
			if w == 32 {
				vs8 = ratio(m.rate(), median(runs[key(sys, 8)]).rate())
			}
			t.rows = append(t.rows, []string{sys, fmt.Sprint(w), fmt.Sprintf("%.0f", m.rate()),
				fmt.Sprintf("%.3f", float64(m.Statements)/float64(m.Jobs)), fmt.Sprintf("%.3f", float64(m.Commits)/float64(m.Jobs)), cpuCell(m.CPUMicros, m.Jobs), vsRiver, cpuVsRiver, vs8})
		}
	}
	t.notes = append(t.notes, "Herald leases as many jobs as it has free slots in one statement (the per-host cap counted in `host_slots` for every process), "+
		"and, while leases come back full, the next batch ahead of them (one batch of Workers jobs): up to two lease round trips at once, "+
		"so the slots a batch frees are filled at once from the jobs leased ahead while the next round trip is in flight. A batch's activity body is read once per fan-out, not once per lease (a cache by content address). "+
		"Its completer writes the results in batches (every 10 ms, or 4×workers results, or when nothing is left to lease) with one statement; "+
		"a worker's slot frees when its delivery ends, its host's slot when the result is written. Breaker successes of hosts not known failing (a fan-out's first contacts) are written together, at most once a second.")
	if riverErr != nil {
		t.notes = append(t.notes, "River not measured: "+riverErr.Error())
	}
	r.add(t)
	return nil
}

func withOwner(c engine.Config, owner string) engine.Config {
	c.PerHost, c.Owner = 2, owner
	return c
}

func key(system string, workers int) string { return fmt.Sprintf("%s/%d", system, workers) }

// median is the run of median throughput.
func median(rs []engineRun) engineRun {
	s := append([]engineRun(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].rate() < s[j].rate() })
	return s[len(s)/2]
}

// buildRiver builds test/bench/river (its own module) into a temp dir.
func buildRiver(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "heraldbench-river-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "riverbench")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("test", "bench", "river")
	if out, err := cmd.CombinedOutput(); err != nil {
		return bin, fmt.Errorf("build test/bench/river: %v\n%s", err, out)
	}
	return bin, nil
}

func runRiver(ctx context.Context, bin, db string, workers, jobs int) (engineRun, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-database-url", db, "-workers", fmt.Sprint(workers), "-jobs", fmt.Sprint(jobs),
		"-hosts", fmt.Sprint(engineHosts), "-payload-bytes", fmt.Sprint(len(payload)))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return engineRun{}, fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
	}
	var res engineRun
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return engineRun{}, fmt.Errorf("river printed %q: %v", out.String(), err)
	}
	return res, nil
}

// noopDeliverer succeeds at once.
type noopDeliverer struct{}

func (noopDeliverer) Deliver(context.Context, ports.Delivery) domain.Outcome {
	return domain.Outcome{Kind: domain.OutcomeDelivered, Status: 202}
}

// settledCounter tells when every job has succeeded (the observer hears it
// after the result is written).
type settledCounter struct {
	ports.NopObserver
	n    atomic.Int64
	want int64
	done chan struct{}

	// Where the engine's time went, for the profile line on stderr.
	leases, leasedJobs, emptyLeases, leaseNanos atomic.Int64
	flushes, flushedJobs, flushNanos            atomic.Int64
	cpu                                         pgcount.CPU   // the machine's, over the drain
	self                                        time.Duration // this process's, over the drain
}

func (s *settledCounter) Leased(took time.Duration, jobs int) {
	s.leases.Add(1)
	s.leasedJobs.Add(int64(jobs))
	s.leaseNanos.Add(int64(took))
	if jobs == 0 {
		s.emptyLeases.Add(1)
	}
}

func (s *settledCounter) Flushed(took time.Duration, results int) {
	s.flushes.Add(1)
	s.flushedJobs.Add(int64(results))
	s.flushNanos.Add(int64(took))
}

// profile says how the drain's wall time splits: lease round trips (the
// dispatcher waits on them) and flushes (the completer's).
func (s *settledCounter) profile(wall time.Duration) string {
	l, f := s.leases.Load(), s.flushes.Load()
	return fmt.Sprintf("CPU %.0f µs a job (machine, all processes; steal %.0f µs; this process %.0f µs), %d leases (%d empty, %.1f jobs each, %.0f µs each, %.0f%% of the wall time), %d flushes (%.1f results each, %.0f µs each, %.0f%% of the wall time)",
		float64(s.cpu.Busy.Microseconds())/float64(max(s.want, 1)), float64(s.cpu.Steal.Microseconds())/float64(max(s.want, 1)),
		float64(s.self.Microseconds())/float64(max(s.want, 1)),
		l, s.emptyLeases.Load(), float64(s.leasedJobs.Load())/float64(max(l, 1)), float64(s.leaseNanos.Load())/1e3/float64(max(l, 1)),
		100*float64(s.leaseNanos.Load())/float64(wall), f, float64(s.flushedJobs.Load())/float64(max(f, 1)),
		float64(s.flushNanos.Load())/1e3/float64(max(f, 1)), 100*float64(s.flushNanos.Load())/float64(wall))
}

func (s *settledCounter) Settled(st domain.JobState) {
	if st == domain.JobSucceeded && s.n.Add(1) == s.want {
		close(s.done)
	}
}

// drain runs eng until obs has heard every job succeed (at most five
// minutes) and returns how long that took; measured is called at that
// moment, before the engine shuts down.
func drain(ctx context.Context, eng *engine.Engine, obs *settledCounter, measured func()) (time.Duration, error) {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan struct{})
	cpu0, self0 := pgcount.MachineCPU(), processCPU()
	started := time.Now()
	go func() { defer close(ran); _ = eng.Run(runCtx) }()
	select {
	case <-obs.done:
	case <-time.After(5 * time.Minute):
		stop()
		<-ran
		return 0, fmt.Errorf("only %d of %d jobs succeeded in 5 minutes", obs.n.Load(), obs.want)
	}
	took := time.Since(started)
	obs.cpu, obs.self = pgcount.MachineCPU().Since(cpu0), processCPU()-self0
	measured()
	stop()
	<-ran
	return took, nil
}

// runHerald drains jobs with the real engine over the PostgreSQL stores.
func runHerald(ctx context.Context, db string, ecfg engine.Config, jobs int) (engineRun, error) {
	workers := ecfg.Workers
	admin, err := pgx.Connect(ctx, db)
	if err != nil {
		return engineRun{}, err
	}
	defer admin.Close(context.Background())
	tag := strings.ToLower(rand.Text()[:10])
	schema := "herald_" + tag
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return engineRun{}, err
	}
	defer func() { _, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }()

	// Set up on a pool that is not measured: schema, sender, jobs.
	setup, err := postgres.Connect(ctx, pgcount.WithParams(db, map[string]string{"search_path": schema}))
	if err != nil {
		return engineRun{}, err
	}
	quiet := slog.New(slog.DiscardHandler)
	err = postgres.MigrateUp(ctx, setup, quiet)
	if err == nil {
		err = postgres.EnsureIndexes(ctx, setup)
	}
	var sender domain.Avatar
	if err == nil {
		var kp domain.KeyPair
		kp, err = security.RSAKeys{}.GenerateKeyPair()
		if err == nil {
			sender, err = domain.NewAvatar(system.IDs{}.NewID(), "", "sender", kp, time.Now())
		}
		if err == nil {
			err = postgres.NewAccountStore(setup).CreateAvatar(ctx, sender)
		}
	}
	if err == nil {
		all := makeJobs("eng", jobs, engineHosts, time.Now().Add(-time.Hour))
		for i := range all {
			all[i].SenderID = sender.ID
		}
		_, err = postgres.NewJobStore(setup).Enqueue(ctx, all)
	}
	setup.Close()
	if err != nil {
		return engineRun{}, err
	}

	app := "heraldbench_" + tag
	cfg, err := pgxpool.ParseConfig(pgcount.WithParams(db, map[string]string{"search_path": schema, "application_name": app}))
	if err != nil {
		return engineRun{}, err
	}
	stmts := &pgcount.Statements{}
	cfg.ConnConfig.Tracer = stmts
	cfg.MaxConns = 10 // as River's pool
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return engineRun{}, err
	}
	obs := &settledCounter{want: int64(jobs), done: make(chan struct{})}
	clock := system.Clock{}
	eng := engine.New(engine.Deps{
		Jobs: postgres.NewJobStore(pool), Instances: postgres.NewInstanceStore(pool), Deliverer: noopDeliverer{},
		Keys:  engine.NewCachedKeys(engine.ActorKeys{Actors: postgres.NewAccountStore(pool)}, clock),
		Clock: clock, Random: system.Random{}, IDs: system.IDs{}, Wakes: postgres.NewWaker(pool, quiet), Observer: obs, Log: quiet,
	}, withOwner(ecfg, app))
	commits0, err := pgcount.Commits(ctx, admin)
	if err != nil {
		pool.Close()
		return engineRun{}, err
	}
	var statements int64
	took, err := drain(ctx, eng, obs, func() { statements = stmts.Count() })
	pool.Close()
	if err != nil {
		return engineRun{}, err
	}
	fmt.Fprintf(os.Stderr, "   herald %2d workers: %s\n", workers, obs.profile(took))
	if err := pgcount.WaitGone(ctx, admin, app); err != nil {
		return engineRun{}, err
	}
	commits1, err := pgcount.Commits(ctx, admin)
	if err != nil {
		return engineRun{}, err
	}
	return engineRun{System: "herald", Workers: workers, Jobs: jobs, Seconds: took.Seconds(), Statements: statements, Commits: commits1 - commits0,
		CPUMicros: obs.cpu.Busy.Microseconds()}, nil
}

// processCPU is this process's CPU time so far (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
