package wal

import (
	"errors"
	"fmt"

	"github.com/strata-db/strata/go/batch"
)

var (
	// ErrCorrupt marks a log that is damaged somewhere other than a torn
	// tail, or that lacks records it must hold. The message names the
	// file and the offset.
	ErrCorrupt = errors.New("wal: corrupt record")
	// ErrVersion marks a segment written in a format version this build
	// cannot read. Replay never repairs it.
	ErrVersion = errors.New("wal: unsupported format version")
	// ErrPoisoned marks a Writer that failed to write or fsync earlier
	// and refuses all further calls: after a failed fsync the kernel may
	// have dropped the unwritten pages, so retrying could report success
	// for data that is gone. The error also wraps the original cause.
	ErrPoisoned = errors.New("wal: writer poisoned by an earlier failure")
	// ErrClosed marks a call on a closed Writer.
	ErrClosed = errors.New("wal: writer closed")
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
