package memfs

import "errors"

// ErrCrashed is wrapped by every error from a file handle or lock that was
// opened before a Crash.
var ErrCrashed = errors.New("memfs: handle opened before a simulated crash")
