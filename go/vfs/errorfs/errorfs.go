// Package errorfs wraps a vfs.FS and makes one chosen operation fail, so
// tests can check what a failed create, write, fsync, close, rename,
// directory fsync, truncate or lock leaves on disk.
//
// A Rule picks the Nth operation (counting from 1) of one kind, or of any
// kind with OpAny. The failing operation returns ErrInjected without
// reaching the wrapped filesystem, except a failing write with TornBytes > 0,
// which first writes that many bytes of its buffer (a torn write). With
// Crash set, every operation after the failing one fails too, as if the
// process had died there: nothing a program does afterwards (closing,
// removing its temporary file) reaches the disk.
//
// To sweep every step of an operation, run it once with the zero Rule, which
// injects nothing, read Count, then run it again with N = 1 .. Count.
package errorfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/strata-db/strata/go/vfs"
)

// ErrInjected is returned by every injected failure.
var ErrInjected = errors.New("errorfs: injected error")

// Op is a kind of filesystem operation.
type Op int

// Operation kinds. Write covers both Write and WriteAt; Stat covers FS.Stat
// and File.Stat; Remove covers Remove and RemoveAll; Close covers closing a
// file and releasing a lock. The values are stable: new kinds are appended.
const (
	OpAny Op = iota
	OpCreate
	OpOpen
	OpWrite
	OpRead
	OpSync
	OpClose
	OpRename
	OpRemove
	OpSyncDir
	OpStat
	OpMkdir
	OpReadDir
	OpTruncate
	OpLock
	numOps
)

var opNames = [numOps]string{"any", "create", "open", "write", "read", "sync", "close", "rename", "remove", "syncdir", "stat", "mkdir", "readdir", "truncate", "lock"}

func (op Op) String() string {
	if op < 0 || op >= numOps {
		return fmt.Sprintf("Op(%d)", int(op))
	}
	return opNames[op]
}

// Rule says which operation fails and how. The zero Rule never fails.
type Rule struct {
	Op Op  // kind of operation to fail; OpAny counts every operation
	N  int // fail the Nth operation of kind Op, counting from 1; 0 never fails
	// TornBytes, for a failing write, is how many bytes of its buffer
	// reach the file before the error (capped at the buffer's length).
	TornBytes int
	// Crash makes every operation after the failing one fail as well.
	Crash bool
	// Persist makes every later operation of kind Op fail as well, until
	// SetRule replaces the rule, while other kinds go on working: a full
	// disk (Op: OpWrite) or a read-only one, that an operator later fixes.
	Persist bool
	// Err, if set, is wrapped beside ErrInjected in every injected error
	// (syscall.ENOSPC for a full disk), for code that tells causes apart.
	Err error
}

// FS is a vfs.FS that injects the failure described by its Rule.
type FS struct {
	inner vfs.FS
	rule  Rule

	mu       sync.Mutex
	counts   [numOps]int
	injected bool
}

// New wraps inner.
func New(inner vfs.FS, rule Rule) *FS { return &FS{inner: inner, rule: rule} }

// SetRule replaces the rule and forgets any injected failure, keeping the
// operation counts: a test can open something through fs, read Count, and
// then aim a failure at a later operation.
func (fs *FS) SetRule(rule Rule) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rule, fs.injected = rule, false
}

// Count reports how many operations of kind op have been attempted (OpAny:
// of all kinds), including failed ones.
func (fs *FS) Count(op Op) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.counts[op]
}

// Injected reports whether the rule's failure has happened.
func (fs *FS) Injected() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.injected
}

// step counts one operation and reports whether it must fail, and whether it
// is the operation the rule picked (as opposed to one after a crash).
func (fs *FS) step(op Op) (fail, picked bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.counts[OpAny]++
	fs.counts[op]++
	if fs.injected {
		if fs.rule.Persist && (fs.rule.Op == OpAny || fs.rule.Op == op) {
			return true, false
		}
		return fs.rule.Crash, false
	}
	if fs.rule.N > 0 && fs.counts[fs.rule.Op] == fs.rule.N && (fs.rule.Op == OpAny || fs.rule.Op == op) {
		fs.injected = true
		return true, true
	}
	return false, false
}

func (fs *FS) fail(op Op, name string) error {
	return &os.PathError{Op: op.String(), Path: name, Err: fs.injectedErr()}
}

// injectedErr is ErrInjected, with the rule's Err beside it if it has one.
func (fs *FS) injectedErr() error {
	fs.mu.Lock()
	cause := fs.rule.Err
	fs.mu.Unlock()
	if cause == nil {
		return ErrInjected
	}
	return fmt.Errorf("%w: %w", ErrInjected, cause)
}

// Create implements vfs.FS.
func (fs *FS) Create(name string) (vfs.File, error) {
	if fail, _ := fs.step(OpCreate); fail {
		return nil, fs.fail(OpCreate, name)
	}
	f, err := fs.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &file{fs: fs, inner: f, name: name}, nil
}

// Open implements vfs.FS.
func (fs *FS) Open(name string) (vfs.File, error) {
	if fail, _ := fs.step(OpOpen); fail {
		return nil, fs.fail(OpOpen, name)
	}
	f, err := fs.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &file{fs: fs, inner: f, name: name}, nil
}

// Rename implements vfs.FS.
func (fs *FS) Rename(oldname, newname string) error {
	if fail, _ := fs.step(OpRename); fail {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.injectedErr()}
	}
	return fs.inner.Rename(oldname, newname)
}

// Remove implements vfs.FS.
func (fs *FS) Remove(name string) error {
	if fail, _ := fs.step(OpRemove); fail {
		return fs.fail(OpRemove, name)
	}
	return fs.inner.Remove(name)
}

// SyncDir implements vfs.FS.
func (fs *FS) SyncDir(dir string) error {
	if fail, _ := fs.step(OpSyncDir); fail {
		return fs.fail(OpSyncDir, dir)
	}
	return fs.inner.SyncDir(dir)
}

// Stat implements vfs.FS.
func (fs *FS) Stat(name string) (os.FileInfo, error) {
	if fail, _ := fs.step(OpStat); fail {
		return nil, fs.fail(OpStat, name)
	}
	return fs.inner.Stat(name)
}

// MkdirAll implements vfs.FS.
func (fs *FS) MkdirAll(dir string) error {
	if fail, _ := fs.step(OpMkdir); fail {
		return fs.fail(OpMkdir, dir)
	}
	return fs.inner.MkdirAll(dir)
}

// ReadDir implements vfs.FS.
func (fs *FS) ReadDir(dir string) ([]string, error) {
	if fail, _ := fs.step(OpReadDir); fail {
		return nil, fs.fail(OpReadDir, dir)
	}
	return fs.inner.ReadDir(dir)
}

// RemoveAll implements vfs.FS; it counts as one OpRemove.
func (fs *FS) RemoveAll(path string) error {
	if fail, _ := fs.step(OpRemove); fail {
		return fs.fail(OpRemove, path)
	}
	return fs.inner.RemoveAll(path)
}

// Truncate implements vfs.FS.
func (fs *FS) Truncate(name string, size int64) error {
	if fail, _ := fs.step(OpTruncate); fail {
		return fs.fail(OpTruncate, name)
	}
	return fs.inner.Truncate(name, size)
}

// Lock implements vfs.FS. Releasing the lock counts as an OpClose.
func (fs *FS) Lock(name string) (io.Closer, error) {
	if fail, _ := fs.step(OpLock); fail {
		return nil, fs.fail(OpLock, name)
	}
	l, err := fs.inner.Lock(name)
	if err != nil {
		return nil, err
	}
	return &lock{fs: fs, inner: l, name: name}, nil
}

type lock struct {
	fs    *FS
	inner io.Closer
	name  string
}

// Close releases the lock even when it reports a failure, as a dying
// process would, so that a test can take the lock again.
func (l *lock) Close() error {
	if fail, _ := l.fs.step(OpClose); fail {
		l.inner.Close()
		return l.fs.fail(OpClose, l.name)
	}
	return l.inner.Close()
}

type file struct {
	fs    *FS
	inner vfs.File
	name  string
}

func (f *file) Write(p []byte) (int, error) {
	return f.write(p, func(b []byte) (int, error) { return f.inner.Write(b) })
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	return f.write(p, func(b []byte) (int, error) { return f.inner.WriteAt(b, off) })
}

func (f *file) write(p []byte, do func([]byte) (int, error)) (int, error) {
	fail, picked := f.fs.step(OpWrite)
	if !fail {
		return do(p)
	}
	n := 0
	if picked && f.fs.rule.TornBytes > 0 {
		n, _ = do(p[:min(f.fs.rule.TornBytes, len(p))])
	}
	return n, f.fs.fail(OpWrite, f.name)
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if fail, _ := f.fs.step(OpRead); fail {
		return 0, f.fs.fail(OpRead, f.name)
	}
	return f.inner.ReadAt(p, off)
}

func (f *file) Sync() error {
	if fail, _ := f.fs.step(OpSync); fail {
		return f.fs.fail(OpSync, f.name)
	}
	return f.inner.Sync()
}

// Close releases the descriptor even when it reports a failure, as close(2)
// does, so that injected failures do not leak descriptors in tests.
func (f *file) Close() error {
	if fail, _ := f.fs.step(OpClose); fail {
		f.inner.Close()
		return f.fs.fail(OpClose, f.name)
	}
	return f.inner.Close()
}

func (f *file) Stat() (os.FileInfo, error) {
	if fail, _ := f.fs.step(OpStat); fail {
		return nil, f.fs.fail(OpStat, f.name)
	}
	return f.inner.Stat()
}

func (f *file) Fd() uintptr { return f.inner.Fd() }
