//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive lock on name that belongs to this open of the
// file, not to the process, and that only this open releases.
//
// Two Lock calls in one process conflict just as two processes do (the
// lock belongs to the open file description, as flock(2)'s does and
// POSIX fcntl locks' do not), and the kernel drops the lock when the
// process dies, so a crash never leaves a stale lock behind.
//
// A process forked after Lock shares the open file description (fork
// copies descriptors, not descriptions), so with a lock that is released
// only when the last descriptor closes, a child that outlives its parent's
// Close kept the directory locked. Close therefore unlocks explicitly
// (F_UNLCK) before closing its descriptor: the lock goes with the parent's
// Close whatever children still hold. The descriptor is opened O_CLOEXEC
// (os.OpenFile always does), so a program a child execs never holds it.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, err
	}
	if err := setLock(f, unix.F_WRLCK); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %q is locked by another process or another open handle", ErrLocked, name)
		}
		return nil, &os.PathError{Op: "lock", Path: name, Err: err}
	}
	return &fileLock{f: f}, nil
}

// fileLock is a held lock; Close releases it once.
type fileLock struct {
	once sync.Once
	f    *os.File
	err  error
}

func (l *fileLock) Close() error {
	l.once.Do(func() {
		uerr := setLock(l.f, unix.F_UNLCK)
		cerr := l.f.Close()
		if uerr != nil {
			l.err = &os.PathError{Op: "unlock", Path: l.f.Name(), Err: uerr}
		} else {
			l.err = cerr
		}
	})
	return l.err
}
