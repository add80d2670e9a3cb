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
		if x.arg == "" {
			if _, err := bootstrap.ExportDomainBlocks(x.ctx, x.cfg, x.log, x.stdout); err != nil {
				return x.fail(err)
			}
			return exitOK
		}
		// The file is written only once the whole list is read.
		var buf bytes.Buffer
		n, err := bootstrap.ExportDomainBlocks(x.ctx, x.cfg, x.log, &buf)
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
