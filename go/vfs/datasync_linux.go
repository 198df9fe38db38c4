package vfs

import (
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
