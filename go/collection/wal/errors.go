package wal

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
)

var (
	// ErrCorrupt marks a log that is damaged somewhere other than a torn
	// tail, or that lacks records it must hold. The message names the
	// file and the offset.
	ErrCorrupt = errkind.New(errkind.Corrupt, "wal: corrupt record")
	// ErrVersion marks a segment written in a format version this build
	// cannot read. Replay never repairs it. Its kind is errkind.Corrupt.
	ErrVersion = errkind.New(errkind.Corrupt, "wal: unsupported format version")
	// ErrPoisoned marks a Writer that failed to write or fsync earlier
	// and refuses all further calls: after a failed fsync the kernel may
	// have dropped the unwritten pages, so retrying could report success
	// for data that is gone. The error also wraps the original cause; its
	// kind is errkind.Failed.
	ErrPoisoned = errkind.New(errkind.Failed, "wal: writer poisoned by an earlier failure")
	// ErrClosed marks a call on a closed Writer.
	ErrClosed = errkind.New(errkind.Closed, "wal: writer closed")
	// ErrInvalid marks a caller's mistake: a payload over MaxPayload, a
	// sequence number of 0, a nextSeq at or before records already in the
	// log. It wraps batch.ErrInvalid.
	ErrInvalid = fmt.Errorf("wal: %w", batch.ErrInvalid)
)

// corruptAt builds ErrCorrupt errors in the one shape callers and tests
// rely on: which file, which offset, what is wrong.
func corruptAt(path string, off int64, format string, args ...any) error {
	return fmt.Errorf("%w: in file %q at offset %d: %s", ErrCorrupt, path, off, fmt.Sprintf(format, args...))
}
