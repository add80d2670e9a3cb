package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

func instancesListCommand() *command {
	c := newCommand("instances list", "list remote hosts with their circuit breaker state")
	only := c.flags.Bool("quarantined", false, "only the quarantined hosts")
	c.run = func(x *call) int {
		vs, err := bootstrap.Instances(x.ctx, x.cfg, x.log, *only)
		if err != nil {
			return x.fail(err)
		}
		if len(vs) == 0 {
			fmt.Fprintln(x.stdout, "no remote host recorded")
			return exitOK
		}
		tw := tabwriter.NewWriter(x.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tFAILURES\tLEVEL\tQUARANTINED UNTIL\tLAST ERROR")
		for _, v := range vs {
			until := "-"
			if v.Quarantined {
				until = v.QuarantinedUntil.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", v.Host, v.ConsecutiveFailures, v.QuarantineLevel, until, v.LastError)
		}
		_ = tw.Flush()
		return exitOK
	}
	return c
}
