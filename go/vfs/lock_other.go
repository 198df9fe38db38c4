//go:build !unix

package vfs

import (
	"fmt"
	"io"
	"runtime"
)

// lockFile has no implementation outside unix: strata's database
// directories rely on flock(2) semantics (released when the process dies).
func lockFile(name string) (io.Closer, error) {
	return nil, fmt.Errorf("vfs: locking %q: file locks are not implemented on %s", name, runtime.GOOS)
}
