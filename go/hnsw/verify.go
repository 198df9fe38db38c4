package hnsw

import (
	"errors"
	"fmt"

	"github.com/strata-db/strata/go/indexfile"
)

// Verify checks the CRCs Load deferred (LoadOptions.DeferCRC), through
// indexfile.File.Verify: pause is called between pieces of 1 MiB and an
// error from it stops the check. A damaged section yields an error
// wrapping indexfile.ErrCorrupt that names the file and the section. It
// is nil for an index with nothing deferred, and errClosed (kind Closed)
// once the index is closed. Close does not wait for a whole Verify, only
// for the piece in hand.
func (x *Index) Verify(pause func() error) error {
	x.closeMu.RLock()
	f, closed := x.file, x.closed
	x.closeMu.RUnlock()
	if closed {
		return errClosed
	}
	if f == nil {
		return nil
	}
	switch err := f.Verify(pause); {
	case errors.Is(err, indexfile.ErrClosed):
		return errClosed
	case err != nil:
		return fmt.Errorf("hnsw: verify: %w", err)
	}
	return nil
}

// Unverified is how many bytes Verify has left to check.
func (x *Index) Unverified() uint64 {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.file == nil {
		return 0
	}
	return x.file.Pending()
}
