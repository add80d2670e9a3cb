package main

import (
	"fmt"

	"github.com/heraldfed/herald/bootstrap"
)

func instancesLiftCommand() *command {
	c := newCommand("instances lift", "lift the quarantine of HOST: its waiting jobs are due at once")
	c.arg = "HOST"
	c.run = func(x *call) int {
		r, err := bootstrap.LiftQuarantine(x.ctx, x.cfg, x.log, x.arg)
		if err != nil {
			return x.fail(fmt.Errorf("lift %s: %w", x.arg, err))
		}
		fmt.Fprintf(x.stdout, "%s: not quarantined now; %d waiting jobs are due (the servers pick them up within 5 s)\n", r.Instance.Host, r.Resumed)
		return exitOK
	}
	return c
}
