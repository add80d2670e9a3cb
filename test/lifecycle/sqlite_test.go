package lifecycle_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/heraldfed/herald/bootstrap"
)

// The graceful restart proof on the default store: the first server stops
// mid fan-out and closes the data directory, a second server opens it and
// finishes the queue; every delivery arrives exactly once.
func TestGracefulRestartUnderLoadOnSQLite(t *testing.T) {
	t.Parallel()
	cfg, err := bootstrap.LoadConfig([]string{
		"--herald-addr=127.0.0.1:0", "--herald-data-dir=" + filepath.Join(t.TempDir(), "herald-data"),
		"--herald-allow-private-targets=true", "--herald-bcrypt-cost=4", "--herald-shutdown-grace=30s",
		"--herald-workers=8", "--herald-per-host=2",
	}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store != bootstrap.StoreSQLite {
		t.Fatalf("store %q: the default should be sqlite", cfg.Store)
	}
	gracefulRestartUnderLoad(t, cfg)
}
