package main

import (
	"fmt"

	"github.com/heraldfed/herald/bootstrap"
)

func namesReserveCommand() *command {
	c := newCommand("names reserve", "reserve NAME as a system name, so no persona or group can take it")
	c.arg = "NAME"
	c.run = func(x *call) int {
		n, err := bootstrap.ReserveName(x.ctx, x.cfg, x.log, x.arg)
		if err != nil {
			return x.fail(fmt.Errorf("reserve %q: %w", x.arg, err))
		}
		fmt.Fprintf(x.stdout, "reserved %s as a system name\n", n.Name)
		return exitOK
	}
	return c
}
