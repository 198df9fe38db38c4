//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes a flock(2) lock. flock locks belong to the open file
// description, so two Lock calls in one process conflict just as two
// processes do (fcntl locks would not), and the kernel drops the lock when
// the process dies, so a crash never leaves a stale lock behind.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %q is locked by another process or another open handle", ErrLocked, name)
		}
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return f, nil
}
