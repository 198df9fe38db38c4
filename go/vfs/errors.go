package vfs

import "github.com/strata-db/strata/go/errkind"

// ErrLocked is wrapped by the error Lock returns when someone else holds
// the lock.
var ErrLocked = errkind.New(errkind.Locked, "vfs: locked")
