//go:build unix

package warc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, held until f is closed (or the process dies), so that a
// starting Writer does not recover a file another live Writer is still writing.
func lockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("warc: lock %s: %w", f.Name(), err)
	}
	return nil
}

// tryLock locks path if no process holds it; free reports whether it did. unlock releases it.
func tryLock(path string) (unlock func(), free bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("warc: recover: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("warc: lock %s: %w", path, err)
	}
	return func() { f.Close() }, true, nil
}
