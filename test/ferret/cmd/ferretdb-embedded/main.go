// Command ferretdb-embedded runs embedded FerretDB (SQLite backend) for the
// tests of this module, in a process of its own: the tests build it without
// the race detector, because FerretDB's SQLite (C translated to Go) runs
// about ten times slower when instrumented, while the adapter code under
// test still runs with -race in the test binary.
//
// It listens on 127.0.0.1 on a free port, prints "URI <mongodb uri>" on
// stdout once it accepts connections, and stops when its standard input
// closes (so it never outlives the test binary that started it) or on
// SIGINT/SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	dir := flag.String("dir", "", "directory for the SQLite files (required)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb-embedded: -dir is required")
		os.Exit(2)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/",
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-embedded:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // returns when the parent goes away
		stop()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(ctx)
	}()
	fmt.Println("URI", f.MongoDBURI()) // MongoDBURI waits for the listener
	<-done
}
