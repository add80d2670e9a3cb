package main

import "github.com/heraldfed/herald/bootstrap"

func migrateDownCommand() *command {
	c := newCommand("migrate down", "revert the last --steps migrations (read each down step's comment in migrations/ first; "+
		"on sqlite every down step drops data: take a backup first)")
	steps := atLeastOne(1)
	c.flags.Var(&steps, "steps", "how many migrations to revert, a `N` of 1 or more")
	c.run = func(x *call) int {
		if err := bootstrap.MigrateDown(x.ctx, x.cfg, int(steps), x.log); err != nil {
			return x.fail(err)
		}
		return printVersion(x)
	}
	return c
}
