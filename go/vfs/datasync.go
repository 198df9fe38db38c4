package vfs

// DataSyncer is a File that can make its data durable without the
// metadata reading it back does not need (fdatasync). A File that wraps
// another (a test's) implements it by forwarding to Datasync.
type DataSyncer interface {
	Datasync() error
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
