package memfs

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/strata-db/strata/go/vfs"
)

// Options configures an FS.
type Options struct {
	// WriteUnit, if positive, records each write as pending operations of
	// at most WriteUnit bytes, split at file offsets that are multiples of
	// WriteUnit, so that a crash can keep part of a write (a torn write)
	// at that granularity, as a disk tears at sector boundaries. Zero
	// records one operation per write call.
	WriteUnit int
}

// FS is an in-memory vfs.FS; see the package doc. It is safe for
// concurrent use.
type FS struct {
	opts Options

	mu      sync.Mutex
	root    *node
	pending []pendingOp
	gen     uint64 // bumped by Crash; older handles fail
	locks   map[*node]bool
}

// node is a file or a directory (an inode).
type node struct {
	dir bool
	// files
	data   []byte
	synced []byte
	// directories
	entries       map[string]*node
	syncedEntries map[string]*node
}

var _ vfs.FS = (*FS)(nil)

// New returns an empty filesystem holding only its root directory.
func New() *FS { return NewWithOptions(Options{}) }

// NewWithOptions returns an empty filesystem configured by opts.
func NewWithOptions(opts Options) *FS {
	return &FS{
		opts:  opts,
		root:  &node{dir: true, entries: map[string]*node{}, syncedEntries: map[string]*node{}},
		locks: make(map[*node]bool),
	}
}

func pathErr(op, name string, err error) error { return &os.PathError{Op: op, Path: name, Err: err} }

// split cleans name into its directory components and base name; the root
// has no components.
func split(name string) []string {
	clean := path.Clean("/" + filepath.ToSlash(name))
	if clean == "/" {
		return nil
	}
	return strings.Split(clean[1:], "/")
}

// walk returns the directory holding the last component of parts. The
// caller holds fs.mu.
func (fs *FS) walk(op, name string, parts []string) (*node, error) {
	dir := fs.root
	for _, p := range parts[:len(parts)-1] {
		next, ok := dir.entries[p]
		if !ok {
			return nil, pathErr(op, name, iofs.ErrNotExist)
		}
		if !next.dir {
			return nil, pathErr(op, name, syscall.ENOTDIR)
		}
		dir = next
	}
	return dir, nil
}

// lookup resolves name to its parent directory, base name and node (nil if
// the base does not exist). The root has no parent. The caller holds fs.mu.
func (fs *FS) lookup(op, name string) (parent *node, base string, n *node, err error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", fs.root, nil
	}
	parent, err = fs.walk(op, name, parts)
	if err != nil {
		return nil, "", nil, err
	}
	base = parts[len(parts)-1]
	return parent, base, parent.entries[base], nil
}

// link points dir's entry base at child (nil removes it) and records the
// pending change. The caller holds fs.mu.
func (fs *FS) link(dir *node, base string, child *node, desc Op) {
	if child == nil {
		delete(dir.entries, base)
	} else {
		dir.entries[base] = child
	}
	fs.record(pendingOp{desc: desc, node: dir, set: []entryChange{{base, child}}})
}

// Create implements vfs.FS.
func (fs *FS) Create(name string) (vfs.File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	parent, base, n, err := fs.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n != nil {
		return nil, pathErr("open", name, iofs.ErrExist)
	}
	n = &node{}
	fs.link(parent, base, n, Op{Kind: OpCreate, Path: name})
	return &file{fs: fs, n: n, name: name, gen: fs.gen, writable: true}, nil
}

// Open implements vfs.FS.
func (fs *FS) Open(name string) (vfs.File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, _, n, err := fs.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, pathErr("open", name, iofs.ErrNotExist)
	}
	if n.dir {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	return &file{fs: fs, n: n, name: name, gen: fs.gen}, nil
}

// Rename implements vfs.FS. Within one directory the change is one atomic
// pending operation; across directories it is two (see the package doc).
func (fs *FS) Rename(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	linkErr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	oldParent, oldBase, n, err := fs.lookup("rename", oldname)
	if err != nil {
		return linkErr(err)
	}
	if n == nil {
		return linkErr(iofs.ErrNotExist)
	}
	if oldParent == nil {
		return linkErr(syscall.EBUSY) // the root
	}
	newParent, newBase, target, err := fs.lookup("rename", newname)
	if err != nil {
		return linkErr(err)
	}
	if newParent == nil {
		return linkErr(syscall.EBUSY)
	}
	if target == n {
		return nil
	}
	if target != nil {
		switch {
		case n.dir && !target.dir:
			return linkErr(syscall.ENOTDIR)
		case !n.dir && target.dir:
			return linkErr(syscall.EISDIR)
		case target.dir && len(target.entries) > 0:
			return linkErr(syscall.ENOTEMPTY)
		}
	}
	if n.dir && fs.isUnder(newParent, n) {
		return linkErr(syscall.EINVAL) // into its own subtree
	}
	if oldParent == newParent {
		delete(oldParent.entries, oldBase)
		oldParent.entries[newBase] = n
		fs.record(pendingOp{
			desc: Op{Kind: OpRename, Path: oldname, NewPath: newname},
			node: oldParent,
			set:  []entryChange{{oldBase, nil}, {newBase, n}},
		})
		return nil
	}
	fs.link(newParent, newBase, n, Op{Kind: OpRenameIn, Path: oldname, NewPath: newname})
	fs.link(oldParent, oldBase, nil, Op{Kind: OpRenameOut, Path: oldname, NewPath: newname})
	return nil
}

// isUnder reports whether dir is n or lies below it. The caller holds fs.mu.
func (fs *FS) isUnder(dir, n *node) bool {
	if dir == n {
		return true
	}
	for _, child := range n.entries {
		if child.dir && fs.isUnder(dir, child) {
			return true
		}
	}
	return false
}

// Remove implements vfs.FS.
func (fs *FS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	parent, base, n, err := fs.lookup("remove", name)
	if err != nil {
		return err
	}
	switch {
	case n == nil:
		return pathErr("remove", name, iofs.ErrNotExist)
	case parent == nil:
		return pathErr("remove", name, syscall.EBUSY)
	case n.dir && len(n.entries) > 0:
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	fs.link(parent, base, nil, Op{Kind: OpRemove, Path: name})
	return nil
}

// RemoveAll implements vfs.FS. Entries are unlinked children first, each as
// its own pending operation, as os.RemoveAll does.
func (fs *FS) RemoveAll(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	parent, base, n, err := fs.lookup("unlinkat", name)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil
		}
		return err
	}
	if n == nil {
		return nil
	}
	if parent == nil {
		return pathErr("unlinkat", name, syscall.EBUSY)
	}
	fs.removeTree(n, path.Clean("/"+filepath.ToSlash(name)))
	fs.link(parent, base, nil, Op{Kind: OpRemove, Path: name})
	return nil
}

// removeTree unlinks everything below the directory n. The caller holds
// fs.mu.
func (fs *FS) removeTree(n *node, name string) {
	if !n.dir {
		return
	}
	for _, base := range slices.Sorted(maps.Keys(n.entries)) {
		child := n.entries[base]
		childName := path.Join(name, base)
		fs.removeTree(child, childName)
		fs.link(n, base, nil, Op{Kind: OpRemove, Path: childName})
	}
}

// SyncDir implements vfs.FS: dir's current entries become durable.
func (fs *FS) SyncDir(dir string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, _, n, err := fs.lookup("sync", dir)
	if err != nil {
		return err
	}
	if n == nil {
		return pathErr("open", dir, iofs.ErrNotExist)
	}
	if !n.dir {
		return pathErr("sync", dir, syscall.ENOTDIR)
	}
	n.syncedEntries = cloneEntries(n.entries)
	fs.forget(n)
	return nil
}

// Stat implements vfs.FS.
func (fs *FS) Stat(name string) (os.FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, _, n, err := fs.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, pathErr("stat", name, iofs.ErrNotExist)
	}
	return n.info(name), nil
}

// MkdirAll implements vfs.FS.
func (fs *FS) MkdirAll(dir string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	cur, walked := fs.root, "/"
	for _, p := range split(dir) {
		walked = path.Join(walked, p)
		next, ok := cur.entries[p]
		if !ok {
			next = &node{dir: true, entries: map[string]*node{}, syncedEntries: map[string]*node{}}
			fs.link(cur, p, next, Op{Kind: OpMkdir, Path: walked})
		} else if !next.dir {
			return pathErr("mkdir", walked, syscall.ENOTDIR)
		}
		cur = next
	}
	return nil
}

// ReadDir implements vfs.FS.
func (fs *FS) ReadDir(dir string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, _, n, err := fs.lookup("open", dir)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, pathErr("open", dir, iofs.ErrNotExist)
	}
	if !n.dir {
		return nil, pathErr("readdirent", dir, syscall.ENOTDIR)
	}
	return slices.Sorted(maps.Keys(n.entries)), nil
}

// Truncate implements vfs.FS: the file is resized and synced, so all its
// contents, including earlier unsynced writes, become durable.
func (fs *FS) Truncate(name string, size int64) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, _, n, err := fs.lookup("truncate", name)
	if err != nil {
		return err
	}
	switch {
	case n == nil:
		return pathErr("truncate", name, iofs.ErrNotExist)
	case n.dir:
		return pathErr("truncate", name, syscall.EISDIR)
	case size < 0:
		return pathErr("truncate", name, syscall.EINVAL)
	}
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
	n.sync()
	fs.forget(n)
	return nil
}

// Lock implements vfs.FS. Locks are held per file within this FS, and all
// are released by Crash.
func (fs *FS) Lock(name string) (io.Closer, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	parent, base, n, err := fs.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n == nil {
		n = &node{}
		fs.link(parent, base, n, Op{Kind: OpCreate, Path: name})
	} else if n.dir {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	if fs.locks[n] {
		return nil, fmt.Errorf("%w: %q is locked by another Lock call", vfs.ErrLocked, name)
	}
	fs.locks[n] = true
	return &lock{fs: fs, n: n, name: name, gen: fs.gen}, nil
}

type lock struct {
	fs       *FS
	n        *node
	name     string
	gen      uint64
	released bool
}

func (l *lock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	if l.gen != l.fs.gen {
		return pathErr("close", l.name, ErrCrashed)
	}
	if l.released {
		return pathErr("close", l.name, iofs.ErrClosed)
	}
	l.released = true
	delete(l.fs.locks, l.n)
	return nil
}
