package main

import (
	"fmt"

	"github.com/heraldfed/herald/bootstrap"
)

func migrateVersionCommand() *command {
	c := newCommand("migrate version", "print the applied schema version and the one this build needs")
	c.run = printVersion
	return c
}

// printVersion says where the schema stands (migrate up and down end
// with it too).
func printVersion(x *call) int {
	s, err := bootstrap.MigrationStatus(x.ctx, x.cfg)
	if err != nil {
		return x.fail(err)
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
	fmt.Fprintf(x.stdout, "schema version %d, this build needs %d: %s\n", s.Version, s.Latest, state)
	return exitOK
}
