package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// BackupResult describes a finished backup.
type BackupResult struct {
	Path  string // the copy's database file
	Bytes int64
}

// Backup copies the database of the data directory dir, consistently, into
// the directory dest (created if missing), as dest/herald.db: a data
// directory of its own, which `herald serve` with HERALD_DATA_DIR=dest
// opens as it is. It works while a server writes: VACUUM INTO reads one
// snapshot (a read transaction, which in WAL mode neither waits for the
// writer nor holds it up) and writes a compact copy of it. The copy is
// written under a temporary name, checked (PRAGMA integrity_check) and only
// then renamed, so dest/herald.db is never a partial copy. A dest that
// already holds a database is refused, not overwritten.
func Backup(ctx context.Context, dir, dest string) (BackupResult, error) {
	src, err := dataDir(dir)
	if err != nil {
		return BackupResult{}, err
	}
	dst, err := dataDir(dest)
	if err != nil {
		return BackupResult{}, err
	}
	if src == dst {
		return BackupResult{}, fmt.Errorf("sqlite: backup into the data directory itself (%s): give another directory", src)
	}
	srcPath := filepath.Join(src, DatabaseFile)
	if _, err := os.Stat(srcPath); err != nil {
		return BackupResult{}, fmt.Errorf("sqlite: no Herald database in %s: %w", src, err)
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return BackupResult{}, fmt.Errorf("sqlite: create backup directory %s: %w", dst, notWritable(err))
	}
	final := filepath.Join(dst, DatabaseFile)
	if _, err := os.Stat(final); err == nil {
		return BackupResult{}, fmt.Errorf("sqlite: %s exists: a backup never overwrites one; give an empty or new directory", final)
	}
	partial := final + ".partial"
	_ = os.Remove(partial) // left by a backup that was interrupted

	// Read-only: a backup cannot change the live database, and needs
	// no write lock to take its snapshot.
	ro := url.Values{}
	ro.Set("mode", "ro")
	ro.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	db, err := sql.Open("sqlite", dsn(srcPath, ro))
	if err != nil {
		return BackupResult{}, fmt.Errorf("sqlite: open %s: %w", srcPath, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, partial); err != nil {
		_ = os.Remove(partial)
		return BackupResult{}, fmt.Errorf("sqlite: copy %s into %s: %w", srcPath, partial, notWritable(interpretError(err)))
	}
	if err := check(ctx, partial); err != nil {
		_ = os.Remove(partial)
		return BackupResult{}, err
	}
	if err := os.Rename(partial, final); err != nil {
		_ = os.Remove(partial)
		return BackupResult{}, fmt.Errorf("sqlite: %w", err)
	}
	if err := syncDir(dst); err != nil {
		return BackupResult{}, err
	}
	st, err := os.Stat(final)
	if err != nil {
		return BackupResult{}, fmt.Errorf("sqlite: %w", err)
	}
	return BackupResult{Path: final, Bytes: st.Size()}, nil
}

// check runs SQLite's integrity check on a copy and syncs it to disk.
func check(ctx context.Context, path string) error {
	ro := url.Values{}
	ro.Set("mode", "ro")
	db, err := sql.Open("sqlite", dsn(path, ro))
	if err != nil {
		return fmt.Errorf("sqlite: open the copy %s: %w", path, err)
	}
	defer db.Close()
	var results []string
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("sqlite: check the copy %s: %w", path, interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return fmt.Errorf("sqlite: check the copy %s: %w", path, err)
		}
		results = append(results, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: check the copy %s: %w", path, err)
	}
	if len(results) != 1 || results[0] != "ok" {
		return fmt.Errorf("sqlite: the copy %s failed its integrity check: %s", path, strings.Join(results, "; "))
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sqlite: sync the copy %s: %w", path, err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sqlite: sync %s: %w", dir, err)
	}
	return nil
}
