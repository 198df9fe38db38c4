package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func datasync(f File) error {
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

func allocate(f File, size int64) error {
	osf, ok := f.(*os.File)
	if !ok {
		return nil
	}
	for {
		err := unix.Fallocate(int(osf.Fd()), 0, 0, size)
		switch {
		case err == unix.EINTR:
			continue
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			return nil
		}
		return err
	}
}
