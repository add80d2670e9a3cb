package main

import (
	"fmt"
	"strings"

	"github.com/heraldfed/herald/bootstrap"
)

func namesReleaseCommand() *command {
	c := newCommand("names release", "release a system name an operator had reserved (never the fixed list or the instance actor's)")
	c.arg = "NAME"
	c.run = func(x *call) int {
		if err := bootstrap.ReleaseName(x.ctx, x.cfg, x.log, x.arg); err != nil {
			return x.fail(fmt.Errorf("release %q: %w", x.arg, err))
		}
		fmt.Fprintf(x.stdout, "released %s\n", strings.ToLower(x.arg))
		return exitOK
	}
	return c
}
