package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/heraldfed/herald/bootstrap"
)

func domainBlocksExportCommand() *command {
	c := newCommand("domain-blocks export", "write the domain blocks in Mastodon's CSV format to FILE, or to stdout without one, for other operators to import")
	c.arg, c.argOptional = "FILE", true
	c.run = func(x *call) int {
		mod, cleanup, err := bootstrap.OpenModerator(x.ctx, x.cfg, x.log)
		if err != nil {
			return x.fail(err)
		}
		defer cleanup()
		if x.arg == "" {
			if _, err := mod.ExportBlocks.Handle(x.ctx, x.stdout); err != nil {
				return x.fail(err)
			}
			return exitOK
		}
		var buf bytes.Buffer
		n, err := mod.ExportBlocks.Handle(x.ctx, &buf)
		if err != nil {
			return x.fail(err)
		}
		if err := os.WriteFile(x.arg, buf.Bytes(), 0o644); err != nil {
			return x.fail(err)
		}
		fmt.Fprintf(x.stdout, "wrote %d blocks to %s\n", n, x.arg)
		return exitOK
	}
	return c
}
