// Command herald runs the Herald federation server and its maintenance
// commands. `herald help` lists them; `herald COMMAND --help` explains one.
// Every command reads the configuration of bootstrap.LoadConfig from the
// environment and from flags of the same names in kebab case.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // the command ran and failed
	exitUsage = 2 // the command line or the configuration is wrong
)

// command is one CLI command: its words, a positional argument it takes,
// its own flags, and what it does.
type command struct {
	words []string
	arg   string // name of the positional argument, "" for none
	// argOptional: the command runs without its argument too.
	argOptional bool
	flags       []cmdFlag
	help        string
	run         func(c *call) int
	// defaults replace settings' defaults for this command (an environment
	// variable or a flag still wins).
	defaults map[string]string
}

type cmdFlag struct {
	name, usage string
	boolean     bool
	def         string
}

// call is one invocation: what the command needs to run.
type call struct {
	ctx            context.Context
	cfg            bootstrap.Config
	arg            string
	flags          map[string]string
	stdout, stderr io.Writer
	log            *slog.Logger
}

var commands = []command{
	{words: []string{"serve"}, help: "run the server: HTTP API, operator page, delivery engine (the default command)", run: serve},
	{words: []string{"demo"}, help: "run the server plus a demo fan-out to four loopback \"remote servers\" (fast, slow, failing, gone), to watch /admin and /metrics move; on the memory store unless HERALD_STORE says otherwise, so demo data never lands in a real instance",
		flags: []cmdFlag{{name: "demo-posts", usage: "how many posts the demo publishes", def: "40"}, {name: "demo-every", usage: "time between demo posts", def: "2s"}}, run: demo,
		defaults: map[string]string{"HERALD_STORE": bootstrap.StoreMemory}},
	{words: []string{"backup"}, arg: "DEST", help: "copy the sqlite store's database, consistently, into the new or empty directory DEST while the server may run; restore: start with HERALD_DATA_DIR=DEST", run: backup},
	{words: []string{"migrate", "up"}, help: "apply every migration of this build, then ensure the indexes (sqlite: refused while a server holds the data directory; it migrated at its start)", run: migrateUp},
	{words: []string{"migrate", "down"}, help: "revert the last --steps migrations (read each down step's comment in migrations/ first; on sqlite every down step drops data: take a backup first)",
		flags: []cmdFlag{{name: "steps", usage: "how many migrations to revert", def: "1"}}, run: migrateDown},
	{words: []string{"migrate", "version"}, help: "print the applied schema version and the one this build needs", run: migrateVersion},
	{words: []string{"jobs", "stats"}, help: "print the delivery queue's counts by state and by host", run: jobsStats},
	{words: []string{"instances", "list"}, help: "list remote hosts with their circuit breaker state",
		flags: []cmdFlag{{name: "quarantined", usage: "only the quarantined hosts", boolean: true, def: "false"}}, run: instancesList},
	{words: []string{"instances", "lift"}, arg: "HOST", help: "lift the quarantine of HOST: its waiting jobs are due at once", run: instancesLift},
	{words: []string{"names", "reserve"}, arg: "NAME", help: "reserve NAME as a system name, so no persona or group can take it", run: namesReserve},
	{words: []string{"names", "release"}, arg: "NAME", help: "release a system name an operator had reserved (never the fixed list or the instance actor's)", run: namesRelease},
	{words: []string{"personas", "delete"}, arg: "NAME", help: "delete the persona NAME, whoever owns it: its actor answers 410 at once, its Delete goes to every follower (the servers send it within a minute), then its posts, follows and key go; the name stays reserved for good", run: personasDelete},
	{words: []string{"domain-blocks", "list"}, help: "list the domain blocks: domain, severity, since, public comment, reason", run: domainBlocksList},
	{words: []string{"domain-blocks", "import"}, arg: "FILE", help: "import a domain-block list in Mastodon's CSV format (#domain,#severity,...): blocks new domains, changes blocked ones where the list differs, and prints every line's fate; a suspension ends the domain's queued deliveries and follows",
		flags: []cmdFlag{{name: "dry-run", usage: "print what the import would change and change nothing", boolean: true, def: "false"}}, run: domainBlocksImport},
	{words: []string{"keys", "rotate"}, arg: "NAME", argOptional: true, help: "give the persona, group or instance actor NAME a new key pair, or every persona and group with --all (after a leak), and queue each one's Update{Person} with the new key, signed with the old, to its followers; the key id stays <actor>#main-key. The instance actor has no followers to tell: GoToSocial then refuses its signed fetches until its operator expires this domain's keys",
		flags: []cmdFlag{{name: "all", usage: "rotate every persona's and group's key", boolean: true, def: "false"}}, run: keysRotate},
	{words: []string{"domain-blocks", "export"}, arg: "FILE", argOptional: true, help: "write the domain blocks in Mastodon's CSV format to FILE, or to stdout without one, for other operators to import", run: domainBlocksExport},
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
		args = append([]string{"serve"}, args...)
	}
	if isHelp(args[0]) || args[0] == "help" {
		usage(stdout)
		return exitOK
	}
	cmd, rest, err := find(args)
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n\n", err)
		usage(stderr)
		return exitUsage
	}
	for _, a := range rest {
		if isHelp(a) {
			cmd.usage(stdout)
			return exitOK
		}
	}
	c := &call{ctx: ctx, stdout: stdout, stderr: stderr, flags: map[string]string{}}
	if cmd.arg != "" {
		missing := len(rest) == 0 || strings.HasPrefix(rest[0], "-")
		switch {
		case missing && !cmd.argOptional:
			fmt.Fprintf(stderr, "herald %s: missing %s\n\n", cmd.name(), cmd.arg)
			cmd.usage(stderr)
			return exitUsage
		case !missing:
			c.arg, rest = rest[0], rest[1:]
		}
	}
	if rest, err = cmd.takeFlags(rest, c.flags); err != nil {
		fmt.Fprintf(stderr, "herald %s: %v\n", cmd.name(), err)
		return exitUsage
	}
	if len(cmd.defaults) > 0 {
		getenv = withDefaults(getenv, cmd.defaults)
	}
	cfg, err := bootstrap.LoadConfig(rest, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "herald %s: %v\n", cmd.name(), err)
		return exitUsage
	}
	c.cfg = cfg
	c.log = logger(cfg, stderr)
	return cmd.run(c)
}

// withDefaults answers def[k] for a variable the environment leaves empty.
func withDefaults(getenv func(string) string, def map[string]string) func(string) string {
	return func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def[k]
	}
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// find matches the longest command whose words begin args.
func find(args []string) (command, []string, error) {
	for _, c := range commands {
		if len(args) >= len(c.words) && strings.Join(args[:len(c.words)], " ") == c.name() {
			return c, args[len(c.words):], nil
		}
	}
	var group []string
	for _, c := range commands {
		if len(c.words) > 1 && c.words[0] == args[0] {
			group = append(group, c.name())
		}
	}
	if len(group) > 0 {
		return command{}, nil, fmt.Errorf("%q needs a subcommand: %s", args[0], strings.Join(group, ", "))
	}
	return command{}, nil, fmt.Errorf("unknown command %q", strings.Join(args[:min(2, len(args))], " "))
}

func (c command) name() string { return strings.Join(c.words, " ") }

// takeFlags removes the command's own flags from args (the rest are
// configuration flags) and records them with their defaults.
func (c command) takeFlags(args []string, into map[string]string) ([]string, error) {
	for _, f := range c.flags {
		into[f.name] = f.def
	}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *cmdFlag
		for k := range c.flags {
			if strings.HasPrefix(a, "-") && c.flags[k].name == name {
				f = &c.flags[k]
			}
		}
		if f == nil {
			rest = append(rest, a)
			continue
		}
		switch {
		case hasValue:
		case f.boolean:
			value = "true"
		case i+1 < len(args):
			i++
			value = args[i]
		default:
			return nil, fmt.Errorf("--%s needs a value", f.name)
		}
		into[f.name] = value
	}
	return rest, nil
}

func (c command) usage(w io.Writer) {
	line := "herald " + c.name()
	switch {
	case c.argOptional:
		line += " [" + c.arg + "]"
	case c.arg != "":
		line += " " + c.arg
	}
	fmt.Fprintf(w, "usage: %s [flags]\n\n%s\n", line, c.help)
	if len(c.flags) > 0 {
		fmt.Fprintln(w, "\nflags of this command:")
		for _, f := range c.flags {
			fmt.Fprintf(w, "  --%-28s %s (default %s)\n", f.name, f.usage, f.def)
		}
	}
	fmt.Fprintln(w, "\nconfiguration: the settings of `herald help`, as environment variables or flags (a flag wins).")
	if c.name() != "serve" && c.name() != "demo" {
		fmt.Fprintln(w, "It opens the configured store (HERALD_STORE, HERALD_DATA_DIR, DATABASE_URL, MONGODB_URI) without starting the engine.")
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: herald [command] [flags]\n\ncommands:")
	for _, c := range commands {
		name := c.name()
		switch {
		case c.argOptional:
			name += " [" + c.arg + "]"
		case c.arg != "":
			name += " " + c.arg
		}
		fmt.Fprintf(w, "  %-28s %s\n", name, c.help)
	}
	fmt.Fprintln(w, "  help                         this text; `herald COMMAND --help` explains one command")
	fmt.Fprintln(w, "\nsettings (environment variable, or the flag of the same name in kebab case):")
	for _, s := range bootstrap.Settings() {
		def := s[1]
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  %-30s --%-30s default %s\n      %s\n", s[0], bootstrap.FlagName(s[0]), def, s[2])
	}
}

// logger is the process logger on a terminal or a file, and JSON on any
// other writer (tests).
func logger(cfg bootstrap.Config, w io.Writer) *slog.Logger {
	if f, ok := w.(*os.File); ok {
		return bootstrap.NewLogger(cfg, f)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// signalled ends ctx on SIGINT or SIGTERM. After the first signal the
// handler is removed, so a second one kills the process at once (an
// operator who does not want to wait for the grace period).
func signalled(ctx context.Context) (context.Context, func()) {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	return ctx, stop
}

func fail(c *call, err error) int {
	fmt.Fprintf(c.stderr, "herald: %v\n", err)
	return exitFail
}

func serve(c *call) int {
	ctx, stop := signalled(c.ctx)
	defer stop()
	srv, cleanup, err := bootstrap.InitializeServer(ctx, c.cfg, c.log)
	if err != nil {
		c.log.Error("cannot start", "err", err)
		return exitFail
	}
	defer cleanup()
	if err := srv.Run(ctx); err != nil {
		c.log.Error("server stopped with an error", "err", err)
		return exitFail
	}
	return exitOK
}

func demo(c *call) int {
	posts, err := strconv.Atoi(c.flags["demo-posts"])
	if err != nil || posts < 1 {
		fmt.Fprintf(c.stderr, "herald demo: --demo-posts=%q: want a whole number of 1 or more\n", c.flags["demo-posts"])
		return exitUsage
	}
	every, err := time.ParseDuration(c.flags["demo-every"])
	if err != nil || every <= 0 {
		fmt.Fprintf(c.stderr, "herald demo: --demo-every=%q: want a positive duration such as 2s\n", c.flags["demo-every"])
		return exitUsage
	}
	ctx, stop := signalled(c.ctx)
	defer stop()
	if err := bootstrap.RunDemo(ctx, c.cfg, c.log, c.stdout, bootstrap.DemoOptions{Posts: posts, Every: every}); err != nil {
		return fail(c, err)
	}
	return exitOK
}

func backup(c *call) int {
	res, err := bootstrap.Backup(c.ctx, c.cfg, c.arg)
	if err != nil {
		return fail(c, err)
	}
	fmt.Fprintf(c.stdout, "backed up %s into %s (%d bytes); restore: HERALD_DATA_DIR=%s herald serve\n",
		c.cfg.DataDir, res.Path, res.Bytes, filepath.Dir(res.Path))
	return exitOK
}

func migrateUp(c *call) int {
	if err := bootstrap.MigrateUp(c.ctx, c.cfg, c.log); err != nil {
		return fail(c, err)
	}
	return migrateVersion(c)
}

func migrateDown(c *call) int {
	steps, err := strconv.Atoi(c.flags["steps"])
	if err != nil || steps < 1 {
		fmt.Fprintf(c.stderr, "herald migrate down: --steps=%q: want a whole number of 1 or more\n", c.flags["steps"])
		return exitUsage
	}
	if err := bootstrap.MigrateDown(c.ctx, c.cfg, steps, c.log); err != nil {
		return fail(c, err)
	}
	return migrateVersion(c)
}

func migrateVersion(c *call) int {
	s, err := bootstrap.MigrationStatus(c.ctx, c.cfg)
	if err != nil {
		return fail(c, err)
	}
	state := "up to date"
	switch {
	case s.Dirty:
		state = "DIRTY: a migration failed half way; see docs/operations.md"
	case s.Version < s.Latest:
		state = "behind: run herald migrate up"
	case s.Version > s.Latest:
		state = "ahead of this build (a newer Herald migrated it)"
	}
	fmt.Fprintf(c.stdout, "schema version %d, this build needs %d: %s\n", s.Version, s.Latest, state)
	return exitOK
}

func jobsStats(c *call) int {
	op, cleanup, err := bootstrap.OpenOperator(c.ctx, c.cfg, c.log)
	if err != nil {
		return fail(c, err)
	}
	defer cleanup()
	s, err := op.Queue(c.ctx)
	if err != nil {
		return fail(c, err)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tJOBS")
	for _, st := range []string{"queued", "leased", "succeeded", "dead"} {
		for k, n := range s.ByState {
			if string(k) == st {
				fmt.Fprintf(tw, "%s\t%d\n", st, n)
			}
		}
	}
	fmt.Fprintf(tw, "total\t%d\n", s.Total)
	_ = tw.Flush()
	for _, g := range []struct {
		state string
		n     int
	}{{"queued", len(s.Queued)}, {"leased", len(s.Leased)}, {"dead", len(s.Dead)}} {
		if g.n == 0 {
			continue
		}
		fmt.Fprintf(c.stdout, "\n%s by host (largest first):\n", g.state)
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		rows := s.Queued
		switch g.state {
		case "leased":
			rows = s.Leased
		case "dead":
			rows = s.Dead
		}
		for _, r := range rows {
			fmt.Fprintf(tw, "  %s\t%d\n", r.Host, r.Count)
		}
		_ = tw.Flush()
	}
	return exitOK
}

func instancesList(c *call) int {
	only, err := strconv.ParseBool(c.flags["quarantined"])
	if err != nil {
		fmt.Fprintf(c.stderr, "herald instances list: --quarantined=%q: want true or false\n", c.flags["quarantined"])
		return exitUsage
	}
	op, cleanup, err := bootstrap.OpenOperator(c.ctx, c.cfg, c.log)
	if err != nil {
		return fail(c, err)
	}
	defer cleanup()
	vs, err := op.Instances(c.ctx, only)
	if err != nil {
		return fail(c, err)
	}
	if len(vs) == 0 {
		fmt.Fprintln(c.stdout, "no remote host recorded")
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tFAILURES\tLEVEL\tQUARANTINED UNTIL\tLAST ERROR")
	for _, v := range vs {
		until := "-"
		if v.Quarantined {
			until = v.QuarantinedUntil.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", v.Host, v.ConsecutiveFailures, v.QuarantineLevel, until, v.LastError)
	}
	_ = tw.Flush()
	return exitOK
}

func instancesLift(c *call) int {
	op, cleanup, err := bootstrap.OpenOperator(c.ctx, c.cfg, c.log)
	if err != nil {
		return fail(c, err)
	}
	defer cleanup()
	r, err := op.Lift(c.ctx, c.arg)
	if err != nil {
		return fail(c, fmt.Errorf("lift %s: %w", c.arg, err))
	}
	fmt.Fprintf(c.stdout, "%s: not quarantined now; %d waiting jobs are due (the servers pick them up within 5 s)\n", r.Instance.Host, r.Resumed)
	return exitOK
}

func namesReserve(c *call) int {
	op, cleanup, err := bootstrap.OpenOperator(c.ctx, c.cfg, c.log)
	if err != nil {
		return fail(c, err)
	}
	defer cleanup()
	n, err := op.ReserveName(c.ctx, c.arg)
	if err != nil {
		return fail(c, fmt.Errorf("reserve %q: %w", c.arg, err))
	}
	fmt.Fprintf(c.stdout, "reserved %s as a system name\n", n.Name)
	return exitOK
}

func namesRelease(c *call) int {
	op, cleanup, err := bootstrap.OpenOperator(c.ctx, c.cfg, c.log)
	if err != nil {
		return fail(c, err)
	}
	defer cleanup()
	if err := op.ReleaseName(c.ctx, c.arg); err != nil {
		return fail(c, fmt.Errorf("release %q: %w", c.arg, err))
	}
	fmt.Fprintf(c.stdout, "released %s\n", strings.ToLower(c.arg))
	return exitOK
}

func personasDelete(c *call) int {
	d, err := bootstrap.DeletePersona(c.ctx, c.cfg, c.log, c.arg)
	if err != nil {
		return fail(c, fmt.Errorf("delete persona %q: %w", c.arg, err))
	}
	fmt.Fprintf(c.stdout, "%s is deleted: %s answers 410; the servers send its Delete to its followers within a minute, then remove its posts, follows and key; the name stays reserved\n", d.Name, d.URI)
	return exitOK
}

func domainBlocksList(c *call) int {
	mod, cleanup, err := bootstrap.OpenModerator(c.ctx, c.cfg, c.log)
	if err != nil {
		return fail(c, err)
	}
	defer cleanup()
	bs, err := mod.Blocks(c.ctx)
	if err != nil {
		return fail(c, err)
	}
	if len(bs) == 0 {
		fmt.Fprintln(c.stdout, "no domain is blocked")
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tSEVERITY\tSINCE\tPUBLIC COMMENT\tREASON")
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Domain, b.Severity, b.CreatedAt.UTC().Format(time.RFC3339), oneLine(b.PublicComment), oneLine(b.Reason))
	}
	_ = tw.Flush()
	fmt.Fprintf(c.stdout, "%d blocks\n", len(bs))
	return exitOK
}

// oneLine keeps a comment on its row of a table.
func oneLine(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Join(strings.Fields(s), " ")
}

func domainBlocksImport(c *call) int {
	dry, err := strconv.ParseBool(c.flags["dry-run"])
	if err != nil {
		fmt.Fprintf(c.stderr, "herald domain-blocks import: --dry-run=%q: want true or false\n", c.flags["dry-run"])
		return exitUsage
	}
	in, err := os.Open(c.arg)
	if err != nil {
		return fail(c, err)
	}
	defer in.Close()
	res, err := bootstrap.ImportDomainBlocks(c.ctx, c.cfg, c.log, in, dry)
	// What it did, a line of the list per row (the unchanged ones only
	// counted), then the totals; also when it stopped half way.
	verb := map[bool][2]string{true: {"would add", "would change"}, false: {"added", "changed"}}[res.DryRun]
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	rows := 0
	row := func(line int, what, domain, detail string) {
		if rows == 0 {
			fmt.Fprintln(tw, "LINE\tCHANGE\tDOMAIN\tDETAIL")
		}
		rows++
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", line, what, domain, detail)
	}
	for _, a := range res.Added {
		row(a.Line, verb[0], a.Block.Domain, string(a.Block.Severity))
	}
	for _, ch := range res.Changed {
		row(ch.Line, verb[1], ch.Block.Domain, fmt.Sprintf("%s → %s", ch.Before.Severity, ch.Block.Severity))
	}
	for _, l := range res.Skipped {
		row(l.Line, "skipped", l.Domain, l.Why)
	}
	for _, l := range res.Invalid {
		row(l.Line, "invalid", l.Domain, l.Why)
	}
	_ = tw.Flush()
	if len(res.IgnoredColumns) > 0 {
		fmt.Fprintf(c.stdout, "columns not read: %s\n", strings.Join(res.IgnoredColumns, ", "))
	}
	if err != nil {
		return fail(c, fmt.Errorf("import %s: %w", c.arg, err))
	}
	fmt.Fprintf(c.stdout, "%d %s, %d %s, %d unchanged, %d skipped, %d invalid\n", len(res.Added), verb[0], len(res.Changed), verb[1],
		len(res.Unchanged), len(res.Skipped), len(res.Invalid))
	switch {
	case res.DryRun:
		fmt.Fprintln(c.stdout, "dry run: nothing was changed")
	case len(res.Added)+len(res.Changed) > 0:
		fmt.Fprintf(c.stdout, "suspensions ended %d queued deliveries and removed %d follows; the servers apply the list within 10 s\n",
			res.JobsEnded, res.FollowsRemoved)
	}
	return exitOK
}

func domainBlocksExport(c *call) int {
	mod, cleanup, err := bootstrap.OpenModerator(c.ctx, c.cfg, c.log)
	if err != nil {
		return fail(c, err)
	}
	defer cleanup()
	if c.arg == "" {
		if _, err := mod.ExportBlocks.Handle(c.ctx, c.stdout); err != nil {
			return fail(c, err)
		}
		return exitOK
	}
	var buf bytes.Buffer
	n, err := mod.ExportBlocks.Handle(c.ctx, &buf)
	if err != nil {
		return fail(c, err)
	}
	if err := os.WriteFile(c.arg, buf.Bytes(), 0o644); err != nil {
		return fail(c, err)
	}
	fmt.Fprintf(c.stdout, "wrote %d blocks to %s\n", n, c.arg)
	return exitOK
}

func keysRotate(c *call) int {
	all, err := strconv.ParseBool(c.flags["all"])
	if err != nil {
		fmt.Fprintf(c.stderr, "herald keys rotate: --all=%q: want true or false\n", c.flags["all"])
		return exitUsage
	}
	if all == (c.arg != "") {
		fmt.Fprintln(c.stderr, "herald keys rotate: name one actor, or pass --all (not both)")
		return exitUsage
	}
	var names []string
	if !all {
		names = []string{c.arg}
	}
	done, err := bootstrap.RotateKeys(c.ctx, c.cfg, c.log, names)
	for _, r := range done {
		fmt.Fprintf(c.stdout, "%s: new key under %s; Update queued to its followers (%d jobs)\n", r.Actor, r.KeyID, r.Queued)
	}
	if err != nil {
		return fail(c, fmt.Errorf("rotate keys: %w", err))
	}
	fmt.Fprintf(c.stdout, "%d keys rotated\n", len(done))
	return exitOK
}
