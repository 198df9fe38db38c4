//go:build !linux

package wal

import "github.com/strata-db/strata/go/vfs"

// preallocate does nothing where fallocate(2) is missing; see the Linux
// version.
func preallocate(vfs.File, int64) error { return nil }

// datasync is Sync where fdatasync(2) is missing.
func datasync(f vfs.File) error { return f.Sync() }
