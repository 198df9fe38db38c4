package wal

import (
	"errors"
	"os"

	"github.com/strata-db/strata/go/vfs"
	"golang.org/x/sys/unix"
)

// preallocate reserves size bytes for an operating-system file with
// fallocate(2), so that the disk space a segment needs is taken when it
// is created (a full disk fails the rotation, not an Append half way) and
// in one extent. Other files, and filesystems without fallocate, are left
// as they are: the zeros Writer.fill writes ahead of the records are what
// the format relies on, not this.
func preallocate(f vfs.File, size int64) error {
	osf, ok := f.(*os.File)
	if !ok {
		return nil
	}
	err := unix.Fallocate(int(osf.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return nil
	}
	return err
}

// datasync makes a file's data durable. For an operating-system file it
// is fdatasync(2), which commits no metadata but what reading the data
// back needs (the size, new extents): a segment written in place over
// zeros has none, so it costs a data write and a cache flush, not a
// journal commit. Other files get Sync.
func datasync(f vfs.File) error {
	osf, ok := f.(*os.File)
	if !ok {
		return f.Sync()
	}
	for {
		err := unix.Fdatasync(int(osf.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}
