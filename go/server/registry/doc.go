// Package registry holds the collections of a data directory: one
// collection per directory <data>/<name>, opened at start-up, created and
// dropped atomically, and re-opened by itself when it fails. Every byte it
// touches goes through the configured vfs.FS.
//
// # Layout of the data directory
//
//	<data>/<name>/                  a collection (package collection's layout)
//	<data>/.creating-<name>-<hex>/  a create in progress
//	<data>/.dropped-<name>-<hex>/   a drop whose files are being removed
//	<data>/.replaced-<name>-<hex>/  a collection a restore set aside while it switches
//	<data>/.probe-<hex>             a write probe (see Failed collections)
//	<data>/<door>.<what>            a door's state file (qdrant.aliases: package qdrant)
//	<data>/<name>/<door>.<what>     a door's state of one collection (qdrant.payload-schema)
//	<data>/<door>.<what>/           a door's state directory (qdrant.snapshots: package qdrant)
//	<data>/.creating-<name>-<hex>.restoring-<hex>/   a restore's archive being unpacked (Restore)
//
// Names are ^[A-Za-z0-9_-]{1,64}$, so no collection name holds a dot and
// the other kinds can never be mistaken for collections; Open leaves the
// doors' files alone.
//
// # Atomic create and drop
//
// Create builds the collection under a .creating- name, closes it, renames
// the directory to <name> and fsyncs the data directory: until that rename
// is durable no <name> directory exists, and after it the whole collection
// does. Drop closes the collection, takes its lock, renames <name> to a
// .dropped- name, fsyncs the data directory (the drop is then done: the
// name is free) and removes the files. Open finishes what a crash
// interrupted: it removes every .creating- directory (undoing the create,
// which was never acknowledged) and every .dropped- one (finishing the
// drop). It also removes a <name> directory with no CURRENT file that holds
// nothing but what package collection writes (LOCK, wal/, snapshots/,
// segments/): the
// leftover of a create or drop made by an older version, which named the
// final directory from the start. Anything else that is not a collection is
// left alone and logged; Create then refuses the name (ErrExists).
//
// # Restore
//
// Restore unpacks a snapshot archive (collection.Restore: into a
// temporary directory, every file checked) into a .creating- directory:
// a bad archive leaves the old collection as it was. If the name is free
// it renames the new one into place as Create does. If the name is taken
// and replace is set, it switches without ever freeing the name: the
// entry stays taken (hidden) throughout, the old collection is closed and
// renamed aside to a .replaced- name, the new one renamed into place, the
// data dir fsynced and the new one opened; only then is the aside copy
// removed. If a step fails, the old one is renamed back and opened again.
// Open settles a .replaced- directory that a crash left: removed if
// <name> is a collection (the switch was done), renamed back to <name> if
// there is none (the switch undone; the restore was never acknowledged).
//
// # Failed collections
//
// A collection that will not open (corrupt, locked by another process,
// read-only) does not stop the others: it is listed in state StateFailed
// with the error, and Get answers an error matching ErrUnavailable (which
// wraps collection.ErrFailed) until it opens. A collection that fails while
// open (collection.ErrFailed: a full disk, a failed fsync or checkpoint)
// keeps serving reads, refuses writes, and is re-opened, which recovers it
// from its log. Both are retried by themselves: on each tick of
// Options.Ticks (default every Options.MinBackoff) every failed collection
// whose backoff has passed is closed and opened again; each failed attempt
// doubles the wait, up to Options.MaxBackoff. One that failed while open is
// re-opened only once the data directory takes a write again (a probe file,
// .probe-<hex>, written, fsynced and removed): until then it keeps serving
// reads, which a re-open that fails would take away. Reopen does it at
// once, without the probe.
package registry
