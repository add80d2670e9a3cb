package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/test/contract"
)

// A backup taken while the owner writes is a consistent database: every
// job enqueued before it started is in it, every batch is in it whole or
// not at all, and it opens as a data directory of its own.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := migratedIn(t, dir)
	ctx := testCtx(t)
	jobs := sqlite.NewJobStore(db)
	now := time.Now()
	const batch = 10
	enqueueBatch := func(b int) error {
		js := make([]domain.Job, batch)
		for i := range js {
			js[i] = newJob(t, fmt.Sprintf("b%04d-%02d", b, i), "r.example", now)
		}
		_, err := jobs.Enqueue(ctx, js)
		return err
	}
	if err := enqueueBatch(0); err != nil {
		t.Fatal(err)
	}
	if err := sqlite.NewAccountStore(db).CreateAvatar(ctx, domain.Avatar{ID: "a1", RootUserID: "u1", Name: "alice",
		Keys: domain.KeyPair{PublicPEM: "pub", PrivatePEM: "priv"}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	writeCtx, stop := context.WithCancel(ctx)
	var written atomic.Int64
	done := make(chan error, 1)
	go func() {
		for b := 1; b < 2000 && writeCtx.Err() == nil; b++ {
			if err := enqueueBatch(b); err != nil {
				done <- err
				return
			}
			written.Add(1)
		}
		done <- nil
	}()
	for written.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	dest := filepath.Join(t.TempDir(), "backup")
	res, err := sqlite.Backup(ctx, dir, dest)
	stop()
	if werr := <-done; werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if res.Path != filepath.Join(dest, sqlite.DatabaseFile) || res.Bytes == 0 {
		t.Fatalf("backup result %+v", res)
	}
	if _, err := os.Stat(res.Path + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("partial copy left behind: %v", err)
	}

	restored := migratedIn(t, dest)
	c, err := sqlite.NewJobStore(restored).Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := c[domain.JobQueued]
	if n < batch || n%batch != 0 {
		t.Fatalf("backup holds %d jobs: want whole batches, the first among them", n)
	}
	if _, err := sqlite.NewJobStore(restored).Get(ctx, contract.JobID("b0000-00")); err != nil {
		t.Fatalf("job from before the backup: %v", err)
	}
	a, err := sqlite.NewAccountStore(restored).AvatarByName(ctx, "alice")
	if err != nil || a.Keys.PrivatePEM != "priv" {
		t.Fatalf("persona and key in the backup: %+v, %v", a, err)
	}
	t.Logf("backup of %d bytes held %d of the jobs (%d batches written meanwhile)", res.Bytes, n, written.Load())

	// Never over an existing copy, never into the directory itself.
	if _, err := sqlite.Backup(ctx, dir, dest); err == nil || !strings.Contains(err.Error(), "never overwrites") {
		t.Fatalf("second backup into the same directory: %v", err)
	}
	if _, err := sqlite.Backup(ctx, dir, dir); err == nil {
		t.Fatal("backup into the data directory itself")
	}
	if _, err := sqlite.Backup(ctx, t.TempDir(), filepath.Join(t.TempDir(), "x")); err == nil || !strings.Contains(err.Error(), "no Herald database") {
		t.Fatalf("backup of an empty directory: %v", err)
	}
}

// A backup of a stopped instance (no -wal or -shm beside the file) works
// too.
func TestBackupOfStoppedInstance(t *testing.T) {
	t.Parallel()
	dir, _ := stopped(t)
	dest := t.TempDir()
	if _, err := sqlite.Backup(testCtx(t), dir, dest); err != nil {
		t.Fatal(err)
	}
	restored := open(t, dest)
	if v, _, err := sqlite.MigrationVersion(testCtx(t), restored); err != nil || v == 0 {
		t.Fatalf("restored schema version %d, %v", v, err)
	}
}
