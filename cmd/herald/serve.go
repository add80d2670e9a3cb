package main

import "github.com/heraldfed/herald/bootstrap"

func serveCommand() *command {
	c := newCommand("serve", "run the server: HTTP API, operator page, delivery engine (the default command)")
	c.run = func(x *call) int {
		ctx, stop := signalled(x.ctx)
		defer stop()
		srv, cleanup, err := bootstrap.InitializeServer(ctx, x.cfg, x.log)
		if err != nil {
			x.log.Error("cannot start", "err", err)
			return exitFail
		}
		defer cleanup()
		if err := srv.Run(ctx); err != nil {
			x.log.Error("server stopped with an error", "err", err)
			return exitFail
		}
		return exitOK
	}
	return c
}
