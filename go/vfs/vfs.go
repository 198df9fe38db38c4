// Package vfs is the filesystem interface through which strata does all file
// I/O, so that tests can swap in a filesystem that fails on purpose (see
// package errorfs) and check that no failure leaves a broken file behind.
//
// The interface holds only what durable file replacement needs: create a new
// file, write it (sequentially or at an offset), fsync it, rename it over
// the old one, fsync the directory, and open files for reading. Fd exists so
// that readers can memory-map a file; an implementation without real file
// descriptors cannot serve memory-mapped reads.
package vfs

import (
	"io"
	"os"
)

// File is an open file. Implementations need not be safe for concurrent use
// except where os.File is (ReadAt).
type File interface {
	io.Writer
	io.WriterAt
	io.ReaderAt
	io.Closer
	// Sync commits the file's contents to stable storage (fsync).
	Sync() error
	// Stat describes the file; readers use Size to bound every length
	// they read from the file before allocating for it.
	Stat() (os.FileInfo, error)
	// Fd is the operating-system file descriptor, for mmap.
	Fd() uintptr
}

// FS is a filesystem.
type FS interface {
	// Create creates name for reading and writing with mode 0644. It fails
	// if name already exists, so a temporary name can never clobber a
	// file that someone else is writing.
	Create(name string) (File, error)
	// Open opens name read-only.
	Open(name string) (File, error)
	// Rename atomically replaces newname with oldname (rename(2)).
	Rename(oldname, newname string) error
	// Remove removes name.
	Remove(name string) error
	// SyncDir fsyncs the directory dir, making a rename or a new file
	// in it durable.
	SyncDir(dir string) error
	// Stat describes name.
	Stat(name string) (os.FileInfo, error)
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}
