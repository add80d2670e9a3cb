package bootstrap_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/bootstrap"
)

func sqliteConfig(t *testing.T, dir string) bootstrap.Config {
	t.Helper()
	cfg, err := bootstrap.LoadConfig([]string{"--herald-addr=127.0.0.1:0", "--herald-bcrypt-cost=4", "--herald-data-dir=" + dir},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store != bootstrap.StoreSQLite {
		t.Fatalf("default store %q, want sqlite", cfg.Store)
	}
	return cfg
}

// startServer runs a wired server until the returned stop is called.
func startServer(t *testing.T, cfg bootstrap.Config) (*bootstrap.Server, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, cleanup, err := bootstrap.InitializeServer(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	wait, stopWait := context.WithTimeout(ctx, 10*time.Second)
	defer stopWait()
	if _, err := srv.Addr(wait); err != nil {
		cancel()
		cleanup()
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		cleanup()
	}
	t.Cleanup(stop)
	return srv, stop
}

// The default store keeps what a server made across a stop and a start
// (the persona's key pair above all: peers cached it), refuses a second
// server on the same data directory while the first runs, and copies it
// live with Backup into a directory another server starts on.
func TestSQLiteStoreKeepsDataAndOwnsItsDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "herald-data")
	cfg := sqliteConfig(t, dir)
	srv, stop := startServer(t, cfg)
	ctx := context.Background()
	if _, err := srv.App().SignUp.Handle(ctx, application.SignUp{UserName: "alice", Password: "correct horse battery"}); err != nil {
		t.Fatal(err)
	}
	before, err := srv.Stores().Actors.AvatarByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}

	_, _, err = bootstrap.InitializeServer(ctx, cfg, slog.New(slog.DiscardHandler))
	if !errors.Is(err, sqlite.ErrLocked) || !strings.Contains(err.Error(), "HERALD_DATA_DIR") {
		t.Fatalf("a second server on the same directory: %v", err)
	}

	dest := filepath.Join(t.TempDir(), "copy")
	res, err := bootstrap.Backup(ctx, cfg, dest)
	if err != nil || res.Bytes == 0 {
		t.Fatalf("backup of the running server: %+v, %v", res, err)
	}
	stop()

	for name, d := range map[string]string{"restart": dir, "restore": dest} {
		srv, stop := startServer(t, sqliteConfig(t, d))
		after, err := srv.Stores().Actors.AvatarByName(ctx, "alice")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if after.ID != before.ID || after.Keys != before.Keys {
			t.Fatalf("%s: persona or key pair changed", name)
		}
		if _, err := srv.App().Login.Handle(ctx, application.Login{UserName: "alice", Password: "correct horse battery"}); err != nil {
			t.Fatalf("%s: login: %v", name, err)
		}
		stop()
	}
}

// Backup is for the sqlite store; the others name their own tools.
func TestBackupOfOtherStores(t *testing.T) {
	t.Parallel()
	for store, says := range map[string]string{"memory": "HERALD_STORE=memory", "postgres": "pg_dump", "mongo": "mongodump"} {
		cfg := bootstrap.Config{Store: store}
		if _, err := bootstrap.Backup(context.Background(), cfg, t.TempDir()); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want one naming %s", store, err, says)
		}
	}
}
