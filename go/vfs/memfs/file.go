package memfs

import (
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"time"
)

// file is an open handle. Create opens read-write with the write offset at
// 0; Open opens read-only.
type file struct {
	fs       *FS
	n        *node
	name     string
	gen      uint64
	writable bool
	offset   int64 // for Write
	closed   bool
}

// usable checks the handle can be used. The caller holds f.fs.mu.
func (f *file) usable(op string) error {
	if f.gen != f.fs.gen {
		return pathErr(op, f.name, ErrCrashed)
	}
	if f.closed {
		return pathErr(op, f.name, iofs.ErrClosed)
	}
	return nil
}

func (f *file) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	n, err := f.writeAt(p, f.offset)
	f.offset += int64(n)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.writeAt(p, off)
}

// writeAt changes the current contents and records the pending write(s).
// The caller holds f.fs.mu.
func (f *file) writeAt(p []byte, off int64) (int, error) {
	if err := f.usable("write"); err != nil {
		return 0, err
	}
	if !f.writable {
		return 0, pathErr("write", f.name, syscall.EBADF)
	}
	if off < 0 {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	if len(p) == 0 {
		return 0, nil
	}
	f.n.data = writeAt(f.n.data, p, off)
	unit := int64(f.fs.opts.WriteUnit)
	for start := int64(0); start < int64(len(p)); {
		end := int64(len(p))
		if unit > 0 {
			end = min(end, (off+start)/unit*unit+unit-off)
		}
		f.fs.record(pendingOp{
			desc: Op{Kind: OpWrite, Path: f.name, Offset: off + start, Len: int(end - start)},
			node: f.n,
			data: clone(p[start:end]),
		})
		start = end
	}
	return len(p), nil
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("read"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, syscall.EINVAL)
	}
	if off >= int64(len(f.n.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Sync makes the file's current contents durable.
func (f *file) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("sync"); err != nil {
		return err
	}
	f.n.sync()
	f.fs.forget(f.n)
	return nil
}

func (f *file) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("close"); err != nil {
		return err
	}
	f.closed = true
	return nil
}

func (f *file) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("stat"); err != nil {
		return nil, err
	}
	return f.n.info(f.name), nil
}

// Fd reports that there is no descriptor: memfs files cannot be mapped.
func (f *file) Fd() uintptr { return ^uintptr(0) }

// sync makes the node's current contents durable, reusing the synced
// buffer. The caller holds the FS's lock.
func (n *node) sync() { n.synced = append(n.synced[:0], n.data...) }

// info describes n under name. The caller holds the FS's lock.
func (n *node) info(name string) os.FileInfo {
	fi := fileInfo{name: path.Base(filepath.ToSlash(name)), mode: 0o644}
	if n.dir {
		fi.mode = iofs.ModeDir | 0o755
	} else {
		fi.size = int64(len(n.data))
	}
	return fi
}

type fileInfo struct {
	name string
	size int64
	mode iofs.FileMode
}

func (fi fileInfo) Name() string        { return fi.name }
func (fi fileInfo) Size() int64         { return fi.size }
func (fi fileInfo) Mode() iofs.FileMode { return fi.mode }
func (fi fileInfo) ModTime() time.Time  { return time.Time{} }
func (fi fileInfo) IsDir() bool         { return fi.mode.IsDir() }
func (fi fileInfo) Sys() any            { return nil }
