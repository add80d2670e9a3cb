package main

import (
	"fmt"

	"github.com/heraldfed/herald/bootstrap"
)

func personasDeleteCommand() *command {
	c := newCommand("personas delete", "delete the persona NAME, whoever owns it: its actor answers 410 at once, "+
		"its Delete goes to every follower (the servers send it within a minute), then its posts, follows and key go; the name stays reserved for good")
	c.arg = "NAME"
	c.run = func(x *call) int {
		d, err := bootstrap.DeletePersona(x.ctx, x.cfg, x.log, x.arg)
		if err != nil {
			return x.fail(fmt.Errorf("delete persona %q: %w", x.arg, err))
		}
		fmt.Fprintf(x.stdout, "%s is deleted: %s answers 410; the servers send its Delete to its followers within a minute, "+
			"then remove its posts, follows and key; the name stays reserved\n", d.Name, d.URI)
		return exitOK
	}
	return c
}
