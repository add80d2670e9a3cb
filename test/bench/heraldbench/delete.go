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

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/bootstrap"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/bench/pgcount"
)

// Issue 31: a persona's deletion sends Delete{Person} to every follower
// through the same streamed, recorded fan-out a post uses, then removes
// its follows. Measured as the followers rows measure a post: on
// PostgreSQL, N followers with personal inboxes (N jobs), by a child
// process (the "delete-persona" subcommand) so its peak RSS is the
// deleting process's alone.

type deleteRun struct {
	Jobs int `json:"jobs"`
	// FanOutSeconds is the fan-out alone: its record's creation to its
	// last page recorded.
	FanOutSeconds float64 `json:"fan_out_seconds"`
	// Seconds is the whole pass: the Delete out, then the persona's
	// follows removed.
	Seconds   float64 `json:"seconds"`
	Followers int     `json:"followers_left"`
	HWMKiB    int     `json:"hwm_kib"`
	CPUMicros int64   `json:"cpu_micros"`
}

func benchDelete(ctx context.Context, r *report, dbURL, sizeList string) error {
	var sizes []int
	for _, f := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-delete-followers: %q is not a follower count", f)
		}
		sizes = append(sizes, n)
	}
	if r.quick {
		sizes = []int{1_000}
	}
	t := &table{
		title:   "Deleting a persona with many followers on PostgreSQL (issue 31)",
		command: "go run ./test/bench/heraldbench -only delete (-delete-followers 100000)",
		intro: "A persona with N followers with personal inboxes (no shared inbox: N jobs) is deleted by a child process over the PostgreSQL stores " +
			"(application.DeletePersona, then one pass of PersonaDeletions: Delete{Person} through the same streamed, recorded fan-out a post uses " +
			"(the followers rows above), then the persona's follows removed; no engine runs, so the jobs stay queued and the key stays). " +
			"Fan-out: the fan-out record's creation to its last page recorded; pass: the whole pass. " +
			"CPU per job: the machine's busy time (/proc/stat: the deleting process and PostgreSQL) over the pass, per job.",
		header: []string{"followers", "fan-out jobs/s", "fan-out", "whole pass (with the follows removed)", "peak RSS (deleting process)", "CPU per job (µs)"},
	}
	for _, n := range sizes {
		u, cleanup, err := freshSchema(ctx, dbURL)
		if err != nil {
			return err
		}
		row, err := deleteRow(ctx, u, n)
		cleanup()
		if err != nil {
			return fmt.Errorf("%d followers: %w", n, err)
		}
		fmt.Fprintf(os.Stderr, "   delete %d: %s\n", n, strings.Join(row, " | "))
		t.rows = append(t.rows, row)
	}
	t.notes = append(t.notes, "Figures taken while other work shared the 2-core machine must be taken again on a quiet one.")
	r.add(t)
	return nil
}

func deleteRow(ctx context.Context, u string, n int) ([]string, error) {
	pool, err := postgres.Connect(ctx, u)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool, slog.New(slog.DiscardHandler)); err != nil {
		return nil, err
	}
	if err := postgres.EnsureIndexes(ctx, pool); err != nil {
		return nil, err
	}
	if err := seedFanFollowers(ctx, pool, n); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, self, "delete-persona", u)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("delete-persona: %v: %s", err, strings.TrimSpace(errOut.String()))
	}
	var d deleteRun
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		return nil, fmt.Errorf("delete-persona printed %q: %v", out.String(), err)
	}
	if d.Jobs != n || d.Followers != 0 {
		return nil, fmt.Errorf("the Delete queued %d jobs for %d followers, %d follows left", d.Jobs, n, d.Followers)
	}
	return []string{fmt.Sprint(n), fmt.Sprintf("%.0f", float64(n)/d.FanOutSeconds), seconds(d.FanOutSeconds), seconds(d.Seconds),
		mib(d.HWMKiB), cpuCell(d.CPUMicros, n)}, nil
}

func seconds(s float64) string { return fmt.Sprintf("%.2f s", s) }

// deletePersonaMain is the child of benchDelete: fanActor's persona
// deleted and its deletion's pass run once, timed, then its peak RSS.
func deletePersonaMain(args []string) int {
	if err := deleteOnce(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "delete-persona:", err)
		return 1
	}
	return 0
}

func deleteOnce(u string) error {
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
	a := domain.Avatar{ID: ids.NewID(), RootUserID: "bench-user", Name: "fan", Keys: kp, CreatedAt: clock.Now()}
	rn, err := domain.NewReservedName(a.Name, domain.NameKindPersona, a.ID, a.CreatedAt)
	if err != nil {
		return err
	}
	if err := stores.Names.Reserve(ctx, rn); err != nil {
		return err
	}
	if err := stores.Actors.CreateAvatar(ctx, a); err != nil {
		return err
	}
	policy, _ := domain.NewNamePolicy("instance", nil)
	app := application.New(application.Deps{
		Users: stores.Users, Tokens: stores.Tokens, Actors: stores.Actors, Names: stores.Names, Followers: stores.Followers,
		FanOuts: stores.FanOuts, Foreign: stores.Foreign, Posts: stores.Posts, HTML: sanitizer.NewHTMLSanitizer(), Jobs: stores.Jobs,
		JobAdmin: stores.JobAdmin, Passwords: security.Bcrypt{Cost: 4}, Keys: security.RSAKeys{}, Clock: clock, IDs: ids, Log: log,
		URLs: application.NewURLs(fanDomain), NamePolicy: policy, InstanceActor: "instance",
	})
	runtime.GC()
	start, cpu0 := time.Now(), pgcount.MachineCPU()
	if _, err := app.DeletePersona.Handle(ctx, application.DeletePersona{Name: "fan", ByOperator: true}); err != nil {
		return err
	}
	if _, err := app.PersonaDeletions.Finish(ctx); err != nil {
		return err
	}
	took, cpu := time.Since(start), pgcount.MachineCPU().Since(cpu0)
	hwm, _ := strconv.Atoi(strings.Fields(strings.TrimSuffix(grepFile("/proc/self/status", "VmHWM"), "kB") + " 0")[0])
	f, err := stores.FanOuts.Get(ctx, fanActor+"#delete")
	if err != nil {
		return fmt.Errorf("the Delete's fan-out record: %w", err)
	}
	if !f.Done {
		return fmt.Errorf("the Delete's fan-out is not done after the pass: %+v", f)
	}
	counts, err := stores.JobAdmin.Counts(ctx)
	if err != nil {
		return err
	}
	left, err := stores.Followers.CountFollowers(ctx, fanActor, domain.FollowAccepted)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(deleteRun{Jobs: counts[domain.JobQueued], FanOutSeconds: f.UpdatedAt.Sub(f.CreatedAt).Seconds(),
		Seconds: took.Seconds(), Followers: left, HWMKiB: hwm, CPUMicros: cpu.Busy.Microseconds()})
}
