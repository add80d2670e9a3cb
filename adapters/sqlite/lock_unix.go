//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// dirLock is the exclusive flock on a data directory's lock file. The
// kernel drops it when the process exits however it exits (kill -9
// included), so a crash never leaves a stale lock behind.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: data directory %s: %w", dir, notWritable(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sqlite: %s: %w (%s): stop it first, or give this one another HERALD_DATA_DIR; "+
				"to copy a live instance use `herald backup`", dir, ErrLocked, describeHolder(holder))
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	// Who holds it, for the error a second process prints.
	host, _ := os.Hostname()
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))), 0)
	return &dirLock{f: f}, nil
}

func describeHolder(b []byte) string {
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "an unknown process"
}

func (l *dirLock) release() {
	// Closing the file drops the flock. The holder line is left: it is
	// stale but harmless, and rewritten by the next holder.
	_ = l.f.Close()
}
