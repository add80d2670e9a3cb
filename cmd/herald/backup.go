package main

import (
	"fmt"
	"path/filepath"

	"github.com/heraldfed/herald/bootstrap"
)

func backupCommand() *command {
	c := newCommand("backup", "copy the sqlite store's database, consistently, into the new or empty directory DEST while the server may run; "+
		"restore: start with HERALD_DATA_DIR=DEST")
	c.arg = "DEST"
	c.run = func(x *call) int {
		res, err := bootstrap.Backup(x.ctx, x.cfg, x.arg)
		if err != nil {
			return x.fail(err)
		}
		fmt.Fprintf(x.stdout, "backed up %s into %s (%d bytes); restore: HERALD_DATA_DIR=%s herald serve\n",
			x.cfg.DataDir, res.Path, res.Bytes, filepath.Dir(res.Path))
		return exitOK
	}
	return c
}
