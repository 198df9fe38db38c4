package memfs

import "fmt"

// OpKind is a kind of pending (not yet durable) operation.
type OpKind int

// Pending operation kinds; see the package doc for what produces each.
const (
	OpWrite OpKind = iota
	OpCreate
	OpMkdir
	OpRemove
	OpRename
	OpRenameIn
	OpRenameOut
)

var opKindNames = [...]string{"write", "create", "mkdir", "remove", "rename", "rename-in", "rename-out"}

func (k OpKind) String() string {
	if k < 0 || int(k) >= len(opKindNames) {
		return fmt.Sprintf("OpKind(%d)", int(k))
	}
	return opKindNames[k]
}

// Op describes one pending operation, for tests that choose what a crash
// keeps and for their failure messages.
type Op struct {
	Kind OpKind
	// Path is the file written, or the name created, removed or renamed
	// (the old name for renames), as it was at the time of the operation.
	Path string
	// NewPath is the new name of a rename.
	NewPath string
	// Offset and Len locate a write in its file.
	Offset int64
	Len    int
}

func (op Op) String() string {
	switch op.Kind {
	case OpWrite:
		return fmt.Sprintf("write %q [%d, %d)", op.Path, op.Offset, op.Offset+int64(op.Len))
	case OpRename, OpRenameIn, OpRenameOut:
		return fmt.Sprintf("%v %q -> %q", op.Kind, op.Path, op.NewPath)
	default:
		return fmt.Sprintf("%v %q", op.Kind, op.Path)
	}
}

// pendingOp is an Op with what it changes: a write to a file node, or a set
// of entry changes applied atomically to one directory node.
type pendingOp struct {
	desc Op
	node *node
	data []byte        // OpWrite
	set  []entryChange // entry changes, in order
}

// entryChange points name at child, or removes name if child is nil.
type entryChange struct {
	name  string
	child *node
}

// KeepPrefix returns a keep function for Crash that keeps the first n
// pending operations: what a disk that persists writes in order leaves.
func KeepPrefix(n int) func(op int) bool {
	return func(op int) bool { return op < n }
}

// Pending lists the operations that are not yet durable, oldest first.
// Crash's keep function is called with indexes into this list.
func (fs *FS) Pending() []Op {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ops := make([]Op, len(fs.pending))
	for i, p := range fs.pending {
		ops[i] = p.desc
	}
	return ops
}

// record appends a pending operation. The caller holds fs.mu.
func (fs *FS) record(p pendingOp) { fs.pending = append(fs.pending, p) }

// forget drops the pending operations on n, which a sync has made durable.
// The caller holds fs.mu.
func (fs *FS) forget(n *node) {
	kept := fs.pending[:0]
	for _, p := range fs.pending {
		if p.node != n {
			kept = append(kept, p)
		}
	}
	clear(fs.pending[len(kept):])
	fs.pending = kept
}

// Crash simulates a power loss: the synced state plus the pending
// operations for which keep returns true (applied in order) becomes the
// current state, everything else is lost, handles opened before now fail
// with ErrCrashed and locks are released. A nil keep keeps nothing.
func (fs *FS) Crash(keep func(op int) bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.root = fs.crashedRoot(keep)
	fs.pending = nil
	fs.gen++
	fs.locks = make(map[*node]bool)
}

// CrashClone returns what Crash(keep) would leave, as a new FS, and leaves
// the receiver unchanged.
func (fs *FS) CrashClone(keep func(op int) bool) *FS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	clone := NewWithOptions(fs.opts)
	clone.root = fs.crashedRoot(keep)
	return clone
}

// crashedRoot builds a fresh tree from the durable state of every node and
// the kept pending operations. The caller holds fs.mu.
func (fs *FS) crashedRoot(keep func(op int) bool) *node {
	type durable struct {
		data    []byte
		entries map[string]*node
	}
	state := make(map[*node]*durable)
	durableOf := func(n *node) *durable {
		d, ok := state[n]
		if !ok {
			d = &durable{data: clone(n.synced), entries: cloneEntries(n.syncedEntries)}
			state[n] = d
		}
		return d
	}
	for i, p := range fs.pending {
		if keep == nil || !keep(i) {
			continue
		}
		d := durableOf(p.node)
		if p.desc.Kind == OpWrite {
			d.data = writeAt(d.data, p.data, p.desc.Offset)
			continue
		}
		for _, c := range p.set {
			if c.child == nil {
				delete(d.entries, c.name)
			} else {
				d.entries[c.name] = c.child
			}
		}
	}

	// A subset of renames across directories can leave one node under two
	// names (it then behaves as a hard link) or, with directories, a
	// cycle; built guards against both.
	built := make(map[*node]*node)
	ancestors := make(map[*node]bool)
	var build func(n *node) *node
	build = func(n *node) *node {
		if b, ok := built[n]; ok {
			return b
		}
		d := durableOf(n)
		b := &node{dir: n.dir}
		built[n] = b
		if !n.dir {
			b.data, b.synced = d.data, clone(d.data)
			return b
		}
		ancestors[n] = true
		defer delete(ancestors, n)
		b.entries = make(map[string]*node, len(d.entries))
		for name, child := range d.entries {
			if !ancestors[child] {
				b.entries[name] = build(child)
			}
		}
		b.syncedEntries = cloneEntries(b.entries)
		return b
	}
	return build(fs.root)
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

func cloneEntries(m map[string]*node) map[string]*node {
	if m == nil {
		return nil
	}
	c := make(map[string]*node, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// writeAt writes p into b at off, growing b with zeros as a file grows.
func writeAt(b, p []byte, off int64) []byte {
	if end := off + int64(len(p)); end > int64(len(b)) {
		b = append(b, make([]byte, end-int64(len(b)))...)
	}
	copy(b[off:], p)
	return b
}
