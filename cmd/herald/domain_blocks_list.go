package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heraldfed/herald/bootstrap"
)

func domainBlocksListCommand() *command {
	c := newCommand("domain-blocks list", "list the domain blocks: domain, severity, since, public comment, reason")
	c.run = func(x *call) int {
		bs, err := bootstrap.DomainBlocks(x.ctx, x.cfg, x.log)
		if err != nil {
			return x.fail(err)
		}
		if len(bs) == 0 {
			fmt.Fprintln(x.stdout, "no domain is blocked")
			return exitOK
		}
		tw := tabwriter.NewWriter(x.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DOMAIN\tSEVERITY\tSINCE\tPUBLIC COMMENT\tREASON")
		for _, b := range bs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Domain, b.Severity, b.CreatedAt.UTC().Format(time.RFC3339), oneLine(b.PublicComment), oneLine(b.Reason))
		}
		_ = tw.Flush()
		fmt.Fprintf(x.stdout, "%d blocks\n", len(bs))
		return exitOK
	}
	return c
}

// oneLine keeps a comment on its row of a table.
func oneLine(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Join(strings.Fields(s), " ")
}
