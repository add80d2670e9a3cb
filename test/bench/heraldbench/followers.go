package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/bench/pgcount"
)

// Issue 15's goals, on PostgreSQL: one post to N followers with personal
// inboxes (N jobs), published by a child process (the "publish" subcommand)
// so its peak RSS is the publishing process's alone; the same number of
// no-payload jobs inserted by River's InsertManyFast in the same run; and
// the queue's bytes on disk per job.
const (
	fanDomain = "bench.localhost"
	fanActor  = "http://" + fanDomain + "/users/fan"
)

type publishRun struct {
	Jobs    int     `json:"jobs"`
	Seconds float64 `json:"seconds"`
	HWMKiB  int     `json:"hwm_kib"` // VmHWM: the process's peak RSS
	BaseKiB int     `json:"base_kib"`
	// CPUMicros is the machine's busy CPU over the publish
	// (pgcount.MachineCPU): the publisher's and PostgreSQL's.
	CPUMicros int64 `json:"cpu_micros"`
}

func (p publishRun) rate() float64 { return float64(p.Jobs) / p.Seconds }

func benchFollowers(ctx context.Context, r *report, dbURL, sizeList string) error {
	var sizes []int
	for _, f := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-followers: %q is not a follower count", f)
		}
		sizes = append(sizes, n)
	}
	if r.quick {
		sizes = []int{1_000, 10_000}
	}
	riverBin, riverErr := buildRiver(ctx)
	if riverBin != "" {
		defer os.RemoveAll(strings.TrimSuffix(riverBin, "/riverbench"))
	}
	t := &table{
		title:   "A post to many followers on PostgreSQL (issue 15)",
		command: "go run ./test/bench/heraldbench -only followers (-followers 10000,100000,1000000)",
		intro: "One post published to N followers with personal inboxes (no shared inbox: N jobs) by a child process (application.Publish over the PostgreSQL stores: " +
			"followers read 1,000 a page (their URIs, then their inboxes), each page enqueued (by COPY) while the next is built, two pages in flight, and recorded in the fan-out record in page order; " +
			"no engine runs, so the jobs stay queued); " +
			"then N no-payload jobs inserted by River v0.51.2's InsertManyFast, 1,000 a call, in the same run and database. Bytes on disk: pg_total_relation_size of jobs and job_activities " +
			"(tables, TOAST and indexes) over the jobs, with the bodies table (the activity once) beside it. " +
			"CPU per job: the machine's busy time (/proc/stat, every process: the publisher or River and PostgreSQL) over the publish or the inserts, per job; " +
			"on this machine's 2 cores, 2 s of CPU a second is the ceiling on jobs/s that it sets. " +
			"Goals at 1,000,000: Herald ≥ 1.2× River's jobs/s, peak RSS of the publishing process ≤ 150 MiB, ≤ 250 B per queued job plus the body once.",
		header: []string{"followers", "Herald jobs/s", "River jobs/s", "Herald / River", "peak RSS (publisher)", "jobs table per job", "bodies table",
			"CPU per job, Herald / River (µs)"},
	}
	var xs, hwm []float64
	for _, n := range sizes {
		u, cleanup, err := freshSchema(ctx, dbURL)
		if err != nil {
			return err
		}
		row, hw, err := followersRow(ctx, u, n, riverBin, riverErr, dbURL)
		cleanup()
		if err != nil {
			return fmt.Errorf("%d followers: %w", n, err)
		}
		fmt.Fprintf(os.Stderr, "   followers %d: %s\n", n, strings.Join(row, " | "))
		t.rows = append(t.rows, row)
		xs, hwm = append(xs, float64(n)), append(hwm, float64(hw)/1024)
	}
	t.plot = r.svg("followers-rss.svg", lineChart("Peak RSS of the publishing process", "followers (log)", "MiB",
		[]series{{name: "peak RSS", xs: xs, ys: hwm}}))
	t.notes = append(t.notes, "Figures taken while other work shared the 2-core machine must be taken again on a quiet one.")
	r.add(t)
	return nil
}

func followersRow(ctx context.Context, u string, n int, riverBin string, riverErr error, dbURL string) ([]string, int, error) {
	pool, err := postgres.Connect(ctx, u)
	if err != nil {
		return nil, 0, err
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		return nil, 0, err
	}
	if err := postgres.EnsureIndexes(ctx, pool); err != nil {
		return nil, 0, err
	}
	if err := seedFanFollowers(ctx, pool, n); err != nil {
		return nil, 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, 0, err
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, self, "publish", u)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("publish: %v: %s", err, strings.TrimSpace(errOut.String()))
	}
	var p publishRun
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		return nil, 0, fmt.Errorf("publish printed %q: %v", out.String(), err)
	}
	if p.Jobs != n {
		return nil, 0, fmt.Errorf("published %d jobs for %d followers", p.Jobs, n)
	}
	var jobsBytes, bodiesBytes int64
	var jobs int
	if err := pool.QueryRow(ctx, `SELECT pg_total_relation_size('jobs') + pg_total_relation_size('job_activities'), pg_total_relation_size('bodies'), (SELECT count(*) FROM jobs)`).Scan(&jobsBytes, &bodiesBytes, &jobs); err != nil {
		return nil, 0, err
	}
	parts, err := relationBytes(ctx, pool, jobs)
	if err != nil {
		parts = "not measured: " + err.Error()
	}
	fmt.Fprintf(os.Stderr, "   followers %d: bytes a job by relation: %s\n", n, parts)
	riverRate, vs, riverCPU := "not measured", "–", "–"
	if riverErr != nil {
		riverRate = "not measured: " + riverErr.Error()
	} else {
		rv, rcpu, err := runRiverInsert(ctx, riverBin, dbURL, n)
		if err != nil {
			riverRate = "failed: " + err.Error()
		} else {
			riverRate = fmt.Sprintf("%.0f", rv)
			vs = ratio(p.rate(), rv)
			riverCPU = cpuCell(rcpu, n)
		}
	}
	per := float64(jobsBytes) / float64(jobs)
	return []string{fmt.Sprint(n), fmt.Sprintf("%.0f", p.rate()), riverRate, vs, mib(p.HWMKiB) + " (" + ratio(float64(p.HWMKiB)/1024, 150) + " of 150 MiB)",
		fmt.Sprintf("%.0f B (%s of 250 B)", per, ratio(per, 250)), fmt.Sprintf("%d kB", bodiesBytes/1024),
		cpuCell(p.CPUMicros, n) + " / " + riverCPU}, p.HWMKiB, nil
}

// seedFanFollowers makes n cached remote actors with personal inboxes on
// 1,000 hosts, each an accepted follower of fanActor.
func seedFanFollowers(ctx context.Context, pool *pgxpool.Pool, n int) error {
	if _, err := pool.Exec(ctx, `
INSERT INTO foreign_avatars (actor_uri, public_key_id, public_key_pem, inbox, preferred_username, host, fetched_at)
SELECT a, a || '#main-key', pem, a || '/inbox', 'u' || i, h, now()
FROM (SELECT i, 'https://h' || lpad((i % 1000)::text, 4, '0') || '.example/users/u' || i AS a,
             'h' || lpad((i % 1000)::text, 4, '0') || '.example' AS h,
             -- as long as a 2048-bit RSA key's PEM (about 450 bytes), as a
             -- cached actor carries one
             E'-----BEGIN PUBLIC KEY-----\n' || repeat(md5(i::text) || md5((i + 1)::text), 6) || E'\n-----END PUBLIC KEY-----\n' AS pem
      FROM generate_series(1, $1::int) i) s`, n); err != nil {
		return fmt.Errorf("seed actors: %w", err)
	}
	if _, err := pool.Exec(ctx, `
INSERT INTO followers (follower_uri, followed_uri, state, activity_id, created_at, updated_at)
SELECT actor_uri, $1, 'accepted', actor_uri || '#follow', now(), now() FROM foreign_avatars`, fanActor); err != nil {
		return fmt.Errorf("seed followers: %w", err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE followers`); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE foreign_avatars`); err != nil {
		return err
	}
	return nil
}

// runRiverInsert inserts n no-payload jobs with River and returns jobs/s
// and the machine's busy CPU over the inserts, in µs.
func runRiverInsert(ctx context.Context, bin, dbURL string, n int) (rate float64, cpuMicros int64, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-database-url", dbURL, "-insert-only", "-jobs", fmt.Sprint(n), "-payload-bytes", "0")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
	}
	var res struct {
		InsertPerSecond float64 `json:"insert_per_second"`
		CPUMicros       float64 `json:"cpu_micros"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return 0, 0, fmt.Errorf("river printed %q: %v", out.String(), err)
	}
	return res.InsertPerSecond, int64(res.CPUMicros), nil
}

// publishMain is the child of benchFollowers: one post from fanActor, timed,
// then its peak RSS.
func publishMain(args []string) int {
	if err := publishOnce(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "publish:", err)
		return 1
	}
	return 0
}

func publishOnce(u string) error {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	stores, closeStores, err := bootstrap.OpenStores(ctx, bootstrap.Config{Store: bootstrap.StorePostgres, DatabaseURL: bootstrap.Secret(u), Domain: fanDomain}, log)
	if err != nil {
		return err
	}
	defer closeStores()
	clock, ids := system.Clock{}, system.IDs{}
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		return err
	}
	if err := stores.Actors.CreateAvatar(ctx, domain.Avatar{ID: ids.NewID(), RootUserID: "bench-user", Name: "fan", Keys: kp, CreatedAt: clock.Now()}); err != nil {
		return err
	}
	policy, _ := domain.NewNamePolicy("instance", nil)
	app := application.New(application.Deps{
		Users: stores.Users, Tokens: stores.Tokens, Actors: stores.Actors, Names: stores.Names, Followers: stores.Followers,
		FanOuts: stores.FanOuts, Foreign: stores.Foreign, Posts: stores.Posts, HTML: sanitizer.NewHTMLSanitizer(), Jobs: stores.Jobs,
		Passwords: security.Bcrypt{Cost: 4}, Keys: security.RSAKeys{}, Clock: clock, IDs: ids, Log: log,
		URLs: application.NewURLs(fanDomain), NamePolicy: policy, InstanceActor: "instance",
	})
	runtime.GC()
	base := rssKiB(0)
	// HERALDBENCH_PUBLISH_PROFILE: a CPU profile of this process over the
	// publish (go tool pprof), to see where the publisher's share goes.
	stopProfile, err := startCPUProfile(os.Getenv("HERALDBENCH_PUBLISH_PROFILE"))
	if err != nil {
		return err
	}
	defer stopProfile()
	start, cpu0 := time.Now(), pgcount.MachineCPU()
	res, err := app.Publish.Handle(ctx, application.Publish{UserID: "bench-user", As: "fan", Content: strings.Repeat("a post to many followers ", 40), Visibility: domain.VisibilityPublic})
	took, cpu := time.Since(start), pgcount.MachineCPU().Since(cpu0)
	if err != nil {
		return err
	}
	hwm, _ := strconv.Atoi(strings.Fields(strings.TrimSuffix(grepFile("/proc/self/status", "VmHWM"), "kB") + " 0")[0])
	return json.NewEncoder(os.Stdout).Encode(publishRun{Jobs: res.Queued, Seconds: took.Seconds(), HWMKiB: hwm, BaseKiB: base,
		CPUMicros: cpu.Busy.Microseconds()})
}

// relationBytes is where the queue's bytes on disk go, per job: the heap
// (with TOAST) and each index of jobs and job_activities.
func relationBytes(ctx context.Context, pool *pgxpool.Pool, jobs int) (string, error) {
	rows, err := pool.Query(ctx, `
SELECT c.relname, pg_table_size(c.oid) FROM pg_class c WHERE c.relname IN ('jobs', 'job_activities') AND c.relnamespace = current_schema()::regnamespace
UNION ALL
SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
WHERE t.relname IN ('jobs', 'job_activities') AND t.relnamespace = current_schema()::regnamespace
ORDER BY 2 DESC`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var name string
		var size int64
		if err := rows.Scan(&name, &size); err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("%s %.0f", name, float64(size)/float64(max(jobs, 1))))
	}
	return strings.Join(parts, ", "), rows.Err()
}
