package collection

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/indexfile"
)

var (
	// ErrInvalid marks bad input: nothing was written and nothing changed.
	// It wraps batch.ErrInvalid; test input errors with
	// errors.Is(err, batch.ErrInvalid), which every input error of the
	// engine (shapes, ids, documents, filters) matches.
	ErrInvalid = fmt.Errorf("collection: %w", batch.ErrInvalid)
	// ErrNotFound marks ids or collections that do not exist.
	ErrNotFound = errkind.New(errkind.NotFound, "collection: not found")
	// ErrExists marks a Create over an existing collection.
	ErrExists = errkind.New(errkind.Exists, "collection: already exists")
	// ErrCorrupt marks damaged files: a WAL record in the middle of the log,
	// a snapshot or CURRENT. It wraps indexfile.ErrCorrupt.
	ErrCorrupt = fmt.Errorf("collection: %w", indexfile.ErrCorrupt)
	// ErrFailed marks a collection that refuses writes because a write,
	// fsync or checkpoint failed: what the disk holds is no longer known,
	// so it must be closed and reopened (which recovers from the log).
	ErrFailed = errkind.New(errkind.Failed, "collection: failed, reopen to recover")
	// ErrClosed marks calls on a closed collection, every method but Close,
	// Dir and Options. Its kind is errkind.Closed, not Invalid: the call
	// was well formed, the collection is gone.
	ErrClosed = errkind.New(errkind.Closed, "collection: the collection is closed")
	// ErrArchive marks a snapshot archive that Restore refuses (archive.go):
	// not an archive of this format, a version this build does not read,
	// an entry out of place, a size or CRC that does not match. Its kind
	// is Invalid: the archive is the caller's input, and nothing was
	// written. A damaged file inside it matches ErrCorrupt too.
	ErrArchive = errkind.New(errkind.Invalid, "collection: not a valid snapshot archive")
	// ErrLocked marks a collection already open in this or another process.
	ErrLocked = errkind.New(errkind.Locked, "collection: locked")
)
