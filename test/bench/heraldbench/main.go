// Command heraldbench measures Herald against its bounds and writes
// docs/benchmarks.md with SVG plots (`make bench`). Every figure is
// reported with its ratio to its bound or baseline:
//
//	headline           the fan-out's clean and dead-host rows against one
//	                   worker delivering one job after another (the design
//	                   Herald replaces), measured on a sample and scaled
//	fan-out makespan   one post to 10,000 inboxes on 1,000 loopback hosts,
//	                   against what 8 slots and 8 waits allow, one row
//	                   per fault (dead, refused, 503/429 with Retry-After,
//	                   all at once, a second post while retries come due)
//	lease throughput   jobs leased and completed per second, 1/8/32 workers,
//	                   and lease latency from 1k to 1M queued jobs, per store
//	lease-capped       lease latency with 1k and 100k queued jobs, 90% of
//	                   them on hosts at their per-host cap, per store
//	engine throughput  20,000 no-op jobs over 1,000 hosts drained by the real
//	                   engine on PostgreSQL and by River, 8 and 32 workers,
//	                   with statements and commits per job; and by the
//	                   engine on SQLite, with commits per job
//	enqueue            a 10,000-recipient fan-out batch, per store
//	signing            signed deliveries per second per core against
//	                   `openssl speed rsa2048`
//	memory             RSS with 100,000 queued jobs in the memory store, and
//	                   RSS over a fan-out on PostgreSQL
//	followers          one post to 10k/100k/1M followers on PostgreSQL:
//	                   enqueue jobs/s against River's InsertManyFast, the
//	                   publisher's peak RSS, bytes on disk per queued job
//	delete             a persona with 100,000 followers deleted on
//	                   PostgreSQL: its Delete{Person} through the post's
//	                   fan-out (jobs/s), then its follows removed, and the
//	                   deleting process's peak RSS
//	suspend            the queued jobs of one host (100,000, beside 100,000
//	                   of other hosts) ended dead in one store operation
//	                   (JobAdmin.EndDomainJobs), per store, against ending
//	                   them one committed write at a time
//	inbox              verified inbox POSTs per second and server CPU per
//	                   POST of the working tree against a baseline
//	                   revision, two herald serve processes on SQLite in
//	                   alternating rounds (bound: current ≥ 0.9× baseline)
//	soak               a herald serve process as a busy instance lives, on
//	                   SQLite and PostgreSQL: a post every 5 s to 1,050
//	                   inboxes on 100 loopback servers, 100 signed Creates
//	                   and one Like a second inbound, 5 slow, 3 dead and 2
//	                   refusing servers, for 3 minutes (-soak-duration),
//	                   and the same without slow servers as its control
//	                   (issue 36)
//
// The fan-out runs the engine in a child process (the same binary, the
// "worker" subcommand) so that the fake servers and the measurement do not
// share its CPU accounting or its RSS.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(workerMain(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == "publish" {
		os.Exit(publishMain(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == "delete-persona" {
		os.Exit(deletePersonaMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "hold" {
		os.Exit(holdMain(os.Args[2:]))
	}
	out := flag.String("out", "docs/benchmarks.md", "report to write")
	plots := flag.String("plots", "docs/bench", "directory for the SVG plots")
	only := flag.String("only", "sign,memory,enqueue,lease,lease-capped,suspend,engine,engine-sqlite,engine-mongo,fanout,followers,delete,inbox,soak", "which measurements, comma-separated")
	storeNames := flag.String("stores", "memory,sqlite,postgres,mongo", "which stores the enqueue, lease and suspend rows measure, comma-separated")
	fanoutRows := flag.String("fanout-rows", "", "which fan-out rows (clean,dead,refused,retry-after,all,second-post,postgres,dead-no-park,dead-no-hold,dead-neither, and serial: the headline against one serial worker, beside clean and dead; empty: all)")
	engineSystems := flag.String("engine-systems", "herald,river", "which systems the engine rows measure (herald, river)")
	engineJobsFlag := flag.Int("engine-jobs", 0, "jobs per engine drain (0: 20,000, or 5,000 with -quick)")
	engineRounds := flag.Int("engine-rounds", 0, "interleaved rounds of the engine rows (0: 3, or 1 with -quick)")
	followerSizes := flag.String("followers", "10000,100000,1000000", "follower counts of the followers rows, comma-separated")
	deleteSizes := flag.String("delete-followers", "100000", "follower counts of the delete rows (a persona deleted), comma-separated")
	inboxBaseline := flag.String("inbox-baseline", defaultInboxBaseline, "git revision the inbox rows compare against (default: the last commit before the trust rules)")
	inboxCurrent := flag.String("inbox-current", "", "git revision of the inbox rows' current build (empty: the working tree)")
	inboxRounds := flag.Int("inbox-rounds", 0, "alternating rounds of the inbox rows, each build once a round (0: 5)")
	inboxRequests := flag.Int("inbox-requests", 0, "timed POSTs per inbox run (0: 5,000, or 1,000 with -quick)")
	soakDuration := flag.Duration("soak-duration", 0, "load of each soak run (0: 3m, or 1m with -quick; the issue's soak: 10m)")
	soakDrain := flag.Duration("soak-drain", 0, "the most a soak run's drain may take after its load (0: 3m)")
	soakStores := flag.String("soak-stores", "sqlite,postgres", "stores of the soak runs, comma-separated")
	soakVariants := flag.String("soak-variants", "slow,control", "soak runs: slow (5 slow servers), control (they answer at once)")
	soakBaseline := flag.String("soak-baseline", "", "git revision the soak also runs, beside the working tree, run for run (empty: none)")
	quick := flag.Bool("quick", false, "smaller sizes, for a smoke run (figures not comparable)")
	dbURL := flag.String("database-url", envOr("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL for the postgres rows")
	mongoURI := flag.String("mongodb-uri", os.Getenv("MONGODB_URI"), "MongoDB for the mongo rows (skipped when empty)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (Herald's side of the rows; River and the publisher are processes of their own) to this file")
	flag.Parse()

	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r := &report{started: time.Now(), quick: *quick, machine: machineInfo()}
	want := map[string]bool{}
	for _, w := range strings.Split(*only, ",") {
		want[strings.TrimSpace(w)] = true
	}
	var stores []storeKind
	for _, k := range storesFor(*dbURL, *mongoURI) {
		if strings.Contains(","+*storeNames+",", ","+k.name+",") {
			stores = append(stores, k)
		}
	}
	steps := []struct {
		name string
		run  func(context.Context, *report) error
	}{
		{"sign", benchSign},
		{"memory", benchMemory},
		{"enqueue", func(ctx context.Context, r *report) error { return benchEnqueue(ctx, r, stores) }},
		{"lease", func(ctx context.Context, r *report) error { return benchLease(ctx, r, stores) }},
		{"lease-capped", func(ctx context.Context, r *report) error { return benchLeaseCapped(ctx, r, stores) }},
		{"suspend", func(ctx context.Context, r *report) error { return benchSuspend(ctx, r, stores, *mongoURI) }},
		{"engine", func(ctx context.Context, r *report) error {
			return benchEngine(ctx, r, *dbURL, engineOpts{systems: rowSet(*engineSystems), jobs: *engineJobsFlag, rounds: *engineRounds})
		}},
		{"engine-sqlite", benchEngineSQLite},
		{"engine-mongo", func(ctx context.Context, r *report) error { return benchEngineMongo(ctx, r, *mongoURI) }},
		{"fanout", func(ctx context.Context, r *report) error { return benchFanout(ctx, r, *dbURL, rowSet(*fanoutRows)) }},
		{"followers", func(ctx context.Context, r *report) error { return benchFollowers(ctx, r, *dbURL, *followerSizes) }},
		{"delete", func(ctx context.Context, r *report) error { return benchDelete(ctx, r, *dbURL, *deleteSizes) }},
		{"inbox", func(ctx context.Context, r *report) error {
			return benchInbox(ctx, r, inboxOpts{baseline: *inboxBaseline, current: *inboxCurrent, rounds: *inboxRounds, requests: *inboxRequests})
		}},
		{"soak", func(ctx context.Context, r *report) error {
			return benchSoak(ctx, r, soakOpts{duration: *soakDuration, drain: *soakDrain, stores: strings.Split(*soakStores, ","),
				variants: strings.Split(*soakVariants, ","), baseline: *soakBaseline, dbURL: *dbURL})
		}},
	}
	failed := false
	for _, s := range steps {
		if !want[s.name] {
			continue
		}
		t := time.Now()
		fmt.Fprintf(os.Stderr, "== %s\n", s.name)
		if err := s.run(ctx, r); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, err)
			r.notes = append(r.notes, fmt.Sprintf("%s failed: %v", s.name, err))
			failed = true
		}
		fmt.Fprintf(os.Stderr, "   %s took %s\n", s.name, time.Since(t).Round(time.Second))
		if ctx.Err() != nil {
			break
		}
	}
	r.took = time.Since(r.started)
	stopProfile()
	if err := r.write(*out, *plots); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %s in %s\n", *out, r.took.Round(time.Second))
	if failed {
		os.Exit(1)
	}
}

func rowSet(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split(list, ",") {
		if w = strings.TrimSpace(w); w != "" {
			m[w] = true
		}
	}
	return m
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// startCPUProfile writes a CPU profile of this process to path until stop
// is called; an empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
