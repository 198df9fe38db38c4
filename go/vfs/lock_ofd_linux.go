package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// setLock sets (F_WRLCK) or clears (F_UNLCK) an open-file-description
// lock over the whole file without waiting. OFD locks (F_OFD_SETLK, Linux
// 3.15) conflict between two opens of one file in one process, unlike
// POSIX record locks, and unlike flock(2) they are also honoured by NFS.
func setLock(f *os.File, kind int16) error {
	lk := unix.Flock_t{Type: kind, Whence: 0, Start: 0, Len: 0}
	for {
		err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
