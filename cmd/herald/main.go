// Command herald runs the Herald federation server and its maintenance
// commands. `herald help` lists them; `herald COMMAND -h` explains one.
// Every command reads the configuration of bootstrap.LoadConfig from the
// environment and from flags of the same names in kebab case.
//
// Each command is one file: its words, help, flags (one flag.FlagSet per
// command, the configuration's flags defined on it by
// bootstrap.ConfigFlags) and what it runs. command.go parses the command
// line for all of them.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

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

// commands builds every command, in the order `herald help` lists them.
// They are built anew for each run: a FlagSet holds what it parsed.
func commands() []*command {
	return []*command{
		serveCommand(), demoCommand(), backupCommand(),
		migrateUpCommand(), migrateDownCommand(), migrateVersionCommand(),
		jobsStatsCommand(), instancesListCommand(), instancesLiftCommand(),
		namesReserveCommand(), namesReleaseCommand(), personasDeleteCommand(),
		domainBlocksListCommand(), domainBlocksImportCommand(), keysRotateCommand(), domainBlocksExportCommand(),
	}
}

// call is one invocation: what the command needs to run.
type call struct {
	ctx            context.Context
	cfg            bootstrap.Config
	arg            string // the positional argument, "" for none
	stdout, stderr io.Writer
	log            *slog.Logger
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

// fail reports a command that ran and failed.
func (c *call) fail(err error) int {
	fmt.Fprintf(c.stderr, "herald: %v\n", err)
	return exitFail
}
