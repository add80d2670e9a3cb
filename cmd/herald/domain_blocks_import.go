package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/heraldfed/herald/bootstrap"
)

func domainBlocksImportCommand() *command {
	c := newCommand("domain-blocks import", "import a domain-block list in Mastodon's CSV format (#domain,#severity,...): "+
		"blocks new domains, changes blocked ones where the list differs, and prints every line's fate; "+
		"a suspension ends the domain's queued deliveries and follows")
	c.arg = "FILE"
	dry := c.flags.Bool("dry-run", false, "print what the import would change and change nothing")
	c.run = func(x *call) int {
		in, err := os.Open(x.arg)
		if err != nil {
			return x.fail(err)
		}
		defer in.Close()
		res, err := bootstrap.ImportDomainBlocks(x.ctx, x.cfg, x.log, in, *dry)
		// What it did, a line of the list per row (the unchanged ones only
		// counted), then the totals; also when it stopped half way.
		verb := map[bool][2]string{true: {"would add", "would change"}, false: {"added", "changed"}}[res.DryRun]
		tw := tabwriter.NewWriter(x.stdout, 0, 4, 2, ' ', 0)
		rows := 0
		row := func(line int, what, domain, detail string) {
			if rows == 0 {
				fmt.Fprintln(tw, "LINE\tCHANGE\tDOMAIN\tDETAIL")
			}
			rows++
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", line, what, domain, detail)
		}
		for _, a := range res.Added {
			row(a.Line, verb[0], a.Block.Domain, string(a.Block.Severity))
		}
		for _, ch := range res.Changed {
			row(ch.Line, verb[1], ch.Block.Domain, fmt.Sprintf("%s → %s", ch.Before.Severity, ch.Block.Severity))
		}
		for _, l := range res.Skipped {
			row(l.Line, "skipped", l.Domain, l.Why)
		}
		for _, l := range res.Invalid {
			row(l.Line, "invalid", l.Domain, l.Why)
		}
		_ = tw.Flush()
		if len(res.IgnoredColumns) > 0 {
			fmt.Fprintf(x.stdout, "columns not read: %s\n", strings.Join(res.IgnoredColumns, ", "))
		}
		if err != nil {
			return x.fail(fmt.Errorf("import %s: %w", x.arg, err))
		}
		fmt.Fprintf(x.stdout, "%d %s, %d %s, %d unchanged, %d skipped, %d invalid\n", len(res.Added), verb[0], len(res.Changed), verb[1],
			len(res.Unchanged), len(res.Skipped), len(res.Invalid))
		switch {
		case res.DryRun:
			fmt.Fprintln(x.stdout, "dry run: nothing was changed")
		case len(res.Added)+len(res.Changed) > 0:
			fmt.Fprintf(x.stdout, "suspensions ended %d queued deliveries and removed %d follows; the servers apply the list within 10 s\n",
				res.JobsEnded, res.FollowsRemoved)
		}
		return exitOK
	}
	return c
}
