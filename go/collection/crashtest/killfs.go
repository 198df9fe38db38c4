package crashtest

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"

	"github.com/strata-db/strata/go/vfs"
)

// KillFS wraps a vfs.FS and SIGKILLs its own process at a chosen point:
//
//   - AtByte N: when the bytes written to files whose path matches
//     Pattern cross N, the write that crosses it reaches the file only up
//     to byte N (a torn write), then the process dies.
//   - AtStep N: just before the Nth step, a step being any change other
//     than a data write or an fsync of a log segment (create, rename,
//     remove, mkdir, truncate, directory fsync, fsync of any other file):
//     the steps of the checkpoint protocol, of segment rotation and of
//     recovery.
//
// Zero disables either. Nothing but the kernel's page cache sees what the
// process wrote, as after a real crash of the process.
type KillFS struct {
	inner   vfs.FS
	pattern *regexp.Regexp
	atByte  int64
	atStep  int64

	mu       sync.Mutex
	bytes    int64
	steps    int64
	disarmed bool // Disarm: nothing counts until Arm
}

// Disarm stops the counting until Arm: a kill point then counts from a
// later moment of the workload (Workload.Merge).
func (k *KillFS) Disarm() {
	k.mu.Lock()
	k.disarmed = true
	k.mu.Unlock()
}

// Arm starts the counting from zero.
func (k *KillFS) Arm() {
	k.mu.Lock()
	k.disarmed, k.bytes, k.steps = false, 0, 0
	k.mu.Unlock()
}

// NewKillFS wraps inner; pattern may be nil (every file).
func NewKillFS(inner vfs.FS, pattern *regexp.Regexp, atByte, atStep int64) *KillFS {
	return &KillFS{inner: inner, pattern: pattern, atByte: atByte, atStep: atStep}
}

// die kills the process the way a crash would: no deferred calls, no
// flushing, no Close.
func die() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

func (k *KillFS) step() {
	if k.atStep <= 0 {
		return
	}
	k.mu.Lock()
	if k.disarmed {
		k.mu.Unlock()
		return
	}
	k.steps++
	hit := k.steps == k.atStep
	k.mu.Unlock()
	if hit {
		die()
	}
}

func isLogSegment(name string) bool { return filepath.Ext(name) == ".wal" }

// Create implements vfs.FS.
func (k *KillFS) Create(name string) (vfs.File, error) {
	k.step()
	f, err := k.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return k.wrap(f, name), nil
}

// Open implements vfs.FS.
func (k *KillFS) Open(name string) (vfs.File, error) {
	f, err := k.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return k.wrap(f, name), nil
}

func (k *KillFS) wrap(f vfs.File, name string) vfs.File {
	return &killFile{File: f, fs: k, name: name,
		counted: k.atByte > 0 && (k.pattern == nil || k.pattern.MatchString(filepath.ToSlash(name)))}
}

// Rename implements vfs.FS.
func (k *KillFS) Rename(oldname, newname string) error {
	k.step()
	return k.inner.Rename(oldname, newname)
}

// Remove implements vfs.FS.
func (k *KillFS) Remove(name string) error {
	k.step()
	return k.inner.Remove(name)
}

// SyncDir implements vfs.FS.
func (k *KillFS) SyncDir(dir string) error {
	k.step()
	return k.inner.SyncDir(dir)
}

// Stat implements vfs.FS.
func (k *KillFS) Stat(name string) (os.FileInfo, error) { return k.inner.Stat(name) }

// MkdirAll implements vfs.FS.
func (k *KillFS) MkdirAll(dir string) error {
	k.step()
	return k.inner.MkdirAll(dir)
}

// ReadDir implements vfs.FS.
func (k *KillFS) ReadDir(dir string) ([]string, error) { return k.inner.ReadDir(dir) }

// RemoveAll implements vfs.FS.
func (k *KillFS) RemoveAll(path string) error {
	k.step()
	return k.inner.RemoveAll(path)
}

// Truncate implements vfs.FS.
func (k *KillFS) Truncate(name string, size int64) error {
	k.step()
	return k.inner.Truncate(name, size)
}

// Lock implements vfs.FS.
func (k *KillFS) Lock(name string) (io.Closer, error) { return k.inner.Lock(name) }

type killFile struct {
	vfs.File
	fs      *KillFS
	name    string
	counted bool
}

func (f *killFile) Write(p []byte) (int, error) {
	return f.write(p, func(b []byte) (int, error) { return f.File.Write(b) })
}

func (f *killFile) WriteAt(p []byte, off int64) (int, error) {
	return f.write(p, func(b []byte) (int, error) { return f.File.WriteAt(b, off) })
}

func (f *killFile) write(p []byte, do func([]byte) (int, error)) (int, error) {
	if !f.counted {
		return do(p)
	}
	k := f.fs
	k.mu.Lock()
	if k.disarmed {
		k.mu.Unlock()
		return do(p)
	}
	before := k.bytes
	k.bytes += int64(len(p))
	if before >= k.atByte || k.bytes < k.atByte {
		k.mu.Unlock()
		return do(p)
	}
	// This write crosses byte N: the part before N reaches the file, the
	// rest never does. The lock stays held so no other write slips in.
	do(p[:k.atByte-before])
	die()
	return 0, nil
}

// Datasync forwards to the wrapped file, so that a log on the operating
// system's filesystem is synced as it is in use (fdatasync); it counts as
// Sync does.
func (f *killFile) Datasync() error {
	if !isLogSegment(f.name) {
		f.fs.step()
	}
	return vfs.Datasync(f.File)
}

func (f *killFile) Sync() error {
	if !isLogSegment(f.name) {
		f.fs.step()
	}
	return f.File.Sync()
}
