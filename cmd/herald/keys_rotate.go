package main

import (
	"fmt"

	"github.com/heraldfed/herald/bootstrap"
)

func keysRotateCommand() *command {
	c := newCommand("keys rotate", "give the persona, group or instance actor NAME a new key pair, or every persona and group with --all (after a leak), "+
		"and queue each one's Update{Person} with the new key, signed with the old, to its followers; the key id stays <actor>#main-key. "+
		"The instance actor has no followers to tell: GoToSocial then refuses its signed fetches until its operator expires this domain's keys")
	c.arg, c.argOptional = "NAME", true
	all := c.flags.Bool("all", false, "rotate every persona's and group's key")
	c.run = func(x *call) int {
		if *all == (x.arg != "") {
			fmt.Fprintln(x.stderr, "herald keys rotate: name one actor, or pass --all (not both)")
			return exitUsage
		}
		var names []string
		if !*all {
			names = []string{x.arg}
		}
		done, err := bootstrap.RotateKeys(x.ctx, x.cfg, x.log, names)
		for _, r := range done {
			fmt.Fprintf(x.stdout, "%s: new key under %s; Update queued to its followers (%d jobs)\n", r.Actor, r.KeyID, r.Queued)
		}
		if err != nil {
			return x.fail(fmt.Errorf("rotate keys: %w", err))
		}
		fmt.Fprintf(x.stdout, "%d keys rotated\n", len(done))
		return exitOK
	}
	return c
}
