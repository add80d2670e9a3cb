package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/heraldfed/herald/bootstrap"
)

func jobsStatsCommand() *command {
	c := newCommand("jobs stats", "print the delivery queue's counts by state and by host")
	c.run = func(x *call) int {
		s, err := bootstrap.QueueStats(x.ctx, x.cfg, x.log)
		if err != nil {
			return x.fail(err)
		}
		tw := tabwriter.NewWriter(x.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "STATE\tJOBS")
		for _, st := range []string{"queued", "leased", "succeeded", "dead"} {
			for k, n := range s.ByState {
				if string(k) == st {
					fmt.Fprintf(tw, "%s\t%d\n", st, n)
				}
			}
		}
		fmt.Fprintf(tw, "total\t%d\n", s.Total)
		_ = tw.Flush()
		for _, g := range []struct {
			state string
			n     int
		}{{"queued", len(s.Queued)}, {"leased", len(s.Leased)}, {"dead", len(s.Dead)}} {
			if g.n == 0 {
				continue
			}
			fmt.Fprintf(x.stdout, "\n%s by host (largest first):\n", g.state)
			tw := tabwriter.NewWriter(x.stdout, 0, 4, 2, ' ', 0)
			rows := s.Queued
			switch g.state {
			case "leased":
				rows = s.Leased
			case "dead":
				rows = s.Dead
			}
			for _, r := range rows {
				fmt.Fprintf(tw, "  %s\t%d\n", r.Host, r.Count)
			}
			_ = tw.Flush()
		}
		return exitOK
	}
	return c
}
