package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// InUseError is Lock's error when another process holds the data dir.
type InUseError struct {
	Dir, PID, LockPath string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("the data dir %s is in use by another hub (pid %s, lock %s): stop that hub first", e.Dir, e.PID, e.LockPath)
}

// Lock takes the data dir's lock, hub.lock, which a running hub holds
// (flock) with its PID inside, and writes this process's PID in it: one
// process at a time on a data dir's SQLite file. When another process
// holds it, the error is an *InUseError naming that process. existed
// reports whether the lock file was there before (a hub ran here). Closing
// f releases the lock.
func Lock(dir string) (f *os.File, existed bool, err error) {
	path := filepath.Join(dir, "hub.lock")
	_, statErr := os.Lstat(path)
	existed = statErr == nil
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, existed, fmt.Errorf("open the data dir lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			other := strings.TrimSpace(string(b[:n]))
			if _, perr := strconv.Atoi(other); perr != nil || other == "" {
				other = "unknown"
			}
			return nil, existed, &InUseError{Dir: dir, PID: other, LockPath: path}
		}
		return nil, existed, fmt.Errorf("lock the data dir %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, existed, nil
}
