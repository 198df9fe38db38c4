package vfs

import (
	"errors"
	"io"
)

// ReadFile returns the contents of name, as os.ReadFile does, through fs.
// It is meant for small files (manifests, tests): it reads the whole file
// into memory at once.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// A file that shrank since Stat ends where ReadAt found its end.
	return b[:n], nil
}
