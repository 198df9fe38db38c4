package vfs

import "errors"

// ErrLocked is wrapped by the error Lock returns when someone else holds
// the lock.
var ErrLocked = errors.New("vfs: locked")
