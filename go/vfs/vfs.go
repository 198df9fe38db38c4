// Package vfs is the filesystem interface through which strata does all file
// I/O, so that tests can swap in a filesystem that fails on purpose (see
// package errorfs) and check that no failure leaves a broken file behind.
//
// The interface holds what durable file replacement, a write-ahead log and a
// database directory need: create a new file, write it (sequentially or at
// an offset), fsync it, rename it over the old one, fsync the directory,
// open files for reading, cut a file short durably, list, create and remove
// directories, and lock a database directory against a second process. Fd
// exists so that readers can memory-map a file; an implementation without
// real file descriptors (package memfs) cannot serve memory-mapped reads.
//
// Durability follows POSIX: a file's contents survive a crash only once the
// file has been fsynced (File.Sync, or Truncate, which fsyncs), and a
// created, renamed or removed name only once its directory has been fsynced
// (SyncDir). Package memfs simulates exactly this, so crash tests can check
// that code relies on nothing more.
//
// Datasync (fdatasync) is optional: a File that lacks it gets Sync.
package vfs

import (
	"io"
	"os"
	"slices"
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
	// MkdirAll creates dir and any missing parents with mode 0755. It
	// succeeds if dir already exists. The new directories are durable only
	// once their parents are fsynced.
	MkdirAll(dir string) error
	// ReadDir lists the names of dir's entries, sorted.
	ReadDir(dir string) ([]string, error)
	// RemoveAll removes path and everything under it. It succeeds if path
	// does not exist.
	RemoveAll(path string) error
	// Truncate changes the size of the existing file name to size and
	// fsyncs the file, so that the new size is durable when it returns.
	Truncate(name string, size int64) error
	// Lock creates name if needed and takes an exclusive lock on it
	// without waiting. If another process, or another Lock call in this
	// process, holds the lock, it fails with an error wrapping ErrLocked.
	// Closing the returned Closer releases the lock; so does the death of
	// the process.
	Lock(name string) (io.Closer, error)
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

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (osFS) ReadDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	// os.ReadDir sorts by name already; sorting again keeps the promise
	// independent of that detail.
	slices.Sort(names)
	return names, nil
}

func (osFS) RemoveAll(path string) error { return os.RemoveAll(path) }

func (osFS) Truncate(name string, size int64) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (osFS) Lock(name string) (io.Closer, error) { return lockFile(name) }

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
