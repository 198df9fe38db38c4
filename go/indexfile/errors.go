package indexfile

import (
	"errors"
	"fmt"

	"github.com/strata-db/strata/go/batch"
)

var (
	// ErrCorrupt marks a file that is truncated, damaged or not an index
	// file. The message names the header, the section table or the
	// section, and the offset.
	ErrCorrupt = errors.New("indexfile: corrupt file")
	// ErrVersion marks a file written in a format version this build
	// cannot read.
	ErrVersion = errors.New("indexfile: unsupported format version")
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
