package main

import "github.com/heraldfed/herald/bootstrap"

func migrateUpCommand() *command {
	c := newCommand("migrate up", "apply every migration of this build, then ensure the indexes "+
		"(sqlite: refused while a server holds the data directory; it migrated at its start)")
	c.run = func(x *call) int {
		if err := bootstrap.MigrateUp(x.ctx, x.cfg, x.log); err != nil {
			return x.fail(err)
		}
		return printVersion(x)
	}
	return c
}
