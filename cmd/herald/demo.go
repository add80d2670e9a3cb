package main

import (
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

func demoCommand() *command {
	c := newCommand("demo", "run the server plus a demo fan-out to four loopback \"remote servers\" (fast, slow, failing, gone), "+
		"to watch /admin and /metrics move; on the memory store unless HERALD_STORE says otherwise, so demo data never lands in a real instance")
	c.defaults = map[string]string{"HERALD_STORE": bootstrap.StoreMemory}
	posts := atLeastOne(40)
	every := positive(2 * time.Second)
	c.flags.Var(&posts, "demo-posts", "how many posts the demo publishes, a `N` of 1 or more")
	c.flags.Var(&every, "demo-every", "time between demo posts, a `duration` such as 2s")
	c.run = func(x *call) int {
		ctx, stop := signalled(x.ctx)
		defer stop()
		if err := bootstrap.RunDemo(ctx, x.cfg, x.log, x.stdout, bootstrap.DemoOptions{Posts: int(posts), Every: time.Duration(every)}); err != nil {
			return x.fail(err)
		}
		return exitOK
	}
	return c
}
