//go:build unix && !linux

package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// setLock sets (F_WRLCK) or clears (F_UNLCK) a flock(2) lock without
// waiting, where open-file-description fcntl locks do not exist.
func setLock(f *os.File, kind int16) error {
	how := unix.LOCK_EX | unix.LOCK_NB
	if kind == unix.F_UNLCK {
		how = unix.LOCK_UN
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
