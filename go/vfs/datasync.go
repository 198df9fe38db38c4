package vfs

// DataSyncer is a File that can make its data durable without the
// metadata reading it back does not need (fdatasync). A File that wraps
// another (a test's) implements it by forwarding to Datasync.
type DataSyncer interface {
	Datasync() error
}

// Allocator is a File that can reserve disk space for its first size
// bytes (fallocate). A wrapping File implements it by forwarding to
// Allocate.
type Allocator interface {
	Allocate(size int64) error
}

// Datasync makes f's data durable: fdatasync(2) for an operating-system
// file on Linux, f's own Datasync if it has one, Sync otherwise. It is as
// durable as Sync for data written over bytes the file already had, and
// for data past them too (fdatasync commits a size change); what it skips
// is timestamps, so it costs a journal commit only when the size or the
// allocation changed.
func Datasync(f File) error {
	if d, ok := f.(DataSyncer); ok {
		return d.Datasync()
	}
	return datasync(f)
}

// Allocate reserves disk space for f's first size bytes and makes f at
// least size bytes long (the new bytes read as zeros): fallocate(2) on
// Linux, f's own Allocate if it has one. Elsewhere, and on filesystems
// without fallocate, it does nothing and returns nil: it is an
// optimisation (space taken up front, in few extents), and callers must
// not rely on the size it sets.
func Allocate(f File, size int64) error {
	if a, ok := f.(Allocator); ok {
		return a.Allocate(size)
	}
	return allocate(f, size)
}
