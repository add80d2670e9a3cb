package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// Open creates the data directory and its database on first use, and what
// was written is there after a close and an open, keys and queue included.
func TestOpenCreatesAndReopenKeeps(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "herald data?#%")
	ctx := testCtx(t)
	db, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mustMigrate(t, db)
	a := domain.Avatar{ID: "a1", RootUserID: "u1", Name: "alice", Keys: domain.KeyPair{PublicPEM: "pub", PrivatePEM: "priv"}, CreatedAt: time.Now()}
	if err := sqlite.NewAccountStore(db).CreateAvatar(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.NewJobStore(db).Enqueue(ctx, []domain.Job{newJob(t, "j1", "r.example", time.Now())}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{sqlite.DatabaseFile, sqlite.LockFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s not in the data directory: %v", f, err)
		}
	}
	db = open(t, dir)
	mustMigrate(t, db) // a second start: nothing to do
	got, err := sqlite.NewAccountStore(db).AvatarByName(ctx, "alice")
	if err != nil || got.Keys != a.Keys || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	if j, err := sqlite.NewJobStore(db).Get(ctx, contract.JobID("j1")); err != nil || j.State != domain.JobQueued {
		t.Fatalf("queued job after reopen: %+v, %v", j, err)
	}
}

// One process owns a data directory: a second Open is refused at once,
// naming the holder, until the first closes. OpenShared (operators'
// commands) is not refused.
func TestSecondOpenIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := testCtx(t)
	first, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mustMigrate(t, first)
	_, err = sqlite.Open(ctx, dir)
	if !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "pid ") {
		t.Fatalf("the refusal does not name the directory and the holder: %s", msg)
	}
	shared, err := sqlite.OpenShared(ctx, dir)
	if err != nil {
		t.Fatalf("shared open beside the owner: %v", err)
	}
	if err := sqlite.MigrateUp(ctx, shared, nil); err == nil {
		t.Fatal("a shared handle migrated without the directory's lock")
	}
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(t, dir)
	if err := sqlite.NewPinger(again).Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// A data directory that cannot be one is a clear error, and creates
// nothing.
func TestOpenRefusesBadDirectory(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, file); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("a file as data directory: %v", err)
	}
	if _, err := sqlite.Open(ctx, filepath.Join(file, "under")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a directory under a file: %v", err)
	}
	if _, err := sqlite.Open(ctx, ""); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("empty data directory: %v", err)
	}
	notDB := t.TempDir()
	if err := os.WriteFile(filepath.Join(notDB, sqlite.DatabaseFile), []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, notDB); err == nil || !strings.Contains(err.Error(), "not a database") {
		t.Fatalf("a file that is not a database: %v", err)
	}
	missing := t.TempDir()
	if _, err := sqlite.OpenShared(ctx, missing); err == nil || !strings.Contains(err.Error(), "no Herald database") {
		t.Fatalf("shared open of an empty directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(missing, sqlite.DatabaseFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a shared open created a database: %v", err)
	}
	if os.Getuid() == 0 {
		t.Log("running as root: a read-only directory would be writable, so that case is left to non-root runs")
		return
	}
	ro := t.TempDir()
	if err := os.Chmod(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(ro, 0o700) })
	if _, err := sqlite.Open(ctx, ro); err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("read-only data directory: %v", err)
	}
}

// Times come back as they were written, to the nanosecond; one beyond what
// int64 nanoseconds hold (a remote server's year 9999) is kept at the end
// of the range, still in order, not wrapped around.
func TestTimesRoundTripAndClamp(t *testing.T) {
	t.Parallel()
	s := sqlite.NewContentStore(migrated(t))
	ctx := testCtx(t)
	exact := time.Date(2026, 6, 1, 12, 0, 0, 123456789, time.UTC)
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	old := time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{exact, far, old} {
		p, err := domain.NewPost(string(rune('a'+i)), "https://r.example/n/"+string(rune('a'+i)), "https://r.example/u/bob", "x", domain.VisibilityPublic, at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePost(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.PostsByAuthor(ctx, "https://r.example/u/bob", time.Time{}, 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("%d posts, %v", len(got), err)
	}
	if got[0].ID != "b" || got[1].ID != "a" || got[2].ID != "c" {
		t.Fatalf("order %s %s %s, want b a c", got[0].ID, got[1].ID, got[2].ID)
	}
	if !got[1].Published.Equal(exact) {
		t.Fatalf("published %v, want %v", got[1].Published, exact)
	}
	if got[0].Published.Year() != 2262 || got[2].Published.Year() != 1677 {
		t.Fatalf("clamped to %v and %v", got[0].Published, got[2].Published)
	}
}
