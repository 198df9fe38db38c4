package indexfile

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
)

var (
	// ErrCorrupt marks a file that is truncated, damaged or not an index
	// file. The message names the header, the section table or the
	// section, and the offset.
	ErrCorrupt = errkind.New(errkind.Corrupt, "indexfile: corrupt file")
	// ErrVersion marks a file written in a format version this build
	// cannot read. Its kind is errkind.Corrupt: this build cannot use it.
	ErrVersion = errkind.New(errkind.Corrupt, "indexfile: unsupported format version")
	// ErrInvalid marks a caller's mistake: duplicate tags passed to Write,
	// a byte slice that cannot be viewed as the asked-for type. It wraps
	// batch.ErrInvalid.
	ErrInvalid = fmt.Errorf("indexfile: %w", batch.ErrInvalid)
)

// corruptHeader and corruptSection build ErrCorrupt errors in the one shape
// every caller and test relies on: what, where, why.
func corruptHeader(what string, off uint64, format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, what, off, fmt.Sprintf(format, args...))
}

func corruptSection(tag uint32, off uint64, format string, args ...any) error {
	return fmt.Errorf("%w: section %q at offset %d: %s", ErrCorrupt, TagName(tag), off, fmt.Sprintf(format, args...))
}
