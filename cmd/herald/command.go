package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

// command is one CLI command: its words, the positional argument it takes,
// its own flags, and what it runs.
type command struct {
	words []string
	arg   string // name of the positional argument, "" for none
	// argOptional: the command runs without its argument too.
	argOptional bool
	help        string
	// flags holds the command's own flags; before parsing, run defines
	// every configuration setting on it too (bootstrap.ConfigFlags).
	flags *flag.FlagSet
	run   func(c *call) int
	// defaults replace settings' defaults for this command (an environment
	// variable or a flag still wins).
	defaults map[string]string
}

// newCommand is a command named by its words ("migrate down"), with an
// empty FlagSet for its own flags.
func newCommand(name, help string) *command {
	return &command{words: strings.Fields(name), help: help, flags: flag.NewFlagSet("herald "+name, flag.ContinueOnError)}
}

func (c *command) name() string { return strings.Join(c.words, " ") }

// synopsis is the name with the positional argument.
func (c *command) synopsis() string {
	switch {
	case c.argOptional:
		return c.name() + " [" + c.arg + "]"
	case c.arg != "":
		return c.name() + " " + c.arg
	}
	return c.name()
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
		args = append([]string{"serve"}, args...)
	}
	cmds := commands()
	if isHelp(args[0]) || args[0] == "help" && len(args) == 1 {
		usage(stdout, cmds)
		return exitOK
	}
	help := args[0] == "help" // herald help COMMAND
	if help {
		args = args[1:]
	}
	cmd, rest, err := find(cmds, args)
	if err != nil {
		fmt.Fprintf(stderr, "herald: %v\n\n", err)
		usage(stderr, cmds)
		return exitUsage
	}
	if help {
		cmd.usage(stdout)
		return exitOK
	}
	return cmd.execute(ctx, rest, getenv, stdout, stderr)
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// find matches the command whose words begin args.
func find(cmds []*command, args []string) (*command, []string, error) {
	for _, c := range cmds {
		if len(args) >= len(c.words) && strings.Join(args[:len(c.words)], " ") == c.name() {
			return c, args[len(c.words):], nil
		}
	}
	var group []string
	for _, c := range cmds {
		if len(c.words) > 1 && c.words[0] == args[0] {
			group = append(group, c.name())
		}
	}
	if len(group) > 0 {
		return nil, nil, fmt.Errorf("%q needs a subcommand: %s", args[0], strings.Join(group, ", "))
	}
	return nil, nil, fmt.Errorf("unknown command %q", strings.Join(args[:min(2, len(args))], " "))
}

// execute parses the command's flags, its argument and the configuration,
// then runs it.
func (c *command) execute(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	own := c.ownFlags()
	load := bootstrap.ConfigFlags(c.flags)
	// Errors and help are printed here, once, not by the FlagSet.
	c.flags.SetOutput(io.Discard)
	c.flags.Usage = func() {}
	pos, err := parse(c.flags, args)
	if errors.Is(err, flag.ErrHelp) {
		c.usageWith(stdout, own)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "herald %s: %v (`herald %s -h` lists its flags)\n", c.name(), err, c.name())
		return exitUsage
	}
	x := &call{ctx: ctx, stdout: stdout, stderr: stderr}
	switch {
	case len(pos) > 1 || len(pos) == 1 && c.arg == "":
		extra := pos
		if c.arg != "" {
			extra = pos[1:]
		}
		fmt.Fprintf(stderr, "herald %s: unexpected arguments: %v\n", c.name(), extra)
		return exitUsage
	case len(pos) == 1:
		x.arg = pos[0]
	case c.arg != "" && !c.argOptional:
		fmt.Fprintf(stderr, "herald %s: missing %s\n\n", c.name(), c.arg)
		c.usageWith(stderr, own)
		return exitUsage
	}
	if len(c.defaults) > 0 {
		getenv = withDefaults(getenv, c.defaults)
	}
	if x.cfg, err = load(getenv); err != nil {
		fmt.Fprintf(stderr, "herald %s: %v\n", c.name(), err)
		return exitUsage
	}
	x.log = logger(x.cfg, stderr)
	return c.run(x)
}

// parse parses flags and positional arguments in any order (`herald
// domain-blocks import FILE --dry-run` as well as `--dry-run FILE`), as
// the flag package alone does not: it stops at the first argument that
// is not a flag. After "--" every argument is positional.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
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

// ownFlags are the command's own flags (defined before the configuration's).
func (c *command) ownFlags() []*flag.Flag {
	var fs []*flag.Flag
	c.flags.VisitAll(func(f *flag.Flag) { fs = append(fs, f) })
	return fs
}

func (c *command) usage(w io.Writer) { c.usageWith(w, c.ownFlags()) }

func (c *command) usageWith(w io.Writer, own []*flag.Flag) {
	fmt.Fprintf(w, "usage: herald %s [flags]\n\n%s\n", c.synopsis(), c.help)
	if len(own) > 0 {
		fmt.Fprintln(w, "\nflags of this command:")
		for _, f := range own {
			kind, text := flag.UnquoteUsage(f)
			name := "--" + f.Name
			if kind != "" {
				name += " " + kind
			}
			fmt.Fprintf(w, "  %-28s %s (default %s)\n", name, text, f.DefValue)
		}
	}
	fmt.Fprintln(w, "\nconfiguration: the settings of `herald help`, as environment variables or flags (a flag wins).")
	if c.name() != "serve" && c.name() != "demo" {
		fmt.Fprintln(w, "It opens the configured store (HERALD_STORE, HERALD_DATA_DIR, DATABASE_URL, MONGODB_URI) without starting the engine.")
	}
}

func usage(w io.Writer, cmds []*command) {
	fmt.Fprintln(w, "usage: herald [command] [flags]\n\ncommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-28s %s\n", c.synopsis(), c.help)
	}
	fmt.Fprintln(w, "  help [COMMAND]               this text, or one command's (as `herald COMMAND -h`)")
	fmt.Fprintln(w, "\nsettings (environment variable, or the flag of the same name in kebab case):")
	for _, s := range bootstrap.Settings() {
		def := s[1]
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  %-30s --%-30s default %s\n      %s\n", s[0], bootstrap.FlagName(s[0]), def, s[2])
	}
}

// atLeastOne is a whole-number flag of 1 or more.
type atLeastOne int

func (n *atLeastOne) String() string { return strconv.Itoa(int(*n)) }

func (n *atLeastOne) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return errors.New("want a whole number of 1 or more")
	}
	*n = atLeastOne(v)
	return nil
}

// positive is a duration flag above zero.
type positive time.Duration

func (d *positive) String() string { return time.Duration(*d).String() }

func (d *positive) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return errors.New("want a positive duration such as 2s")
	}
	*d = positive(v)
	return nil
}
