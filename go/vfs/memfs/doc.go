// Package memfs is an in-memory vfs.FS that remembers what has reached
// "stable storage", so that crash tests can cut the power at any point and
// look at what is left.
//
// # Durability model
//
// memfs keeps two states of everything, as a POSIX filesystem on a disk
// with a volatile write cache does:
//
//	file:       current contents      synced contents (as of the last File.Sync or FS.Truncate)
//	directory:  current entries       synced entries  (as of the last FS.SyncDir of it)
//
// Reads always see the current state. Every change that is not yet synced
// is also appended, in order, to a list of pending operations:
//
//	Write / WriteAt         one OpWrite per call (or per WriteUnit piece, see Options)
//	Create, Lock (new file) OpCreate in the parent directory
//	MkdirAll                OpMkdir in the parent of each new directory
//	Remove, RemoveAll       OpRemove in the parent (RemoveAll: one per removed entry, children first)
//	Rename in one directory OpRename, atomic: after a crash the name is either old or new
//	Rename across two       OpRenameIn (new directory) then OpRenameOut (old directory)
//
// File.Sync makes the file's contents durable and drops its pending writes
// from the list; FS.Truncate does the same after resizing (vfs promises a
// durable truncate). FS.SyncDir makes the directory's entries durable and
// drops its pending entry changes. A file's contents and its name are
// independent, as on a real filesystem: a file that was written and
// fsynced but whose directory was never fsynced vanishes in a crash, and a
// name made durable by SyncDir over a file whose writes were never fsynced
// survives with the file's synced (often empty) contents.
//
// # Crashes
//
// Crash(keep) is a power loss: it applies to the synced state the pending
// operations i (indexes into Pending) for which keep(i) is true, in order,
// throws the rest away, and makes the result the current state. Keeping a
// prefix of the list (KeepPrefix(n), n = 0 .. len(Pending())) is what a disk
// that persists writes in order can leave; keeping an arbitrary subset
// models one that reorders them. A nil keep drops everything pending.
// CrashClone does the same into a new FS and leaves the receiver as it was,
// so a test can try every prefix from one recorded run.
//
// After Crash, handles opened before it (files and locks) fail with an error
// wrapping ErrCrashed, as the process that held them would be gone, and all
// locks are released.
//
// # Limits
//
// File.Fd returns ^uintptr(0): memfs has no file descriptors, so code that
// memory-maps files (indexfile.ReadOptions.MmapTags) cannot run on it.
// Open of a directory fails with EISDIR. There are no hard links,
// permissions or modification times. Paths are slash-separated and
// resolved from one root: "a/b", "/a/b" and "/a/./b" name the same file.
// Locks work within the FS value only.
package memfs
