package copystore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDataDir takes the data dir's lock file (hub.lock, held with flock by
// a running hub, its PID inside) for the length of the copy, so that the
// copy neither reads a database a hub is writing nor lets a hub start on
// it meanwhile. It fails, naming the other process, when the lock is held.
func lockDataDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, "hub.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the data dir lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(b[:n]))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return nil, fmt.Errorf("the data dir %s is in use by a running hub (pid %s, lock %s): stop that hub first, then copy", dir, pid, path)
		}
		return nil, fmt.Errorf("lock the data dir %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
