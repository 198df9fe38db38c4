package vfs

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// MkdirAllDurable creates dir and any missing parents, as FS.MkdirAll
// does, and fsyncs the parent of each directory it created: without that a
// power loss can take a new directory, and everything made durable inside
// it, away.
func MkdirAllDurable(fsys FS, dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		_, err := fsys.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}
