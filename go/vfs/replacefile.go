package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// ReplaceFile atomically replaces (or creates) name with data, durably:
// write to name+".tmp", fsync it, rename it over name, fsync the directory.
// A crash leaves the old file or the new one, and at worst the temporary
// file, which a later ReplaceFile removes first and nothing else reads. It
// is meant for small files (CURRENT, HEAD, manifests).
func ReplaceFile(fsys FS, name string, data []byte) error {
	tmp := name + ".tmp"
	if _, err := fsys.Stat(tmp); err == nil {
		if err := fsys.Remove(tmp); err != nil {
			return fmt.Errorf("removing leftover %s: %w", tmp, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = fmt.Errorf("short write to %s: %d of %d bytes", tmp, n, len(data))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, name)
	}
	if err == nil {
		err = fsys.SyncDir(filepath.Dir(name))
	}
	return err
}
