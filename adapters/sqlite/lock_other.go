//go:build !unix

package sqlite

import (
	"fmt"
	"runtime"
)

type dirLock struct{}

// lockDir refuses: without flock this build cannot keep a second process
// off the directory, and the SQLite store is only proven with that lock.
func lockDir(dir string) (*dirLock, error) {
	return nil, fmt.Errorf("sqlite: the SQLite store needs file locking (Linux, macOS, BSD); %s is not supported: use HERALD_STORE=postgres", runtime.GOOS)
}

func (l *dirLock) release() {}
