//go:build unix

package errkind

import "syscall"

// errnoKind is the kind of the operating system's answers that are the
// environment's state rather than a bug or the caller's mistake.
func errnoKind(errno syscall.Errno) (Kind, bool) {
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT:
		return NoSpace, true
	case syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM:
		return Exhausted, true
	case syscall.EROFS:
		return ReadOnly, true
	case syscall.EACCES, syscall.EPERM:
		return Permission, true
	}
	return 0, false
}
