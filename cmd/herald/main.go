// Command herald runs the Herald federation server and its maintenance
// commands.
//
//	herald [serve] [flags]            run the server (the default)
//	herald migrate up|down|version    manage the store's schema
//	herald help                       list commands and settings
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/heraldfed/herald/bootstrap"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "herald: unknown command %q\n\n", cmd)
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: herald [command] [flags]

commands:
  serve      run the server (default)
  help       this text

settings (environment variable, or the flag of the same name in kebab case):`)
	for _, s := range bootstrap.Settings() {
		def := s[1]
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  %-30s --%-30s default %s\n      %s\n", s[0], bootstrap.FlagName(s[0]), def, s[2])
	}
}

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, err := bootstrap.LoadConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n", err)
		return 2
	}
	log := bootstrap.NewLogger(cfg, os.Stderr)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv, cleanup, err := bootstrap.InitializeServer(ctx, cfg, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	defer cleanup()
	if err := srv.Run(ctx); err != nil {
		log.Error("server stopped with an error", "err", err)
		return 1
	}
	return 0
}
