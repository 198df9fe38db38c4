//go:build !unix

package errkind

import "syscall"

// errnoKind knows no errno outside unix: those errors are IO (or are
// classified by fs.ErrPermission and the like).
func errnoKind(syscall.Errno) (Kind, bool) { return 0, false }
